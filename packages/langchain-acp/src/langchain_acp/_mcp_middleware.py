"""`AcpMcpMiddleware`: the editor's MCP servers as tools of a `create_agent` graph, per session."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ModelRequest, ModelResponse, ToolCallRequest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from langgraph.types import Command

from ._middleware import current_acp

__all__ = ["MCP_MIDDLEWARE_NAME", "AcpMcpMiddleware"]

MCP_MIDDLEWARE_NAME = "AcpMcpMiddleware"
"""The middleware's name in the graph (its `before_agent` node is how the runner knows it is there)."""


class AcpMcpMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Gives the model the tools of the session's MCP servers, and runs them.

    The `mcpServers` an editor sends with `session/new` differ per session, so a graph compiled
    once cannot list their tools. This middleware adds them to every model call and resolves
    their calls in the tool node. Inside `LangGraphRunner` the tools are those of the running
    session (connected by the runner when the session opens, closed with it); a hand-built
    server connects them with [`McpTools`][langchain_acp.McpTools] (the same loader) and passes
    them with `bind_connection(..., mcp_tools=mcp.tools)`, or gives fixed ones as `tools=`.

    Put it before `AcpModeMiddleware` in the list, so the mode filters MCP tools like any other.
    """

    def __init__(self, tools: Sequence[BaseTool] = ()) -> None:
        """Add `tools` (besides the session's) to every model call."""
        super().__init__()
        self.extra_tools = tuple(tools)
        """Tools given here, offered in every session."""

    @property
    def name(self) -> str:
        """Always `AcpMcpMiddleware` (subclasses too: the runner looks for this name)."""
        return MCP_MIDDLEWARE_NAME

    def session_tools(self) -> list[BaseTool]:
        """The tools to offer now: the running session's MCP tools, then `extra_tools`."""
        binding = current_acp()
        found = {t.name: t for t in (binding.mcp_tools if binding is not None else ())}
        for tool in self.extra_tools:
            found.setdefault(tool.name, tool)
        return list(found.values())

    async def abefore_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Nothing to change (this hook gives the middleware a node the runner can find)."""
        return None

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> ModelResponse[Any]:
        """Offer the session's MCP tools with the graph's own (the graph's win a name clash)."""
        present = {t.name if isinstance(t, BaseTool) else str(t.get("name", "")) for t in request.tools}
        added = [t for t in self.session_tools() if t.name not in present]
        return await handler(request.override(tools=[*request.tools, *added]) if added else request)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Give the tool node the MCP tool a call names (it only knows the graph's own)."""
        if request.tool is None:
            name = request.tool_call["name"]
            tool = next((t for t in self.session_tools() if t.name == name), None)
            if tool is not None:
                request = request.override(tool=tool)
        return await handler(request)
