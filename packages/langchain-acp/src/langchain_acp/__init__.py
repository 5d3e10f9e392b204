"""Serve LangChain, LangGraph and DeepAgents graphs over the Agent Client Protocol.

```python
from langchain.agents import create_agent
from langchain_acp import run_acp

run_acp(create_agent("openai:gpt-5", tools=[...]), name="my-agent")
```
"""

from __future__ import annotations

from .acp_chat_model import AcpChatModel
from .agent import LangChainAcpOptions, create_acp_agent, create_runner, run_acp
from .callbacks import AcpCallbackHandler
from .content import (
    part_to_content,
    to_acp_blocks,
    to_acp_thoughts,
    to_acp_tool_content,
)
from .mappers import (
    LangGraphSessionState,
    error_code,
    serialize_state,
    stop_reason_from_error,
    stop_reason_from_state,
    todos_to_plan,
    usage_from_message,
    validate_state,
)
from .middleware import (
    AcpMcpMiddleware,
    AcpModeMiddleware,
    AcpPermissionMiddleware,
    AcpSessionMiddleware,
    AcpThinkingMiddleware,
    AcpToolMiddleware,
    bind_connection,
    client_host,
    current_acp,
)
from .render import render_prompt, to_human_message
from .runner import GraphFactory, LangGraphRunner, SessionContext

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
