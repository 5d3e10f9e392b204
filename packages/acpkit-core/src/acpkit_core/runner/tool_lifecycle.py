"""The tool calls of one turn: one lifecycle, sent once per transition, in order, never backwards.

[`ToolCalls`][acpkit_core.runner.tool_lifecycle.ToolCalls] is owned by the turn (`turn.tool_calls`); every
runner reports its tool calls through it, and the server closes, through it, what a runner left
open. Its transitions:

| call | ACP update |
|---|---|
| `announce` (the model named the tool) | `tool_call` `pending`: title, kind, `rawInput`, locations |
| `announce` again, more arguments (still pending) | `tool_call_update`: title, kind, `rawInput`, locations |
| `start` (the tool runs now) | `tool_call_update` `in_progress` |
| `attach` (a diff, a terminal) | `tool_call_update` with the content so far |
| `finish` | `tool_call_update` `completed` or `failed`: content, `rawOutput` (the status only when `output_hidden`) |
| `close_open` (cancel, error, end of turn) | `tool_call_update` `failed` for every call not finished |

With a [`ToolPresenter`][acpkit_core.runner.tool_presenter.ToolPresenter] (the `tool_presentation` option,
set by the server on every turn), a tool's presentation decides the title, locations and content of
its `tool_call` and how the output of its final update is shown.

A transition that was already made, or would go backwards (`in_progress` after `completed`), is
not sent. `rawInput` and `rawOutput` are always JSON objects on the wire
([`json_object`][acpkit_core.runner.tool_lifecycle.json_object], applied by the emitter to every tool-call
update and to stored transcripts when they are replayed): some clients (Toad) refuse anything else.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from acp.helpers import text_block, tool_content
from acp.schema import FileEditToolCallContent, ToolCallStatus, ToolKind

from .tool_classification import classify_tool, tool_locations, tool_title
from .tool_presentation import ToolPresentation
from .tool_presenter import ToolPresenter
from .types import ToolCallContent

__all__ = [
    "NOT_RUN_TEXT",
    "STOPPED_TEXT",
    "StaticClassifier",
    "ToolCallObserver",
    "ToolCallRecord",
    "ToolCallWire",
    "ToolCalls",
    "ToolClassifier",
    "json_object",
    "parse_args",
    "unwrap_output",
]

NOT_RUN_TEXT = "The user stopped the turn before this tool call ran; the tool did not run."
"""What the model reads, on the next turn, for a call the stopped turn never started (for example one
left at its permission question). Both adapters record it in the framework's history."""

STOPPED_TEXT = "The tool call did not finish: the user stopped the turn before it returned."
"""What the model reads, on the next turn, for a call that was stopped while it ran."""

_RANK: dict[str, int] = {"pending": 0, "in_progress": 1, "completed": 2, "failed": 2}


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


def json_object(value: Any, key: str = "output") -> dict[str, Any] | None:
    """`value` as a JSON object for `rawInput` / `rawOutput`: `None` stays `None`.

    An object with string keys is kept as is (values that are not JSON become their `str`);
    anything else (a string, a number, a list) is wrapped as `{key: value}`.
    """
    if value is None:
        return None
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in cast(Mapping[object, Any], value)):
        mapping = cast(Mapping[str, Any], value)
        try:
            json.dumps(mapping)
        except (TypeError, ValueError):
            return {k: _jsonable(v) for k, v in mapping.items()}
        return dict(mapping)
    return {key: _jsonable(value)}


def unwrap_output(raw: Any) -> Any:
    """The inverse of [`json_object`][acpkit_core.runner.tool_lifecycle.json_object] for a `rawOutput` it wrapped.

    `{"output": value}` (the only key) gives `value`; anything else is returned as is.
    """
    if isinstance(raw, Mapping):
        mapping = cast(Mapping[str, Any], raw)
        if len(mapping) == 1 and "output" in mapping:
            return mapping["output"]
    return cast(Any, raw)


def parse_args(raw: str | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Arguments as a dict: a mapping as is, a complete JSON object string parsed, else `None`."""
    if raw is None:
        return None
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        if not raw.strip():
            return None
        value = json.loads(raw)
    except ValueError:
        return None
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


class ToolClassifier(Protocol):
    """Tool kinds and locations (satisfied by `acpkit_core.runner.protocols.Turn`)."""

    def classify_tool(self, name: str, args: Mapping[str, Any] | None = None) -> ToolKind:
        """The ACP kind of a tool."""
        ...

    def tool_locations(self, args: Mapping[str, Any] | None) -> list[tuple[str, int | None]]:
        """Locations `(absolute path, line)` from path-like arguments."""
        ...


@dataclass(frozen=True, slots=True)
class StaticClassifier:
    """Tool kinds and locations without a server turn: the core classifier with fixed overrides."""

    cwd: str
    """Directory relative paths are resolved against."""
    overrides: Mapping[str, ToolKind] | None = None
    """Per-tool kind overrides."""

    def classify_tool(self, name: str, args: Mapping[str, Any] | None = None) -> ToolKind:
        """The ACP kind of a tool."""
        return classify_tool(name, args, self.overrides)

    def tool_locations(self, args: Mapping[str, Any] | None) -> list[tuple[str, int | None]]:
        """Locations from path-like arguments (virtual paths outside `cwd` left out, as in a server turn)."""
        return tool_locations(args, self.cwd, roots=(self.cwd,))


@dataclass(kw_only=True)
class ToolCallRecord:
    """What the turn knows about one tool call."""

    id: str
    """The tool call id."""
    name: str
    """The tool's name."""
    args: dict[str, Any] | None = None
    """The arguments, once they parse."""
    kind: ToolKind = "other"
    """The ACP kind."""
    title: str = ""
    """The title shown by the client."""
    status: ToolCallStatus = "pending"
    """The last status sent."""
    content: list[ToolCallContent] = field(default_factory=list[ToolCallContent])
    """Content attached while running (a diff, a terminal), kept in the final update."""
    hidden: bool = False
    """Not shown as a tool call (a tool projected otherwise, like the plan tool): nothing is sent."""
    partial: bool = False
    """Announced while the model was still streaming the arguments."""
    started: bool = False
    """The tool began to run (`start` was called); a refused or cancelled call never did."""
    output_hidden: bool = False
    """The finishing update carries the status only: no tool output as content, no `rawOutput`
    (set by a runner whose user asked to keep tool results out of the updates)."""
    locations: list[tuple[str, int | None]] = field(default_factory=list[tuple[str, int | None]])
    """The locations sent with the call."""

    @property
    def finished(self) -> bool:
        """True once `completed` or `failed`."""
        return _RANK[self.status] >= 2


class ToolCallWire(Protocol):
    """Sends the two tool-call updates as given (the turn's emitter; `rawInput`/`rawOutput` made objects there)."""

    async def send_tool_call(
        self,
        tool_call_id: str,
        *,
        title: str,
        kind: ToolKind = "other",
        status: ToolCallStatus = "pending",
        raw_input: Any = None,
        locations: Sequence[tuple[str, int | None]] = (),
        content: Sequence[ToolCallContent] = (),
        meta: Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        """Send `tool_call` (`name`: the tool's, sent where the client negotiated `toolCallName`)."""
        ...

    async def send_tool_call_update(
        self,
        tool_call_id: str,
        *,
        status: ToolCallStatus | None = None,
        title: str | None = None,
        kind: ToolKind | None = None,
        raw_input: Any = None,
        raw_output: Any = None,
        locations: Sequence[tuple[str, int | None]] | None = None,
        content: Sequence[ToolCallContent] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Send `tool_call_update`."""
        ...


class ToolCallObserver(Protocol):
    """Told of each tool call's life (the server's telemetry: a span per tool call)."""

    def tool_call_opened(self, record: ToolCallRecord) -> None:
        """A call was announced."""
        ...

    def tool_call_started(self, record: ToolCallRecord) -> None:
        """Its tool began to run."""
        ...

    def tool_call_finished(self, record: ToolCallRecord) -> None:
        """It reached `completed` or `failed`."""
        ...


class ToolCalls:
    """The tool calls of one turn, reported through the turn's emitter (see the module docs)."""

    def __init__(self, emit: ToolCallWire, classifier: ToolClassifier | None = None, *, cwd: str | None = None) -> None:
        """Report through `emit`; kinds and locations from `classifier` (the turn), titles relative to `cwd`."""
        self._emit = emit
        self.classifier: ToolClassifier = classifier if classifier is not None else StaticClassifier(cwd or ".")
        """Tool kinds and locations."""
        self.cwd = cwd
        """The session's working directory (paths in titles are shown relative to it)."""
        self.calls: dict[str, ToolCallRecord] = {}
        """Every tool call of the turn, by id, in the order they were announced."""
        self.presenter: ToolPresenter | None = None
        """Per-tool presentation (the `tool_presentation` option); `None`: the defaults."""
        self.observer: ToolCallObserver | None = None
        """Told of each call's life (set by the server when telemetry is on)."""
        self._lock = asyncio.Lock()

    # --- queries ----------------------------------------------------------------------------------

    def get(self, tool_call_id: str) -> ToolCallRecord | None:
        """The record of a call, if announced."""
        return self.calls.get(tool_call_id)

    def known(self, tool_call_id: str) -> bool:
        """True when this call was announced."""
        return tool_call_id in self.calls

    def open_ids(self) -> list[str]:
        """Ids of the shown calls that did not finish."""
        return [i for i, c in self.calls.items() if not c.finished and not c.hidden]

    def unstarted_ids(self) -> list[str]:
        """Ids of the calls of this turn whose tool never began to run (refused, cancelled, never reached)."""
        return [i for i, c in self.calls.items() if not c.started and not c.hidden]

    def title_for(self, name: str, args: Mapping[str, Any] | None = None) -> str:
        """The title a call of `name` with `args` is shown with (its presentation's, else the default).

        A permission question about a call uses it, so the question and the card agree.
        """
        title = None
        presentation = self._presentation(name)
        if presentation is not None and self.presenter is not None:
            title = self.presenter.title(presentation, name, args)
        return title or tool_title(name, args, kind=self.classifier.classify_tool(name, args), cwd=self.cwd)

    def pending(self) -> list[tuple[str, str, dict[str, Any]]]:
        """`(id, name, args)` of the calls shown but not started (for example waiting for an approval)."""
        return [
            (i, c.name, dict(c.args or {})) for i, c in self.calls.items() if c.status == "pending" and not c.hidden
        ]

    # --- transitions ------------------------------------------------------------------------------

    async def announce(
        self,
        tool_call_id: str,
        name: str,
        args: str | Mapping[str, Any] | None = None,
        *,
        partial: bool = False,
        hidden: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolCallRecord:
        """The model named a tool: `tool_call` (pending); for a known pending call, its new arguments.

        `args` may be a mapping or JSON text streamed so far (used once it parses as an object).
        `partial` marks arguments still streaming: `rawInput` is left out until they are known.
        """
        async with self._lock:
            return await self._announce(tool_call_id, name, args, partial=partial, hidden=hidden, meta=meta)

    async def _announce(
        self,
        tool_call_id: str,
        name: str,
        args: str | Mapping[str, Any] | None,
        *,
        partial: bool = False,
        hidden: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolCallRecord:
        parsed = parse_args(args)
        record = self.calls.get(tool_call_id)
        if record is None:
            record = self.calls[tool_call_id] = ToolCallRecord(
                id=tool_call_id, name=name, args=parsed, hidden=hidden, partial=partial
            )
            await self._present(record, partial=partial)
            if self.observer is not None:
                self.observer.tool_call_opened(record)
            if not hidden:
                await self._emit.send_tool_call(
                    tool_call_id,
                    title=record.title,
                    kind=record.kind,
                    status="pending",
                    raw_input=parsed if parsed or not partial else None,
                    locations=record.locations,
                    content=record.content,
                    meta=meta,
                    name=name,
                )
            return record
        completed = record.partial and not partial  # the arguments are final now
        if not partial:
            record.partial = False
        if record.status != "pending" or parsed is None:
            return record
        if parsed == record.args:
            if completed and self._presentation(record.name) is not None:
                await self._complete(record)  # content shown only once the arguments are final
            return record
        record.args = parsed
        shown = list(record.content)
        await self._present(record, partial=partial)
        if not record.hidden:
            await self._emit.send_tool_call_update(
                tool_call_id,
                title=record.title,
                kind=record.kind,
                raw_input=parsed,
                locations=record.locations or None,
                content=record.content if record.content != shown else None,
            )
        return record

    async def _complete(self, record: ToolCallRecord) -> None:
        shown = list(record.content)
        await self._present(record, partial=False)
        if not record.hidden and record.content != shown:
            await self._emit.send_tool_call_update(record.id, content=record.content)

    def _presentation(self, name: str) -> ToolPresentation | None:
        return self.presenter.find(name) if self.presenter is not None else None

    async def _present(self, record: ToolCallRecord, *, partial: bool) -> None:
        """Kind, title, locations and (complete arguments only) content of a pending call."""
        name, args = record.name, record.args
        record.kind = self.classifier.classify_tool(name, args)
        presentation = self._presentation(name)
        presenter = self.presenter
        title = locations = None
        if presentation is not None and presenter is not None:
            title = presenter.title(presentation, name, args)
            locations = presenter.locations(presentation, name, args) if args else None
            if args is not None and not partial:
                record.content = await presenter.content(presentation, name, args)
        record.title = title or tool_title(name, args, kind=record.kind, cwd=self.cwd)
        record.locations = (
            locations if locations is not None else (self.classifier.tool_locations(args) if args else [])
        )

    async def start(
        self, tool_call_id: str, name: str | None = None, args: str | Mapping[str, Any] | None = None
    ) -> ToolCallRecord:
        """The tool runs now: `in_progress` (announcing it first when it was never seen)."""
        async with self._lock:
            record = await self._announce(tool_call_id, name or "tool", args)
            record.started = True
            if record.status == "pending":
                record.status = "in_progress"
                if self.observer is not None:
                    self.observer.tool_call_started(record)
                if not record.hidden:
                    await self._emit.send_tool_call_update(tool_call_id, status="in_progress")
            return record

    async def attach(self, tool_call_id: str, content: ToolCallContent) -> None:
        """A running tool adds content (a diff, a terminal): sent now and kept for the final update."""
        async with self._lock:
            record = self.calls.get(tool_call_id)
            if record is None or record.hidden or record.finished:
                return
            if isinstance(content, FileEditToolCallContent):  # the tool's own diff replaces a presented one
                record.content = [
                    c for c in record.content if not (isinstance(c, FileEditToolCallContent) and c.path == content.path)
                ]
            record.content.append(content)
            await self._emit.send_tool_call_update(tool_call_id, content=list(record.content))

    async def finish(
        self,
        tool_call_id: str,
        *,
        failed: bool = False,
        content: Sequence[ToolCallContent] = (),
        raw_output: Any = None,
        name: str | None = None,
    ) -> None:
        """The tool finished: `completed` (or `failed`), with the attached content, then `content`.

        `raw_output` is sent as a JSON object (a string or a list becomes `{"output": ...}`). For a
        call whose record has `output_hidden`, only the status (and content attached while it ran)
        is sent.
        """
        async with self._lock:
            record = self.calls.get(tool_call_id)
            if record is None:
                record = await self._announce(tool_call_id, name or "tool", None)
            if record.finished:
                return
            record.status = "failed" if failed else "completed"
            if self.observer is not None:
                self.observer.tool_call_finished(record)
            if record.hidden:
                return
            if record.output_hidden:
                await self._emit.send_tool_call_update(
                    tool_call_id, status=record.status, content=list(record.content) or None
                )
                return
            presentation = self._presentation(record.name)
            if presentation is not None and self.presenter is not None and not failed:
                content = self.presenter.output(
                    presentation,
                    record.name,
                    record.args,
                    raw_output=raw_output,
                    content=content,
                    shown=record.content,
                )
            record.content = [*record.content, *content]
            await self._emit.send_tool_call_update(
                tool_call_id, status=record.status, content=list(record.content), raw_output=raw_output
            )

    async def add_content(self, tool_call_id: str, content: Sequence[ToolCallContent]) -> bool:
        """Add content to a shown call, running or already finished (something its result caused and
        that is known only afterwards, such as the files a tool's state update wrote); the call's
        content is sent again, whole, with it. False for a call that is unknown or hidden."""
        async with self._lock:
            record = self.calls.get(tool_call_id)
            if record is None or record.hidden or not content:
                return False
            record.content = [*record.content, *content]
            await self._emit.send_tool_call_update(tool_call_id, content=list(record.content))
            return True

    async def fail(self, tool_call_id: str, message: str, *, name: str | None = None) -> None:
        """The call did not run or did not finish: `failed` with `message` as its content."""
        await self.finish(
            tool_call_id,
            failed=True,
            content=[tool_content(text_block(message))],
            raw_output={"error": message},
            name=name,
        )

    async def close_open(self, reason: str) -> None:
        """Fail every shown call that did not finish (the turn was cancelled, failed, or ended)."""
        for tool_call_id in self.open_ids():
            await self.fail(tool_call_id, reason)

    # --- what a runner sends through the emitter directly -----------------------------------------

    def observe(
        self,
        tool_call_id: str,
        status: ToolCallStatus | None,
        *,
        title: str | None = None,
        kind: ToolKind | None = None,
    ) -> bool:
        """Record an update a runner sends with the emitter's own methods; False when its status goes backwards.

        A status after the call finished, or lower than the last one (`in_progress` after
        `completed`), is refused: the emitter then does not send the update.
        """
        record = self.calls.get(tool_call_id)
        if record is None:
            record = self.calls[tool_call_id] = ToolCallRecord(
                id=tool_call_id,
                name=title or "tool",
                title=title or "",
                status=status or "pending",
                kind=kind or "other",
            )
            if self.observer is not None:
                self.observer.tool_call_opened(record)
                self._observed(record)
            return True
        if status is None:
            return True
        if record.finished or _RANK[status] < _RANK[record.status]:
            return False
        record.status = status
        if self.observer is not None:
            self._observed(record)
        return True

    def _observed(self, record: ToolCallRecord) -> None:
        """Tell the observer the status a runner sent through the emitter."""
        assert self.observer is not None
        if record.finished:
            self.observer.tool_call_finished(record)
        elif record.status == "in_progress":
            self.observer.tool_call_started(record)
