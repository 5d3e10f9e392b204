"""The turn emitter: turns a runner's calls into `session/update` notifications and records them."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    Cost,
    PlanEntry,
    SessionInfoUpdate,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
    Usage,
    UsageUpdate,
    UserMessageChunk,
)

from . import prices
from .tool_lifecycle import ToolCalls, json_object
from .types import CompactionStatus, NoticeSeverity, PlanItem, ToolCallContent, TurnUsage

if TYPE_CHECKING:
    from .plan import PlanContent, TurnPlan
from .notices import notice_update
from .updates import MessageBlock, Sender, SessionUpdate, WireUpdate, update_to_json

__all__ = ["COALESCE_MS", "MERGED_CHARS", "TurnEmitter"]


_CHUNK_KINDS: dict[str, str] = {"text": "agent_message_chunk", "thought": "agent_thought_chunk"}


COALESCE_MS: Final = 2.0
"""The default chunk-merging window (`AgentOptions.coalesce_ms`), well under what a person can see."""

MERGED_CHARS: Final = 16_384
"""Past this many characters waiting, merged deltas are sent at once, whatever the window."""


def _locations(locations: Sequence[tuple[str, int | None]]) -> list[ToolCallLocation]:
    return [ToolCallLocation(path=path, line=line) for path, line in locations]


class TurnEmitter:
    """Implements [`Emitter`][acpkit_core.runner.protocols.Emitter] for one turn.

    Every update that belongs to the conversation is kept, as its wire JSON, in
    [`recorded`][acpkit_core.runner.emitter.TurnEmitter.recorded] so the server can store it in
    the transcript when the turn ends. With `coalesce_ms > 0` (the server passes
    `AgentOptions.coalesce_ms`, `COALESCE_MS` by default), the first text or thought delta after a
    pause is sent at once and the deltas that come within the window of it are merged into one
    chunk; whoever makes an emitter with a window calls `flush()` when its run ends (the server does
    at the end of every turn). Made without one, it sends every delta as its own chunk.

    Text and thought chunks, one per token, are built as wire JSON directly; the other updates
    are built as the SDK's models (validated) and dumped once, for sending and recording alike.
    """

    def __init__(
        self,
        send: Sender,
        *,
        coalesce_ms: float = 0.0,
        context_window: int | None = None,
        show_thoughts: bool = True,
        session_cost: float | None = None,
        unstable: frozenset[str] = frozenset(),
    ) -> None:
        self._send = send
        self.unstable = unstable
        """The unstable surfaces the client negotiated
        ([`acpkit_core.runner.unstable`][acpkit_core.runner.unstable])."""
        self._session_cost = session_cost
        self.turn_cost: float | None = None
        """The turn's cost in US dollars, added up over the responses whose price is known."""
        self.show_thoughts = show_thoughts
        """Send reasoning (`False`: `thought` drops it; the session's `show_thinking` option is off)."""
        self.context_window = context_window
        """The model's context window in tokens when the runner does not report one (for `usage_update`)."""
        self._window = coalesce_ms / 1000.0
        self.recorded: list[WireUpdate] = []
        """Updates of this turn (wire JSON) to store in the transcript, in order."""
        self.tool_calls = ToolCalls(self)
        """The turn's tool calls (the server sets their classifier to the turn)."""
        self._message_ids: dict[str, str] = {}
        self._buffer_kind: Literal["text", "thought"] | None = None
        self._buffer: list[str] = []
        self._buffer_message: str | None = None
        self._buffer_chars = 0
        self._chunk_sent = -1e9
        """When the last merged chunk (or the first after a pause) was sent: its window's start."""
        self._timer: asyncio.TimerHandle | None = None
        self._flush_task: asyncio.Task[None] | None = None
        self._flush_error: Exception | None = None
        self._last_plan: list[PlanItem] | None = None
        self._summarized: set[str] = set()  # compactions whose summary was streamed
        self.plan_state: TurnPlan | None = None
        """The session's plan, when the server tracks it: `plan(...)` then changes it (see
        `acpkit_core.runner.plan`)."""
        self.turn_usage: Usage | None = None
        """Usage added up over the turn, `None` until the runner reports some."""

    def uses(self, surface: str) -> bool:
        """True when the client negotiated the unstable `surface` (`sessionNotices`, `planOperations`, ...)."""
        return surface in self.unstable

    # --- messages ---------------------------------------------------------------------------

    def new_message(self) -> None:
        """Start a new agent message: the next chunks carry a fresh `messageId`."""
        self._message_ids.clear()

    def _message_id(self, kind: str) -> str:
        mid = self._message_ids.get(kind)
        if mid is None:
            mid = self._message_ids[kind] = uuid.uuid4().hex
        return mid

    async def _emit(self, update: SessionUpdate, *, record: bool = True, extra: WireUpdate | None = None) -> None:
        wire = update_to_json(update)
        if extra:
            wire.update(extra)
        if record:
            self.recorded.append(wire)
        await self._send(wire)

    async def _chunk(self, kind: Literal["text", "thought"], delta: str, message_id: str | None = None) -> None:
        # What `update_to_json(AgentMessageChunk(...))` gives, without building and dumping models per token.
        wire: WireUpdate = {
            "content": {"text": delta, "type": "text"},
            "messageId": message_id or self._message_id(kind),
            "sessionUpdate": _CHUNK_KINDS[kind],
        }
        self.recorded.append(wire)
        await self._send(wire)

    async def text(self, delta: str) -> None:
        """Stream a piece of the answer."""
        if delta and self._window <= 0:  # the per-token path, kept flat
            await self._chunk("text", delta)
        elif delta:
            await self._buffered("text", delta)

    async def thought(self, delta: str) -> None:
        """Stream a piece of reasoning (dropped, neither sent nor recorded, when `show_thoughts` is off)."""
        if not self.show_thoughts:
            return
        if delta and self._window <= 0:
            await self._chunk("thought", delta)
        elif delta:
            await self._buffered("thought", delta)

    async def _buffered(self, kind: Literal["text", "thought"], delta: str) -> None:
        message_id = self._message_id(kind)
        if self._buffer and (self._buffer_kind != kind or self._buffer_message != message_id):
            await self.flush()  # only deltas of one message merge
        now = time.monotonic()
        if not self._buffer:
            if now - self._chunk_sent >= self._window:  # after a pause: at once, and a window opens
                self._chunk_sent = now
                await self._chunk(kind, delta)
                return
            self._buffer_kind = kind
            self._buffer_message = message_id
            self._timer = asyncio.get_running_loop().call_later(self._chunk_sent + self._window - now, self._on_timer)
        self._buffer.append(delta)
        self._buffer_chars += len(delta)
        # Past the window (a model that never yields to the loop) or past the size: now.
        if now - self._chunk_sent >= self._window or self._buffer_chars >= MERGED_CHARS:
            await self.flush()

    def _on_timer(self) -> None:
        self._timer = None
        if self._buffer:
            self._flush_task = asyncio.ensure_future(self._timed_flush())

    async def _timed_flush(self) -> None:
        try:
            await self.flush()
        except (ConnectionError, RuntimeError):  # the client left: the turn ends on its own
            pass
        except Exception as error:  # nobody awaits this task: the turn's next flush raises it
            self._flush_error = error

    async def flush(self) -> None:
        """Send merged deltas now (called before every other update and at the end of the turn)."""
        if self._flush_error is not None:
            error, self._flush_error = self._flush_error, None
            raise error
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._buffer or self._buffer_kind is None:
            return
        kind, text, message_id = self._buffer_kind, "".join(self._buffer), self._buffer_message
        self._buffer.clear()
        self._buffer_chars = 0
        self._buffer_kind = None
        self._chunk_sent = time.monotonic()
        await self._chunk(kind, text, message_id)

    async def user_message(self, blocks: Sequence[Any], *, message_id: str | None = None) -> None:
        """Record the user's prompt as `user_message_chunk`s (kept for replay, not sent), all with
        `message_id` (a new one when not given)."""
        mid = message_id or uuid.uuid4().hex
        for block in blocks:
            chunk = UserMessageChunk(session_update="user_message_chunk", content=block, message_id=mid)
            self.recorded.append(update_to_json(chunk))

    async def message_block(self, block: MessageBlock) -> None:
        """Stream a block of the answer that is not plain text (an image, a resource, annotated text).

        It is sent as an `agent_message_chunk` of the current message (same `messageId` as its text).
        """
        await self.flush()
        await self._emit(
            AgentMessageChunk(session_update="agent_message_chunk", content=block, message_id=self._message_id("text"))
        )

    async def agent_message(self, text: str) -> None:
        """Send a complete agent message of its own (errors, command output)."""
        await self.flush()
        self.new_message()
        await self._chunk("text", text)
        self.new_message()

    # --- tool calls ---------------------------------------------------------------------------

    async def tool_call(
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
        """Announce a tool call (recorded in [`tool_calls`][acpkit_core.runner.emitter.TurnEmitter.tool_calls]).

        `name` is the tool's programmatic name, sent as the call's `name` to a client that negotiated
        `toolCallName` (left out for any other).
        """
        if not self.tool_calls.observe(tool_call_id, status, title=title, kind=kind):
            return
        await self.send_tool_call(
            tool_call_id,
            title=title,
            kind=kind,
            status=status,
            raw_input=raw_input,
            locations=locations,
            content=content,
            meta=meta,
            name=name,
        )

    async def tool_call_update(
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
        """Update a tool call; only the fields given are sent. A status that goes backwards is not sent."""
        if not self.tool_calls.observe(tool_call_id, status):
            return
        await self.send_tool_call_update(
            tool_call_id,
            status=status,
            title=title,
            kind=kind,
            raw_input=raw_input,
            raw_output=raw_output,
            locations=locations,
            content=content,
            meta=meta,
        )

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
        """Send `tool_call` as given (`rawInput` as a JSON object), without the lifecycle's checks.

        With `name`, and a client that negotiated `toolCallName`, the call carries the tool's `name`
        (the unstable schema's field; the stable one has none, so any other client is not sent it).
        """
        await self.flush()
        self.new_message()
        await self._emit(
            ToolCallStart(
                session_update="tool_call",
                tool_call_id=tool_call_id,
                title=title,
                kind=kind,
                status=status,
                raw_input=json_object(raw_input, "input"),
                locations=_locations(locations) if locations else None,
                content=list(content) if content else None,
                field_meta=dict(meta) if meta else None,
            ),
            extra={"name": name} if name and self.uses("toolCallName") else None,
        )

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
        """Send `tool_call_update` as given (`rawInput`/`rawOutput` as JSON objects), without the lifecycle's checks."""
        await self.flush()
        await self._emit(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=tool_call_id,
                status=status,
                title=title,
                kind=kind,
                raw_input=json_object(raw_input, "input"),
                raw_output=json_object(raw_output),
                locations=_locations(locations) if locations is not None else None,
                content=list(content) if content is not None else None,
                field_meta=dict(meta) if meta else None,
            )
        )

    # --- plan and usage ---------------------------------------------------------------------

    async def plan(self, items: Sequence[PlanItem]) -> None:
        """Replace the plan: through the session's plan when the server tracks it (`turn.plan.set`;
        nothing when a host's plan provider owns the plan alone), else sent at once (unless it equals
        the previous one)."""
        if self.plan_state is not None:
            if self.plan_state.writable:  # a host that owns its plan alone is not overwritten
                await self.plan_state.set(items)
        else:
            await self.send_plan(items)

    async def send_plan(self, items: Sequence[PlanItem]) -> None:
        """Send ACP's `plan` update with the complete list, unless it equals the previous one this turn."""
        await self.flush()
        current = list(items)
        if current == self._last_plan:
            return
        self._last_plan = current
        entries = [PlanEntry(content=i.content, status=i.status, priority=i.priority) for i in current]
        await self._emit(AgentPlanUpdate(session_update="plan", entries=entries))

    async def send_plan_update(self, plan: PlanContent) -> None:
        """Send the unstable `plan_update` for one plan (its entries, its Markdown, or its file's URI).

        Only for a client that negotiated `planOperations`; not recorded (the transcript keeps the
        stable `plan`, which replays to every client).
        """
        await self.flush()
        body: WireUpdate
        if plan.markdown is not None:
            body = {"type": "markdown", "planId": plan.id, "content": plan.markdown}
        elif plan.uri is not None:
            body = {"type": "file", "planId": plan.id, "uri": plan.uri}
        else:
            entries = [{"content": i.content, "priority": i.priority, "status": i.status} for i in plan.items]
            body = {"type": "items", "planId": plan.id, "entries": entries}
        await self._send({"sessionUpdate": "plan_update", "plan": body})

    async def send_plan_removed(self, plan_id: str) -> None:
        """Send the unstable `plan_removed` (only for a client that negotiated `planOperations`)."""
        await self.flush()
        await self._send({"sessionUpdate": "plan_removed", "planId": plan_id})

    async def record_plan(self, items: Sequence[PlanItem]) -> None:
        """Keep the stable `plan` with these entries in the transcript without sending it (what
        `session/load` replays after plan operations were sent live)."""
        entries = [PlanEntry(content=i.content, status=i.status, priority=i.priority) for i in items]
        self.recorded.append(update_to_json(AgentPlanUpdate(session_update="plan", entries=entries)))

    # --- compaction -------------------------------------------------------------------------

    async def compaction(
        self,
        *,
        status: CompactionStatus = "completed",
        compaction_id: str | None = None,
        summary: str | None = None,
        error: str | None = None,
        removed: int | None = None,
    ) -> str:
        """Tell the client the history was compacted (or is being, or failed to be); returns the id.

        To a client that negotiated `sessionCompaction`: the unstable `compaction_update` with this
        id (a new one when not given), `status`, and, once `completed`, `summary` (the text kept in
        place of the older messages, when the framework shows one; it replaces what
        [`compaction_summary`][acpkit_core.runner.emitter.TurnEmitter.compaction_summary] streamed) or, once
        `failed`, `error` (a failed or cancelled one clears the summary streamed so far). To any
        other client, at a terminal status only: a notice ("Context compacted", with how many
        messages were `removed` when known).

        The transcript keeps the compaction whatever the client: `session/load` replays it, in its
        place and final state, to a client that negotiated `sessionCompaction` (and skips it for
        the others, as notices are live only).
        """
        await self.flush()
        if compaction_id is None:
            compaction_id = f"cmp-{uuid.uuid4().hex[:12]}"
        wire: WireUpdate = {"sessionUpdate": "compaction_update", "compactionId": compaction_id, "status": status}
        if summary and status == "completed":
            wire["summary"] = [{"type": "text", "text": summary}]
        if error and status == "failed":
            wire["error"] = error
        if status in ("failed", "cancelled") and compaction_id in self._summarized:
            wire["summary"] = []  # what the chunks streamed is no summary of anything: cleared
        self.recorded.append(wire)
        if self.uses("sessionCompaction"):
            self.new_message()
            await self._send(wire)
        elif status == "completed":
            what = "Earlier messages were" if not removed else f"{removed} earlier messages were"
            if removed == 1:
                what = "1 earlier message was"
            await self.notice(
                "Context compacted", description=f"{what} summarized to fit the model's context.", severity="info"
            )
        elif status == "failed":
            await self.notice("Context compaction failed", description=error, severity="warning")
        return compaction_id

    async def compaction_summary(self, compaction_id: str, delta: str, *, restart: bool = False) -> None:
        """Stream a piece of an in-progress compaction's summary (`compaction_summary_chunk`).

        Send it after `compaction(status="in_progress")` returned `compaction_id` and before its
        terminal status; `restart` when the framework began the summary again (a retried model
        call): what streamed before is cleared first. Sent only to a client that negotiated
        `sessionCompaction` (others see the notice at the end); kept in the transcript either way.
        """
        if not delta:
            return
        await self.flush()
        if restart and compaction_id in self._summarized:
            clear: WireUpdate = {
                "sessionUpdate": "compaction_update",
                "compactionId": compaction_id,
                "status": "in_progress",
                "summary": [],
            }
            self.recorded.append(clear)
            if self.uses("sessionCompaction"):
                await self._send(clear)
        wire: WireUpdate = {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": compaction_id,
            "content": {"type": "text", "text": delta},
        }
        self.recorded.append(wire)
        self._summarized.add(compaction_id)
        if self.uses("sessionCompaction"):
            await self._send(wire)

    async def usage(self, usage: TurnUsage) -> None:
        """Add one model response's usage to the turn; send `usage_update` when the context size is known.

        The size is the runner's (`TurnUsage.context_size`), else the developer's `context_window`,
        else the model's as [`acpkit_core.runner.prices`][acpkit_core.runner.prices] knows it. The cost, where
        known (the runner's `TurnUsage.cost`, else the model's prices), is the session's so far.
        """
        await self.flush()
        prev = self.turn_usage

        def add(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        inp = (prev.input_tokens if prev else 0) + usage.input_tokens
        out = (prev.output_tokens if prev else 0) + usage.output_tokens
        self.turn_usage = Usage(
            input_tokens=inp,
            output_tokens=out,
            total_tokens=inp + out + (add(prev.thought_tokens if prev else None, usage.thought_tokens) or 0),
            thought_tokens=add(prev.thought_tokens if prev else None, usage.thought_tokens),
            cached_read_tokens=add(prev.cached_read_tokens if prev else None, usage.cached_read_tokens),
            cached_write_tokens=add(prev.cached_write_tokens if prev else None, usage.cached_write_tokens),
        )
        cost = usage.cost
        if cost is None and usage.model:
            cost = prices.response_cost(
                usage.model,
                usage.provider,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cached_read_tokens,
                cache_write_tokens=usage.cached_write_tokens,
            )
        if cost is not None:
            self.turn_cost = (self.turn_cost or 0.0) + cost
        size = usage.context_size if usage.context_size is not None else self.context_window
        if size is None:
            size = prices.context_window(usage.model, usage.provider)
        if size is not None:
            used = usage.input_tokens + usage.output_tokens
            total = None if self.turn_cost is None else (self._session_cost or 0.0) + self.turn_cost
            meter = UsageUpdate(
                session_update="usage_update",
                used=used,
                size=size,
                cost=Cost(amount=round(total, 6), currency="USD") if total is not None else None,
            )
            await self._emit(meter, record=False)

    async def notice(
        self,
        title: str,
        *,
        description: str | None = None,
        severity: NoticeSeverity = "info",
        text: str | None = None,
    ) -> None:
        """Tell the user something that is neither the answer nor a tool call.

        Sent as [`notice_update`][acpkit_core.runner.notices.notice_update] says: a `notice` update to a
        client that negotiated `sessionNotices`, else an agent message of its own (`text`, when
        given, else the title and description).
        A notice is live only: it is not part of the transcript, so `session/load` does not replay
        it, and the answer's text after it starts a new message.
        """
        await self.flush()
        self.new_message()
        native = self.uses("sessionNotices")
        await self._send(notice_update(title, description=description, severity=severity, native=native, text=text))

    async def session_info(self, *, title: str | None = None, meta: Mapping[str, Any] | None = None) -> None:
        """Send `session_info_update` with `title` and/or `_meta`, stamped now (not recorded)."""
        from ..store.base import now_iso

        meta_json = dict(meta) if meta else None
        update = SessionInfoUpdate(
            session_update="session_info_update", title=title, updated_at=now_iso(), field_meta=meta_json
        )
        await self.send_unrecorded(update)

    async def send_unrecorded(self, update: SessionUpdate) -> None:
        """Send an update that is not part of the transcript (session info, mode changes)."""
        await self.flush()
        await self._send(update_to_json(update))

    async def send_wire(self, update: WireUpdate) -> None:
        """Send an update already dumped as wire JSON, not part of the transcript (after the text before it)."""
        await self.flush()
        await self._send(update)
