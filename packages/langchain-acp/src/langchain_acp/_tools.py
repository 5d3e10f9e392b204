"""One place for how a LangChain tool call looks on ACP: title, kind, locations, output, status.

[`ToolCallTracker`][langchain_acp._tools.ToolCallTracker] keeps the state of every tool call of a
turn, so the stream mapper, the tool middleware and the callback handler can all report the same
call without sending it twice or out of order (`pending -> in_progress -> completed | failed`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from acp.schema import ToolKind
from acpkit_core.runner import Emitter, ToolCallContent
from acpkit_core.tools import tool_title
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from .content import to_acp_tool_content

__all__ = ["ToolCallTracker", "ToolClassifier", "tool_output_content", "tool_status"]

_Phase = Literal["pending", "in_progress", "completed", "failed"]
_ORDER: dict[_Phase, int] = {"pending": 0, "in_progress": 1, "completed": 2, "failed": 2}


class ToolClassifier(Protocol):
    """What the tracker needs to present a tool (satisfied by `acpkit_core.runner.Turn`)."""

    def classify_tool(self, name: str, args: Mapping[str, Any] | None = None) -> ToolKind:
        """The ACP kind of a tool."""
        ...

    def tool_locations(self, args: Mapping[str, Any] | None) -> list[tuple[str, int | None]]:
        """Locations from path-like arguments."""
        ...


def tool_status(message: ToolMessage) -> Literal["completed", "failed"]:
    """`failed` for a `ToolMessage` with error status, else `completed`."""
    return "failed" if message.status == "error" else "completed"


def tool_output_content(output: Any) -> list[ToolCallContent]:
    """A tool's output (a `ToolMessage`, text, content blocks or any value) as ACP tool-call content."""
    if isinstance(output, Command):
        output = _command_tool_message(cast(Command[Any], output))
    content = output.content if isinstance(output, ToolMessage) else output
    if content is None or content == "" or content == []:
        return []
    return list(to_acp_tool_content(content))


def _command_tool_message(command: Command[Any]) -> ToolMessage | None:
    """The `ToolMessage` a tool returned inside a `Command` (as `write_todos` does), if any."""
    update: Any = command.update
    messages: Any = cast(Mapping[str, Any], update).get("messages") if isinstance(update, Mapping) else None
    if not isinstance(messages, list):
        return None
    found = [m for m in cast(list[Any], messages) if isinstance(m, ToolMessage)]
    return found[-1] if found else None


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
    return value if isinstance(value, dict) else None  # pyright: ignore[reportUnknownVariableType]


@dataclass
class _Call:
    name: str
    phase: _Phase = "pending"
    args: dict[str, Any] | None = None
    sent_args: str | None = None


@dataclass
class ToolCallTracker:
    """Reports the tool calls of one turn through an emitter, each transition at most once."""

    emit: Emitter
    """Where updates go."""
    classifier: ToolClassifier
    """Tool kinds and locations (the turn)."""
    cwd: str | None = None
    """The session's working directory (paths in titles are shown relative to it)."""
    calls: dict[str, _Call] = field(default_factory=dict[str, _Call])
    """Tool calls seen so far, by id."""
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def known(self, tool_call_id: str) -> bool:
        """True when this tool call was announced."""
        return tool_call_id in self.calls

    def open_ids(self) -> list[str]:
        """Ids of calls that started but did not finish."""
        return [i for i, c in self.calls.items() if _ORDER[c.phase] < 2]

    def pending_calls(self) -> list[tuple[str, str, dict[str, Any]]]:
        """`(id, name, args)` of the calls shown but not started (for example waiting for an approval)."""
        return [(i, c.name, dict(c.args or {})) for i, c in self.calls.items() if c.phase == "pending"]

    async def announce(
        self,
        tool_call_id: str,
        name: str,
        args: Mapping[str, Any] | str | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Announce a call (`tool_call`, pending) or, when known and still pending, update its arguments."""
        async with self._lock:
            await self._announce(tool_call_id, name, args, meta=meta)

    async def _announce(
        self, tool_call_id: str, name: str, args: Mapping[str, Any] | str | None, *, meta: Mapping[str, Any] | None
    ) -> None:
        parsed = parse_args(args)
        call = self.calls.get(tool_call_id)
        if call is None:
            call = self.calls[tool_call_id] = _Call(name=name, args=parsed)
            call.sent_args = json.dumps(parsed, sort_keys=True, default=str) if parsed else None
            kind = self.classifier.classify_tool(name, parsed)
            await self.emit.tool_call(
                tool_call_id,
                title=tool_title(name, parsed, kind=kind, cwd=self.cwd),
                kind=kind,
                status="pending",
                raw_input=parsed,
                locations=self.classifier.tool_locations(parsed) if parsed else (),
                meta=meta,
            )
            return
        if call.phase != "pending" or not parsed:
            return
        key = json.dumps(parsed, sort_keys=True, default=str)
        if key == call.sent_args:
            return
        call.args, call.sent_args = parsed, key
        kind = self.classifier.classify_tool(call.name, parsed)
        await self.emit.tool_call_update(
            tool_call_id,
            title=tool_title(call.name, parsed, kind=kind, cwd=self.cwd),
            kind=kind,
            raw_input=parsed,
            locations=self.classifier.tool_locations(parsed),
        )

    async def start(self, tool_call_id: str, name: str, args: Mapping[str, Any] | str | None = None) -> None:
        """The tool runs now (`in_progress`); announces it first when it was never seen."""
        async with self._lock:
            await self._announce(tool_call_id, name, args, meta=None)
            call = self.calls[tool_call_id]
            if _ORDER[call.phase] >= 1:
                return
            call.phase = "in_progress"
            await self.emit.tool_call_update(tool_call_id, status="in_progress")

    async def finish(
        self,
        tool_call_id: str,
        output: Any,
        *,
        failed: bool = False,
        name: str | None = None,
        content: Sequence[ToolCallContent] | None = None,
    ) -> None:
        """The tool finished: `completed` (or `failed`) with its output as content."""
        async with self._lock:
            call = self.calls.get(tool_call_id)
            if call is None:
                await self._announce(tool_call_id, name or "tool", None, meta=None)
                call = self.calls[tool_call_id]
            if _ORDER[call.phase] >= 2:
                return
            # A tool that returns a `Command` (`write_todos`, DeepAgents' `task`) reports the
            # `ToolMessage` inside it: its status and content, not the repr of the state update.
            message = _command_tool_message(cast(Command[Any], output)) if isinstance(output, Command) else output
            if isinstance(message, ToolMessage):
                failed = failed or tool_status(message) == "failed"
            call.phase = "failed" if failed else "completed"
            raw = message.content if isinstance(message, ToolMessage) else message
            await self.emit.tool_call_update(
                tool_call_id,
                status=call.phase,
                content=list(content) if content is not None else tool_output_content(output),
                raw_output=_jsonable(raw),
            )

    async def close_open(self, reason: str) -> None:
        """Mark every unfinished call `failed` (used when a turn is cancelled or fails)."""
        for tool_call_id in self.open_ids():
            await self.finish(tool_call_id, reason, failed=True)


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value
