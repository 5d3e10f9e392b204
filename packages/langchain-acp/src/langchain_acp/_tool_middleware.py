"""`AcpToolMiddleware`: `tool_call` / `tool_call_update` around each tool run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from ._middleware import current_acp
from ._tools import finish_call

__all__ = ["AcpToolMiddleware"]


class AcpToolMiddleware(AgentMiddleware[Any, Any, Any]):
    """Reports each tool run: `tool_call` (if not announced yet), `in_progress`, then `completed` or `failed`.

    Kinds, titles and locations come from `acpkit_core.runner.tool_classification` (the turn's per-tool overrides
    apply). Inside `LangGraphRunner` the runner reports tools too; both go through one tracker,
    so nothing is sent twice.

    With `emit_tool_results=False` the final `completed` / `failed` update of each call it runs
    carries the status only: no content, no `rawOutput` (the model still gets the result). The
    rule is kept on the call itself, so the runner and `AcpCallbackHandler` leave it out too.
    """

    def __init__(self, *, emit_tool_results: bool = True) -> None:
        """Report tool runs; `emit_tool_results=False` leaves their results out of the updates."""
        super().__init__()
        self.emit_tool_results = emit_tool_results
        """Send each tool's output (content and `rawOutput`) with its final update."""

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Report the run around the handler."""
        binding = current_acp()
        call = request.tool_call
        tool_call_id = call.get("id")
        if binding is None or not tool_call_id:
            return await handler(request)
        record = await binding.tools.start(tool_call_id, call["name"], call["args"])
        if not self.emit_tool_results:
            record.output_hidden = True
        try:
            result = await handler(request)
        except Exception as error:
            await binding.tools.fail(tool_call_id, f"Error: {error}", name=call["name"])
            raise
        message = result if isinstance(result, ToolMessage) else _tool_message_in(result, tool_call_id)
        if message is not None:
            await finish_call(binding.tools, tool_call_id, message, name=call["name"])
        return result


def _tool_message_in(command: Command[Any], tool_call_id: str) -> ToolMessage | None:
    update: object = command.update
    messages: object = cast(dict[str, Any], update).get("messages") if isinstance(update, dict) else None
    for message in cast(list[object], messages) if isinstance(messages, list) else ():
        if isinstance(message, ToolMessage) and message.tool_call_id == tool_call_id:
            return message
    return None
