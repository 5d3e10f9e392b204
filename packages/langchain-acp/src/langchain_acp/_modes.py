"""`AcpModeMiddleware`: the standard modes' tool restrictions on every model call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NotRequired

from acp.schema import CurrentModeUpdate
from acpkit_core.permissions import STANDARD_MODES, Mode
from acpkit_core.runner.tool_classification import classify_tool
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.runtime import Runtime

from ._middleware import current_acp

__all__ = ["AcpModeMiddleware", "AcpModeState"]

PLANNING_NOTE = (
    "You are in planning mode: write or update a plan of the steps (with the todo tool if you have one) "
    "and do not change anything yet."
)


class AcpModeState(AgentState[Any]):
    """Agent state with the current mode."""

    acp_mode: NotRequired[str]
    """The current mode id."""


class AcpModeMiddleware(AgentMiddleware[AcpModeState, Any, Any]):
    """Hides the tools the current mode does not allow and tells the model when it may only plan.

    The mode is the session's (inside a server turn), else the state's `acp_mode`, else `default_mode`.
    When the mode differs from the one recorded in the state, `current_mode_update` is sent (over a
    connection bound with `bind_connection`; inside a server turn the server already sent it).
    """

    state_schema = AcpModeState

    def __init__(self, modes: Sequence[Mode] = STANDARD_MODES, *, default_mode: str | None = None) -> None:
        """Offer `modes` (the standard preset by default)."""
        super().__init__()
        self.modes = {m.id: m for m in modes}
        """Modes by id."""
        self.default_mode = default_mode or modes[0].id
        """The mode when nothing else says."""
        self.requested: dict[str, str] = {}
        """Modes set with `set_mode`, by thread id."""

    def set_mode(self, thread_id: str, mode_id: str) -> None:
        """Switch a thread's mode from the next run on (hand-built servers; our server uses `session/set_mode`)."""
        if mode_id not in self.modes:
            raise ValueError(f"unknown mode {mode_id!r}; modes: {', '.join(self.modes)}")
        self.requested[thread_id] = mode_id

    def mode_id(self, state: AcpModeState) -> str:
        """The current mode id."""
        binding = current_acp()
        if binding is not None and binding.turn is not None and binding.turn.session.mode_id in self.modes:
            return str(binding.turn.session.mode_id)
        try:
            thread_id = str(get_config().get("configurable", {}).get("thread_id", ""))
        except RuntimeError:
            thread_id = ""
        if thread_id in self.requested:
            return self.requested[thread_id]
        value = state.get("acp_mode")
        return value if value in self.modes else self.default_mode

    async def abefore_agent(self, state: AcpModeState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Record the mode in the state; announce a change."""
        mode_id = self.mode_id(state)
        if state.get("acp_mode") == mode_id:
            return None
        binding = current_acp()
        if binding is not None and binding.turn is None and binding.send is not None and "acp_mode" in state:
            await binding.send(CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id))
        return {"acp_mode": mode_id}

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> ModelResponse[Any]:
        """Filter the tools by the mode; add the planning note in planning mode."""
        mode = self.modes[self.mode_id(request.state)]  # pyright: ignore[reportArgumentType]
        binding = current_acp()
        kept: list[Any] = []
        for tool in request.tools:
            name = tool.name if isinstance(tool, BaseTool) else str(tool.get("name", ""))
            if binding is not None and binding.turn is not None:
                kind = binding.turn.classify_tool(name)
                allowed = binding.turn.tool_allowed(name, kind) and mode.allows(kind)
            elif binding is not None:  # bound to a connection: its classifier has the kind overrides
                allowed = mode.allows(binding.tools.classifier.classify_tool(name))
            else:
                allowed = mode.allows(classify_tool(name))
            if allowed:
                kept.append(tool)
        overrides: dict[str, Any] = {}
        if len(kept) != len(request.tools):
            overrides["tools"] = kept
        if mode.plan_only:
            base = request.system_message.text if request.system_message is not None else ""
            overrides["system_message"] = SystemMessage(content=f"{base}\n\n{PLANNING_NOTE}".strip())
        return await handler(request.override(**overrides) if overrides else request)
