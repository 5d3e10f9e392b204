"""pydantic-acp: serve any `pydantic_ai.Agent` over the Agent Client Protocol.

```python
from pydantic_ai import Agent
from pydantic_acp import run_acp

run_acp(Agent("openai:gpt-5", name="assistant"))
```

Every public name is importable from `pydantic_acp` itself; its modules are private.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._agent import ModelSpec, PydanticAcpOptions, create_acp_agent, run_acp
from ._approvals import CANCELLED_TEXT, DECLINED_TEXT
from ._ask import ask_user
from ._client_tools import CLIENT_TOOL_NAMES, client_toolset
from ._events import OUTCOME_STATUS, EventProjector
from ._history import HISTORY_KEY, PROMPT_ID_KEY, load_history, repair_history, rewind_history, save_history
from ._modes import PLAN_TOOL_NAME, PlanStep, plan_toolset
from ._render import render_prompt
from ._runner import AgentFactory, DepsFactory, PydanticRunner
from ._stop import stop_reason_from_error, stop_reason_from_messages
from ._thinking import thinking_settings

if TYPE_CHECKING:
    from ._delegate import AcpModel, AcpStreamedResponse

_LAZY = {"AcpModel": "_delegate", "AcpStreamedResponse": "_delegate"}
"""Names imported on first use: serving an agent does not need them (delegating to another ACP agent does)."""

__all__ = [
    "CANCELLED_TEXT",
    "CLIENT_TOOL_NAMES",
    "DECLINED_TEXT",
    "HISTORY_KEY",
    "OUTCOME_STATUS",
    "PLAN_TOOL_NAME",
    "PROMPT_ID_KEY",
    "AcpModel",
    "AcpStreamedResponse",
    "AgentFactory",
    "DepsFactory",
    "EventProjector",
    "ModelSpec",
    "PlanStep",
    "PydanticAcpOptions",
    "PydanticRunner",
    "ask_user",
    "client_toolset",
    "create_acp_agent",
    "load_history",
    "plan_toolset",
    "render_prompt",
    "repair_history",
    "rewind_history",
    "run_acp",
    "save_history",
    "stop_reason_from_error",
    "stop_reason_from_messages",
    "thinking_settings",
]


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'pydantic_acp' has no attribute {name!r}")
    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
