"""ACP middleware for `langchain.agents.create_agent` (real `AgentMiddleware` subclasses).

- `AcpSessionMiddleware`: session id, thread id and turn count in the state; state snapshots;
- `AcpToolMiddleware`: `tool_call` / `tool_call_update` around each tool run;
- `AcpPermissionMiddleware`: asks before gated tool calls; approve, edit, reject with re-plan;
- `AcpModeMiddleware`: agentic / interactive / readonly / planning tool restrictions;
- `AcpMcpMiddleware`: the tools of the session's MCP servers (the editor's `mcpServers`);
- `AcpThinkingMiddleware`: the session's thinking level as a model setting (`reasoning_effort`).

Inside a turn run by `LangGraphRunner` they report to that turn; a hand-built server gives them
a connection and a session id through [`bind_connection`][langchain_acp.middleware.bind_connection].
"""

from __future__ import annotations

from ._base import bind_connection, client_host, current_acp
from .mcp import AcpMcpMiddleware
from .modes import AcpModeMiddleware
from .permissions import AcpPermissionMiddleware
from .session import AcpSessionMiddleware, SnapshotMode
from .thinking import AcpThinkingMiddleware
from .tools import AcpToolMiddleware

__all__ = [
    "AcpMcpMiddleware",
    "AcpModeMiddleware",
    "AcpPermissionMiddleware",
    "AcpSessionMiddleware",
    "AcpThinkingMiddleware",
    "AcpToolMiddleware",
    "SnapshotMode",
    "bind_connection",
    "client_host",
    "current_acp",
]
