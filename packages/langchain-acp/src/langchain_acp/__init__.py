"""Serve LangChain, LangGraph and DeepAgents graphs over the Agent Client Protocol.

```python
from langchain.agents import create_agent
from langchain_acp import run_acp

run_acp(create_agent("openai:gpt-5", tools=[...]), name="my-agent")
```

ACP middleware for `langchain.agents.create_agent` (real `AgentMiddleware` subclasses):

- `AcpSessionMiddleware`: session id, thread id and turn count in the state; state snapshots;
- `AcpToolMiddleware`: `tool_call` / `tool_call_update` around each tool run;
- `AcpPermissionMiddleware`: asks before gated tool calls; approve, edit, reject with re-plan;
- `AcpModeMiddleware`: agentic / interactive / readonly / planning tool restrictions;
- `AcpMcpMiddleware`: the tools of the session's MCP servers (the editor's `mcpServers`);
- `AcpThinkingMiddleware`: the session's thinking level as a model setting (`reasoning_effort`);
- `AcpModelMiddleware`: the turn's model (the session's or the prompt's choice) on every model call.

`ScriptedChatModel` is an offline chat model that plays a script (text, reasoning, tool calls,
streamed), for examples and tests.

Inside a turn run by `LangGraphRunner` they report to that turn; a hand-built server gives them
a connection and a session id through [`bind_connection`][langchain_acp.bind_connection].
Every public name is importable from `langchain_acp` itself; its modules are private.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._agent import LangChainAcpOptions, create_acp_agent, create_runner, run_acp
from ._ask import ask_user
from ._callbacks import AcpCallbackHandler, ContentBlockMapper, SessionIdExtractor
from ._content import (
    audio_block_to_content,
    embedded_resource_to_content,
    image_block_to_content,
    part_to_content,
    resource_link_to_content,
    text_block_to_content,
    to_acp_blocks,
    to_acp_thoughts,
    to_acp_tool_content,
)
from ._deepagents_names import (
    convert_audio_block_to_content_blocks,
    convert_embedded_resource_block_to_content_blocks,
    convert_image_block_to_content_blocks,
    convert_resource_block_to_content_blocks,
    convert_text_block_to_content_blocks,
)
from ._mcp import McpServerError, McpServerFailure, McpServerLike, McpTools
from ._mcp_middleware import AcpMcpMiddleware
from ._middleware import bind_connection, client_host, current_acp
from ._model_middleware import AcpModelMiddleware
from ._modes import AcpModeMiddleware
from ._permission_middleware import AcpPermissionMiddleware
from ._plan import todos_to_plan
from ._render import render_prompt, to_human_message
from ._runner import GraphFactory, LangGraphRunner, SessionContext
from ._session import (
    SNAPSHOT_META_KEY,
    AcpSessionMiddleware,
    LangGraphSessionState,
    SnapshotLabel,
    SnapshotMode,
    serialize_state,
    validate_state,
)
from ._state_updates import (
    DEFAULT_STATE_UPDATES,
    StateContext,
    StateProjection,
    as_notice,
    as_plan,
    as_session_info,
    as_tool_content,
)
from ._stop import error_code, stop_reason_from_error, stop_reason_from_state
from ._thinking import AcpThinkingMiddleware
from ._tool_middleware import AcpToolMiddleware
from ._usage import usage_from_message

if TYPE_CHECKING:
    from ._delegate import AcpChatModel
    from ._scripted_model import ScriptedChatModel, ScriptedReply, ScriptedToolCall

_LAZY = {
    "AcpChatModel": "_delegate",
    "ScriptedChatModel": "_scripted_model",
    "ScriptedReply": "_scripted_model",
    "ScriptedToolCall": "_scripted_model",
}
"""Names imported on first use: serving a graph needs none of them (each defines a chat model, a
pydantic class that costs milliseconds to create)."""

__all__ = [
    "DEFAULT_STATE_UPDATES",
    "SNAPSHOT_META_KEY",
    "AcpCallbackHandler",
    "AcpChatModel",
    "AcpMcpMiddleware",
    "AcpModeMiddleware",
    "AcpModelMiddleware",
    "AcpPermissionMiddleware",
    "AcpSessionMiddleware",
    "AcpThinkingMiddleware",
    "AcpToolMiddleware",
    "ContentBlockMapper",
    "GraphFactory",
    "LangChainAcpOptions",
    "LangGraphRunner",
    "LangGraphSessionState",
    "McpServerError",
    "McpServerFailure",
    "McpServerLike",
    "McpTools",
    "ScriptedChatModel",
    "ScriptedReply",
    "ScriptedToolCall",
    "SessionContext",
    "SessionIdExtractor",
    "SnapshotLabel",
    "SnapshotMode",
    "StateContext",
    "StateProjection",
    "as_notice",
    "as_plan",
    "as_session_info",
    "as_tool_content",
    "ask_user",
    "audio_block_to_content",
    "bind_connection",
    "client_host",
    "convert_audio_block_to_content_blocks",
    "convert_embedded_resource_block_to_content_blocks",
    "convert_image_block_to_content_blocks",
    "convert_resource_block_to_content_blocks",
    "convert_text_block_to_content_blocks",
    "create_acp_agent",
    "create_runner",
    "current_acp",
    "embedded_resource_to_content",
    "error_code",
    "image_block_to_content",
    "part_to_content",
    "render_prompt",
    "resource_link_to_content",
    "run_acp",
    "serialize_state",
    "stop_reason_from_error",
    "stop_reason_from_state",
    "text_block_to_content",
    "to_acp_blocks",
    "to_acp_thoughts",
    "to_acp_tool_content",
    "to_human_message",
    "todos_to_plan",
    "usage_from_message",
    "validate_state",
]


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'langchain_acp' has no attribute {name!r}")
    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
