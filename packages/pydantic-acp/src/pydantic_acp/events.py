"""pydantic-ai stream events -> ACP updates through the turn's emitter.

One [`EventProjector`][pydantic_acp.events.EventProjector] lives for one turn. It sees every
event of the run (model response parts, tool calls and their results) and calls the emitter:

| pydantic-ai | ACP |
|---|---|
| `TextPart` start / `TextPartDelta` | `agent_message_chunk` |
| `ThinkingPart` start / `ThinkingPartDelta` | `agent_thought_chunk` |
| `ToolCallPart` start (a function tool, name known) | `tool_call` (pending, kind and title from what is known) |
| `FunctionToolCallEvent` | `tool_call` (pending, kind, title, raw input, locations) or the completing update |
| tool starts running | `tool_call_update` `in_progress` |
| `FunctionToolResultEvent` | `tool_call_update` `completed` / `failed` with the output as content |

Tool outcomes map through [`OUTCOME_STATUS`][pydantic_acp.events.OUTCOME_STATUS].
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from acp.helpers import text_block, tool_content
from acp.schema import ToolCallStatus, ToolKind
from acpkit_core.runner import ToolCallContent, Turn
from acpkit_core.tools import tool_title
from pydantic_ai.messages import (
    AgentStreamEvent,
    BaseToolCallPart,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolReturnPart,
)

__all__ = ["OUTCOME_STATUS", "EventProjector", "ToolCallState", "tool_output_text"]

ToolOutcome = Literal["success", "failed", "denied", "interrupted", "retried"]

OUTCOME_STATUS: Mapping[ToolOutcome, ToolCallStatus] = {
    "success": "completed",
    "failed": "failed",
    "denied": "failed",
    "interrupted": "failed",
    "retried": "failed",
}
"""The ACP status a tool call ends with, by pydantic-ai's `ToolReturnPart.outcome`."""


@dataclass(kw_only=True)
class ToolCallState:
    """What the projector knows about one tool call of the turn."""

    tool_call_id: str
    """The tool call id (the model's, kept by pydantic-ai)."""
    name: str
    """The tool's name."""
    args: dict[str, Any]
    """The parsed arguments."""
    kind: ToolKind
    """ACP tool kind from the core classifier."""
    title: str
    """Title shown by the client."""
    status: ToolCallStatus = "pending"
    """Last status sent."""
    extra_content: list[ToolCallContent] = field(default_factory=list[ToolCallContent])
    """Content a tool attached while running (a diff, a terminal), sent again with the result."""
    hidden: bool = False
    """Projected elsewhere (the plan tool), not shown as a tool call."""
    partial: bool = False
    """Announced while the model was still streaming its arguments."""


def tool_output_text(part: ToolReturnPart) -> str:
    """The tool's output as the model sees it (errors unwrapped), as plain text."""
    content: Any = part.content
    if isinstance(content, str):
        return content
    try:
        return part.model_response_str(wrap_if_error=False)
    except Exception:
        return json.dumps(content, default=str)


class EventProjector:
    """Turns one run's pydantic-ai events into emitter calls."""

    def __init__(self, turn: Turn, *, hidden_tools: frozenset[str] = frozenset()) -> None:
        self._turn = turn
        self._emit = turn.emit
        self._hidden_tools = hidden_tools
        self._in_message = False
        self.tool_calls: dict[str, ToolCallState] = {}
        self.not_run: set[str] = set()
        """Ids of the calls the user refused, or did not answer before the turn stopped: their tool never ran."""
        """Tool calls seen this turn, by id."""
        self.function_tools: frozenset[str] = frozenset()
        """The run's function tools (set per step by the bridge): calls of these are shown as they start."""

    def end_message(self) -> None:
        """The current model response is over: the next text starts a new ACP message."""
        self._in_message = False

    async def handle(self, event: AgentStreamEvent) -> None:
        """Project one event."""
        if isinstance(event, PartDeltaEvent):
            delta = event.delta
            if isinstance(delta, TextPartDelta):
                if delta.content_delta:
                    await self._text(delta.content_delta)
            elif isinstance(delta, ThinkingPartDelta) and delta.content_delta:
                await self._thought(delta.content_delta)
        elif isinstance(event, PartStartEvent):
            part = event.part
            if isinstance(part, TextPart):
                if part.content:
                    await self._text(part.content)
            elif isinstance(part, ThinkingPart) and part.content:
                await self._thought(part.content)
            elif isinstance(part, ToolCallPart) and part.tool_name in self.function_tools:
                # Shown while the model still streams the arguments (output tools are not tool calls).
                self._in_message = False
                await self.announce(part, partial=True)
        elif isinstance(event, FunctionToolCallEvent):
            self._in_message = False
            await self.announce(event.part)
        elif isinstance(event, FunctionToolResultEvent):
            await self.finish(event.part)

    async def output_text(self, text: str) -> None:
        """Show a final output that was not streamed as text (a structured output) as one message."""
        self._in_message = False
        await self._text(text)

    async def _text(self, delta: str) -> None:
        if not self._in_message:
            self._in_message = True
            self._emit.new_message()
        await self._emit.text(delta)

    async def _thought(self, delta: str) -> None:
        if not self._in_message:
            self._in_message = True
            self._emit.new_message()
        await self._emit.thought(delta)

    async def announce(self, part: BaseToolCallPart[Any], *, partial: bool = False) -> ToolCallState:
        """Send `tool_call` (pending) once per id; a call first shown `partial` is completed by an update."""
        known = self.tool_calls.get(part.tool_call_id)
        if known is not None:
            if known.partial and not partial:
                await self._complete(known, part)
            return known
        args = _args_so_far(part) if partial else part.args_as_dict()
        kind = self._turn.classify_tool(part.tool_name, args)
        state = ToolCallState(
            tool_call_id=part.tool_call_id,
            name=part.tool_name,
            args=args,
            kind=kind,
            title=tool_title(part.tool_name, args, kind=kind, cwd=self._turn.session.cwd),
            hidden=part.tool_name in self._hidden_tools,
            partial=partial,
        )
        self.tool_calls[part.tool_call_id] = state
        if not state.hidden:
            await self._emit.tool_call(
                part.tool_call_id,
                title=state.title,
                kind=kind,
                status="pending",
                raw_input=args if args or not partial else None,
                locations=self._turn.tool_locations(args),
            )
        return state

    async def _complete(self, state: ToolCallState, part: BaseToolCallPart[Any]) -> None:
        """The arguments are complete: send what they change (title, kind, raw input, locations)."""
        state.partial = False
        args = part.args_as_dict()
        if args == state.args:
            return
        state.args = args
        state.kind = self._turn.classify_tool(part.tool_name, args)
        state.title = tool_title(part.tool_name, args, kind=state.kind, cwd=self._turn.session.cwd)
        if state.hidden:
            return
        locations = self._turn.tool_locations(state.args)
        await self._emit.tool_call_update(
            state.tool_call_id,
            title=state.title,
            kind=state.kind,
            raw_input=state.args,
            locations=locations or None,
        )

    async def started(self, part: BaseToolCallPart[Any]) -> ToolCallState | None:
        """The tool is about to run: `in_progress`. Returns its state (`None` for a hidden tool)."""
        state = await self.announce(part)
        if state.hidden:
            return None
        if state.status == "pending":
            state.status = "in_progress"
            await self._emit.tool_call_update(part.tool_call_id, status="in_progress")
        return state

    async def attach(self, tool_call_id: str, content: ToolCallContent) -> None:
        """A running tool adds content (a diff, a terminal) to its own tool call."""
        state = self.tool_calls.get(tool_call_id)
        if state is None or state.hidden:
            return
        state.extra_content.append(content)
        await self._emit.tool_call_update(tool_call_id, content=list(state.extra_content))

    async def finish(self, part: ToolReturnPart) -> None:
        """Send the final status and the output of a tool call."""
        state = self.tool_calls.get(part.tool_call_id)
        if state is None or state.hidden or state.status in ("completed", "failed"):
            return
        status = OUTCOME_STATUS[part.outcome]
        state.status = status
        text = tool_output_text(part)
        content: list[ToolCallContent] = [*state.extra_content]
        if text:
            content.append(tool_content(text_block(text)))
        raw_output: Any = part.content if _is_json(part.content) else text
        await self._emit.tool_call_update(part.tool_call_id, status=status, content=content, raw_output=raw_output)

    def unstarted_ids(self) -> list[str]:
        """Ids of the shown tool calls whose tool never ran: refused or unanswered, or never started."""
        return [i for i, s in self.tool_calls.items() if not s.hidden and (i in self.not_run or s.status == "pending")]

    async def fail_open(self, message: str) -> None:
        """Close every tool call still open (the run stopped before they finished)."""
        for state in self.tool_calls.values():
            if state.hidden or state.status in ("completed", "failed"):
                continue
            state.status = "failed"
            await self._emit.tool_call_update(
                state.tool_call_id, status="failed", content=[*state.extra_content, tool_content(text_block(message))]
            )


def _args_so_far(part: BaseToolCallPart[Any]) -> dict[str, Any]:
    """The arguments if what has streamed so far is already a complete JSON object, else `{}`."""
    try:
        return part.args_as_dict(raise_if_invalid=True)
    except (ValueError, AssertionError):
        return {}


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
