"""pydantic-ai stream events -> ACP updates through the turn's emitter.

One [`EventProjector`][pydantic_acp.EventProjector] lives for one turn. It sees every
event of the run (model response parts, tool calls and their results) and calls the emitter:

| pydantic-ai | ACP |
|---|---|
| `TextPart` start / `TextPartDelta` | `agent_message_chunk` |
| `ThinkingPart` start / `ThinkingPartDelta` | `agent_thought_chunk` |
| `ToolCallPart` start (a function tool, name known) | `tool_call` (pending, kind and title from what is known) |
| `FunctionToolCallEvent` | `tool_call` (pending, kind, title, raw input, locations) or the completing update |
| tool starts running | `tool_call_update` `in_progress` |
| `FunctionToolResultEvent` | `tool_call_update` `completed` / `failed` with the output as content |
| `CustomEvent` / `CapabilityEvent` (with `show_hooks=True`) | a completed `other` card |
| the output tool's arguments, when the output is a `PlanOutput` | `plan`, one step at a time as the model writes them |

Tool outcomes map through [`OUTCOME_STATUS`][pydantic_acp.OUTCOME_STATUS]. The tool calls'
lifecycle is the turn's ([`ToolCalls`][acpkit_core.runner.tool_lifecycle.ToolCalls]): each transition is
sent once, in order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from acp.helpers import text_block, tool_content
from acp.schema import ToolCallStatus
from acpkit_core.runner.plan import partial_plan
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.tool_lifecycle import ToolCallRecord
from acpkit_core.runner.types import ToolCallContent
from pydantic_ai.messages import (
    AgentStreamEvent,
    BaseToolCallPart,
    CapabilityEvent,
    CustomEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
)

from ._lifecycle import event_card

__all__ = ["OUTCOME_STATUS", "EventProjector", "tool_output_text"]

ToolOutcome = Literal["success", "failed", "denied", "interrupted", "retried"]

OUTCOME_STATUS: Mapping[ToolOutcome, ToolCallStatus] = {
    "success": "completed",
    "failed": "failed",
    "denied": "failed",
    "interrupted": "failed",
    "retried": "failed",
}
"""The ACP status a tool call ends with, by pydantic-ai's `ToolReturnPart.outcome`."""


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

    def __init__(self, turn: Turn, *, hidden_tools: frozenset[str] = frozenset(), show_events: bool = False) -> None:
        self._turn = turn
        self._show_events = show_events
        self._emit = turn.emit
        self._hidden_tools = hidden_tools
        self._in_message = False
        self._calls = turn.tool_calls
        self.not_run: set[str] = set()
        """Ids of the calls the user refused, or did not answer before the turn stopped: their tool never ran."""
        self.function_tools: frozenset[str] = frozenset()
        """The run's function tools (set per step by the bridge): calls of these are shown as they start."""
        self.plan_output = False
        """The run's output is a `PlanOutput`: its steps are shown as the plan while the model writes them."""
        self._output_args: dict[int, str] = {}

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
            elif isinstance(delta, ToolCallPartDelta) and event.index in self._output_args:
                await self._plan_args(event.index, delta.args_delta)
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
            elif isinstance(part, ToolCallPart) and self.plan_output:  # the output tool, writing the plan
                self._output_args[event.index] = ""
                await self._plan_args(event.index, part.args)
        elif isinstance(event, FunctionToolCallEvent):
            self._in_message = False
            await self.announce(event.part)
        elif isinstance(event, FunctionToolResultEvent):
            await self.finish(event.part)
        elif self._show_events and isinstance(event, CustomEvent | CapabilityEvent):
            self._in_message = False
            await event_card(self._turn, event)

    async def _plan_args(self, index: int, delta: object) -> None:
        """More of a plan output's arguments: show the steps complete so far."""
        if not isinstance(delta, str | dict):
            return
        text = self._output_args[index] + delta if isinstance(delta, str) else json.dumps(delta)
        self._output_args[index] = text
        steps = partial_plan(text)
        if steps and tuple(steps) != self._turn.plan.items:
            await self._turn.plan.set(steps)

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

    async def announce(self, part: BaseToolCallPart[Any], *, partial: bool = False) -> ToolCallRecord:
        """`tool_call` (pending) once per id; a call first shown `partial` gets its complete arguments as an update."""
        args = _args_so_far(part) if partial else part.args_as_dict()
        return await self._calls.announce(
            part.tool_call_id, part.tool_name, args, partial=partial, hidden=part.tool_name in self._hidden_tools
        )

    async def started(self, part: BaseToolCallPart[Any]) -> ToolCallRecord | None:
        """The tool is about to run: `in_progress`. Returns its record (`None` for a hidden tool)."""
        record = await self.announce(part)
        if record.hidden:
            return None
        return await self._calls.start(part.tool_call_id)

    async def attach(self, tool_call_id: str, content: ToolCallContent) -> None:
        """A running tool adds content (a diff, a terminal) to its own tool call."""
        await self._calls.attach(tool_call_id, content)

    async def finish(self, part: ToolReturnPart) -> None:
        """Send the final status and the output of a tool call."""
        record = self._calls.get(part.tool_call_id)
        if record is None or record.hidden or record.finished:
            return
        text = tool_output_text(part)
        await self._calls.finish(
            part.tool_call_id,
            failed=OUTCOME_STATUS[part.outcome] == "failed",
            content=[tool_content(text_block(text))] if text else [],
            raw_output=part.content if _is_json(part.content) else text,
        )

    def unstarted_ids(self) -> list[str]:
        """Ids of the shown tool calls whose tool never ran: refused or unanswered, or never started."""
        unstarted = set(self._calls.unstarted_ids()) | self.not_run
        return [i for i, c in self._calls.calls.items() if not c.hidden and i in unstarted]

    async def fail_open(self, message: str) -> None:
        """Close every tool call still open (the run stopped before they finished)."""
        await self._calls.close_open(message)


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
