"""pydantic-acp: serve any `pydantic_ai.Agent` over the Agent Client Protocol.

```python
from pydantic_ai import Agent
from pydantic_acp import run_acp

run_acp(Agent("openai:gpt-5", name="assistant"))
```
"""

from __future__ import annotations

from ._agent import ModelSpec, PydanticAcpOptions, create_acp_agent, run_acp
from .acp_model import AcpModel, AcpStreamedResponse
from .approvals import CANCELLED_TEXT, DECLINED_TEXT
from .client_tools import CLIENT_TOOL_NAMES, client_toolset
from .events import OUTCOME_STATUS, EventProjector
from .history import HISTORY_KEY, load_history, repair_history, save_history
from .modes import PLAN_TOOL_NAME, PlanStep, plan_toolset
from .render import render_prompt
from .runner import AgentFactory, DepsFactory, PydanticRunner
from .stop import stop_reason_for_error, stop_reason_for_messages
from .thinking import thinking_settings

__all__ = [
    "CANCELLED_TEXT",
    "CLIENT_TOOL_NAMES",
    "DECLINED_TEXT",
    "HISTORY_KEY",
    "OUTCOME_STATUS",
    "PLAN_TOOL_NAME",
    "AcpModel",
    "AcpStreamedResponse",
    "AgentFactory",
    "DepsFactory",
    "EventProjector",
    "ModelSpec",
    "PlanStep",
    "PydanticAcpOptions",
    "PydanticRunner",
    "client_toolset",
    "create_acp_agent",
    "load_history",
    "plan_toolset",
    "render_prompt",
    "repair_history",
    "run_acp",
    "save_history",
    "stop_reason_for_error",
    "stop_reason_for_messages",
    "thinking_settings",
]
