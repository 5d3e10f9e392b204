"""How a LangChain tool's output looks on ACP: content, status, `rawOutput`.

The lifecycle of the turn's tool calls is core's [`ToolCalls`][acpkit_core.runner.tool_lifecycle.ToolCalls]
(`turn.tool_calls`, or the binding's over a connection): the stream mapper, the tool middleware,
the callback handler and the gate all report through that one object, so a call is never sent
twice or out of order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from acpkit_core.runner.tool_lifecycle import ToolCalls
from acpkit_core.runner.types import ToolCallContent
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from ._content import to_acp_tool_content

__all__ = ["finish_call", "tool_output_content", "tool_status"]


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


async def finish_call(
    calls: ToolCalls, tool_call_id: str, output: Any, *, failed: bool = False, name: str | None = None
) -> None:
    """Finish a call with a tool's output: a `ToolMessage` (its status and content), a `Command`, or any value.

    A tool that returns a `Command` (`write_todos`, DeepAgents' `task`) reports the `ToolMessage`
    inside it: its status and content, not the repr of the state update.
    """
    message = _command_tool_message(cast(Command[Any], output)) if isinstance(output, Command) else output
    if isinstance(message, ToolMessage):
        failed = failed or tool_status(message) == "failed"
    raw = message.content if isinstance(message, ToolMessage) else message
    await calls.finish(tool_call_id, failed=failed, content=tool_output_content(output), raw_output=raw, name=name)
