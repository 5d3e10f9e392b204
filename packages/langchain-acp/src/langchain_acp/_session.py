"""`AcpSessionMiddleware`: the ACP session in the agent's state, and optional state snapshots."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NotRequired, TypeAlias

from langchain.agents.middleware import AgentMiddleware, AgentState
from langgraph.config import get_config
from langgraph.runtime import Runtime

from ._middleware import current_acp
from ._stop import LangGraphSessionState, serialize_state

__all__ = ["AcpSessionMiddleware", "AcpSessionState", "SnapshotMode"]

SnapshotMode: TypeAlias = Literal["initial", "final", "all", "none"]
"""Which state snapshots to take: at the start of a run, at its end, both, or none."""


class AcpSessionState(AgentState[Any]):
    """Agent state with the ACP session fields."""

    acp_session_id: NotRequired[str]
    """The ACP session id."""
    acp_thread_id: NotRequired[str]
    """The LangGraph thread id."""
    acp_turn: NotRequired[int]
    """The turn number (1 for the first prompt of the session)."""


class AcpSessionMiddleware(AgentMiddleware[AcpSessionState, Any, Any]):
    """Puts the ACP session id, thread id and turn count into the agent's state.

    With `snapshots`, the JSON form of the state is taken at the start (`initial`) and/or end
    (`final`) of every run and handed to `on_snapshot(label, state)`; inside a server turn the
    last snapshot of each label is also kept in `session.state["snapshots"]`.
    """

    state_schema = AcpSessionState

    def __init__(
        self,
        *,
        snapshots: SnapshotMode = "none",
        on_snapshot: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        """Configure snapshots (`none` by default)."""
        super().__init__()
        self.snapshots: SnapshotMode = snapshots
        """Which snapshots to take."""
        self.on_snapshot = on_snapshot
        """Receives each snapshot."""

    def _snapshot(self, label: Literal["initial", "final"], state: AcpSessionState) -> None:
        if self.snapshots not in (label, "all"):
            return
        data = serialize_state(state)
        if self.on_snapshot is not None:
            self.on_snapshot(label, data)
        binding = current_acp()
        if binding is not None and binding.turn is not None:
            binding.turn.session.state.setdefault("snapshots", {})[label] = data

    async def abefore_agent(self, state: AcpSessionState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Record the session fields (and the initial snapshot)."""
        self._snapshot("initial", state)
        binding = current_acp()
        thread_id = str(get_config().get("configurable", {}).get("thread_id", ""))
        update: dict[str, Any] = {}
        if binding is not None and binding.turn is not None:
            session = binding.turn.session
            info = LangGraphSessionState.extract(session.state, session.id)
            update = {
                "acp_session_id": session.id,
                "acp_thread_id": thread_id or info.thread_id,
                "acp_turn": info.turns,
            }
        elif thread_id:
            update = {"acp_thread_id": thread_id, "acp_turn": int(state.get("acp_turn", 0)) + 1}
        return update or None

    async def aafter_agent(self, state: AcpSessionState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Take the final snapshot."""
        self._snapshot("final", state)
        return None
