"""Serve LangChain, LangGraph and DeepAgents graphs over the Agent Client Protocol.

```python
from langchain.agents import create_agent
from langchain_acp import run_acp

run_acp(create_agent("openai:gpt-5", tools=[...]), name="my-agent")
```
"""

from __future__ import annotations

from ._agent import LangChainAcpOptions, create_acp_agent, create_runner, run_acp
from ._callbacks import AcpCallbackHandler
from ._content import (
    part_to_content,
    to_acp_blocks,
    to_acp_thoughts,
    to_acp_tool_content,
)
from ._delegate import AcpChatModel
from ._mcp_middleware import AcpMcpMiddleware
from ._middleware import bind_connection, client_host, current_acp
from ._modes import AcpModeMiddleware
from ._permission_middleware import AcpPermissionMiddleware
from ._plan import todos_to_plan
from ._render import render_prompt, to_human_message
from ._runner import GraphFactory, LangGraphRunner, SessionContext
from ._session import AcpSessionMiddleware, LangGraphSessionState, SnapshotMode, serialize_state, validate_state
from ._stop import error_code, stop_reason_from_error, stop_reason_from_state
from ._thinking import AcpThinkingMiddleware
from ._tool_middleware import AcpToolMiddleware
from ._usage import usage_from_message

__all__ = [
    "AcpCallbackHandler",
    "AcpChatModel",
    "AcpMcpMiddleware",
    "AcpModeMiddleware",
    "AcpPermissionMiddleware",
    "AcpSessionMiddleware",
    "AcpThinkingMiddleware",
    "AcpToolMiddleware",
    "GraphFactory",
    "LangChainAcpOptions",
    "LangGraphRunner",
    "LangGraphSessionState",
    "SessionContext",
    "SnapshotMode",
    "bind_connection",
    "client_host",
    "create_acp_agent",
    "create_runner",
    "current_acp",
    "error_code",
    "part_to_content",
    "render_prompt",
    "run_acp",
    "serialize_state",
    "stop_reason_from_error",
    "stop_reason_from_state",
    "to_acp_blocks",
    "to_acp_thoughts",
    "to_acp_tool_content",
    "to_human_message",
    "todos_to_plan",
    "usage_from_message",
    "validate_state",
]
