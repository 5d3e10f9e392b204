"""The session state this adapter keeps, and `AcpSessionMiddleware` (the ACP session in the agent's state).

- [`LangGraphSessionState`][langchain_acp.LangGraphSessionState]: what the runner keeps in `session.state`;
- `serialize_state` / `validate_state`: an agent state as JSON and back (state snapshots);
- `AcpSessionMiddleware`: session id, thread id and turn count in the agent's state, optional snapshots.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypeAlias, cast

from acp.schema import SessionInfoUpdate
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from ._middleware import current_acp
from ._rewind import Start

__all__ = [
    "SNAPSHOT_META_KEY",
    "AcpSessionMiddleware",
    "AcpSessionState",
    "LangGraphSessionState",
    "SnapshotLabel",
    "SnapshotMode",
    "serialize_state",
    "validate_state",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class LangGraphSessionState:
    """What the LangGraph runner keeps in `session.state["langgraph"]`."""

    thread_id: str
    """The LangGraph thread id (the ACP session id)."""
    turns: int = 0
    """Turns run so far."""
    start: Start | None = None
    """A rewind's result, applied when the next turn begins: the checkpoint the thread goes on from."""
    seeded: bool = False
    """A forked session's thread holds its own conversation already (its parent's was copied in)."""

    KEY = "langgraph"

    @classmethod
    def extract(cls, state: Mapping[str, Any], session_id: str) -> LangGraphSessionState:
        """Read (and validate) the adapter's state, or a fresh one for this session."""
        raw = state.get(cls.KEY)
        if not isinstance(raw, Mapping):
            return cls(thread_id=session_id)
        raw = cast(Mapping[str, Any], raw)
        turns = raw.get("turns")
        # The thread is always the session's own: a forked session's state is a copy of its parent's.
        return cls(
            thread_id=session_id,
            turns=turns if isinstance(turns, int) and turns >= 0 else 0,
            start=Start.from_json(raw.get("start")),
            seeded=raw.get("seeded") is True and raw.get("thread_id") == session_id,
        )

    def serialize(self) -> dict[str, Any]:
        """JSON for `session.state[KEY]`."""
        out: dict[str, Any] = {"thread_id": self.thread_id, "turns": self.turns}
        if self.start is not None:
            out["start"] = self.start.to_json()
        if self.seeded:
            out["seeded"] = True
        return out

    def store(self, state: dict[str, Any]) -> None:
        """Write this into a session's state."""
        state[self.KEY] = self.serialize()


def serialize_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON-able copy of an agent state (messages as LangChain's message dicts)."""
    from langchain_core.messages import message_to_dict

    out: dict[str, Any] = {}
    for key, value in state.items():
        if key == "jump_to":
            continue
        if isinstance(value, list) and all(isinstance(v, BaseMessage) for v in cast(list[Any], value)):
            out[key] = [message_to_dict(m) for m in cast(list[BaseMessage], value)]
        else:
            out[key] = _json_value(value)
    return out


def validate_state(data: Mapping[str, Any]) -> dict[str, Any]:
    """Rebuild an agent state from `serialize_state` output (messages back to message objects)."""
    from langchain_core.messages import messages_from_dict

    out = dict(data)
    messages = out.get("messages")
    if isinstance(messages, list):
        out["messages"] = messages_from_dict(cast(list[dict[str, Any]], messages))
    return out


def _json_value(value: Any) -> Any:
    import json

    try:
        json.dumps(value)
    except (TypeError, ValueError):
        if isinstance(value, BaseMessage):
            from langchain_core.messages import message_to_dict

            return message_to_dict(value)
        return repr(value)
    return value


SnapshotMode: TypeAlias = Literal["initial", "final", "all", "none"]
"""Which state snapshots to take: at the start of a run, at its end, at every step, or none."""

SnapshotLabel: TypeAlias = Literal["initial", "model", "tools", "final"]
"""When a snapshot was taken: the run's start, after a model response, after a tools step, the run's end."""

SNAPSHOT_META_KEY = "acpkit.snapshot"
"""The `_meta` key of the `session_info_update` that carries a snapshot to the client."""


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

    Served by `LangGraphRunner`, the session is the turn's; in a hand-built server, the one given
    to `bind_connection(conn, session_id)` (the thread id is the run's `thread_id`, the turn count
    goes up by one per run on that thread).

    With `snapshots`, the JSON form of the state (`serialize_state`) is taken at the start of
    every run (`initial`), at its end (`final`), or with `all` at every step of the agent loop
    as well: after each model response (`model`) and after each tools step (`tools`, taken
    before the next model call). Each snapshot is handed to `on_snapshot(label, state)`; inside a
    server turn the last snapshot of each label is also kept in `session.state["snapshots"]`.

    With `send_snapshots=True` each snapshot also goes to the client, as a `session_info_update`
    whose `_meta` holds it under `acpkit.snapshot` (a client that does not know the key sees an
    update with nothing to show):

    ```json
    {"sessionUpdate": "session_info_update",
     "_meta": {"acpkit.snapshot": {"label": "model", "step": 2, "threadId": "...", "state": {"messages": [...]}}}}
    ```

    `step` counts the snapshots of the run from 1; `state` is `serialize_state`'s output
    (messages as LangChain message dicts).
    """

    state_schema = AcpSessionState

    def __init__(
        self,
        *,
        snapshots: SnapshotMode = "none",
        on_snapshot: Callable[[str, dict[str, Any]], None] | None = None,
        send_snapshots: bool = False,
    ) -> None:
        """Configure snapshots (`none` by default)."""
        super().__init__()
        self.snapshots: SnapshotMode = snapshots
        """Which snapshots to take."""
        self.on_snapshot = on_snapshot
        """Receives each snapshot."""
        self.send_snapshots = send_snapshots
        """Send each snapshot to the client as a `session_info_update` with `_meta`."""
        self._steps: dict[str, int] = {}

    def _wanted(self, label: SnapshotLabel) -> bool:
        if self.snapshots == "all":
            return True
        return self.snapshots == label

    async def _snapshot(self, label: SnapshotLabel, state: AcpSessionState) -> None:
        if not self._wanted(label):
            return
        data = serialize_state(state)
        thread_id = _thread_id()
        step = self._steps[thread_id] = 1 if label == "initial" else self._steps.get(thread_id, 0) + 1
        if label == "final":
            del self._steps[thread_id]
        if self.on_snapshot is not None:
            self.on_snapshot(label, data)
        binding = current_acp()
        if binding is None:
            return
        if binding.turn is not None:
            binding.turn.session.state.setdefault("snapshots", {})[label] = data
        if self.send_snapshots and binding.send is not None:
            payload = {"label": label, "step": step, "threadId": thread_id, "state": data}
            await binding.send(
                SessionInfoUpdate(session_update="session_info_update", field_meta={SNAPSHOT_META_KEY: payload})
            )

    async def abefore_agent(self, state: AcpSessionState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Record the session fields (and the initial snapshot)."""
        await self._snapshot("initial", state)
        binding = current_acp()
        thread_id = _thread_id()
        update: dict[str, Any] = {}
        if binding is not None and binding.turn is not None:
            session = binding.turn.session
            info = LangGraphSessionState.extract(session.state, session.id)
            update = {
                "acp_session_id": session.id,
                "acp_thread_id": thread_id or info.thread_id,
                "acp_turn": info.turns,
            }
        else:  # a hand-built server: the session `bind_connection` was given, the run's thread
            if binding is not None and binding.session_id is not None:
                update["acp_session_id"] = binding.session_id
            if thread_id:
                update["acp_thread_id"] = thread_id
            if update:
                update["acp_turn"] = int(state.get("acp_turn", 0)) + 1
        return update or None

    async def abefore_model(self, state: AcpSessionState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """After a tools step (the last message is a tool result): the `tools` snapshot."""
        messages = state.get("messages") or []
        if messages and isinstance(messages[-1], ToolMessage):
            await self._snapshot("tools", state)
        return None

    async def aafter_model(self, state: AcpSessionState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """After a model response: the `model` snapshot."""
        await self._snapshot("model", state)
        return None

    async def aafter_agent(self, state: AcpSessionState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Take the final snapshot."""
        await self._snapshot("final", state)
        return None


def _thread_id() -> str:
    try:
        return str(get_config().get("configurable", {}).get("thread_id", ""))
    except RuntimeError:
        return ""
