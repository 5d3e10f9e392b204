"""Mappers between LangChain / LangGraph values and ACP values, by lookup table.

- stop reasons: from a model's finish reason, from the graph's state, from an exception;
- errors: LangChain / LangGraph exceptions -> JSON-RPC error codes;
- usage: `usage_metadata` -> [`TurnUsage`][acpkit_core.runner.TurnUsage];
- plans: `write_todos` items -> [`PlanItem`][acpkit_core.runner.PlanItem];
- session state: what this adapter keeps in `session.state` (extract, validate, serialize).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from acp.schema import PlanEntryStatus, StopReason
from acpkit_core.errors import to_request_error
from acpkit_core.runner import PlanItem, TurnUsage
from acpkit_core.stop import stop_reason_for_finish
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.errors import GraphRecursionError

__all__ = [
    "LangGraphSessionState",
    "error_code",
    "finish_reason",
    "serialize_state",
    "stop_reason_from_error",
    "stop_reason_from_state",
    "todos_to_plan",
    "usage_from_message",
    "validate_state",
]


def finish_reason(message: AIMessage) -> str | None:
    """The provider's finish reason of a model response, when it reports one."""
    meta = message.response_metadata
    for key in ("finish_reason", "stop_reason"):
        value = meta.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def stop_reason_from_state(values: Mapping[str, Any] | None) -> StopReason:
    """The stop reason of a finished graph run, from its last AI message."""
    if not values:
        return "end_turn"
    messages = values.get("messages")
    if isinstance(messages, list):
        for message in reversed(cast(list[Any], messages)):
            if isinstance(message, AIMessage):
                return stop_reason_for_finish(finish_reason(message))
    return "end_turn"


def stop_reason_from_error(error: BaseException) -> StopReason | None:
    """The stop reason an exception means (`GraphRecursionError` -> `max_turn_requests`), or `None`."""
    if isinstance(error, GraphRecursionError):
        return "max_turn_requests"
    name = type(error).__name__
    if name in ("ContentFilterFinishReasonError",):
        return "refusal"
    if name in ("LengthFinishReasonError",):
        return "max_tokens"
    return None


def error_code(error: BaseException) -> int:
    """The JSON-RPC error code for an exception raised while running a graph.

    ACP Kit's own errors map exactly as at the server boundary (`acpkit_core.errors.to_request_error`);
    provider authentication errors are -32000 (auth required); anything else is -32603.
    """
    mapped = to_request_error(error) if isinstance(error, Exception) else None
    if mapped is not None:
        return mapped.code
    if type(error).__name__ in ("AuthenticationError", "PermissionDeniedError"):
        return -32000
    return -32603


def usage_from_message(message: BaseMessage) -> TurnUsage | None:
    """The usage of one model response from its `usage_metadata`, or `None` if it has none."""
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None
    usage = cast(Mapping[str, Any], usage)
    details_in = cast(Mapping[str, Any], usage.get("input_token_details") or {})
    details_out = cast(Mapping[str, Any], usage.get("output_token_details") or {})
    return TurnUsage(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        thought_tokens=details_out.get("reasoning"),
        cached_read_tokens=details_in.get("cache_read"),
        cached_write_tokens=details_in.get("cache_creation"),
    )


_TODO_STATUS: Mapping[str, PlanEntryStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "completed": "completed",
    "done": "completed",
}


def todos_to_plan(todos: Sequence[Any]) -> list[PlanItem]:
    """`write_todos` items (`{"content", "status"}` dicts or objects) -> plan entries."""
    plan: list[PlanItem] = []
    for todo in todos:
        fields: Mapping[str, Any] = cast(Mapping[str, Any], todo if isinstance(todo, Mapping) else vars(todo))

        def get(key: str, default: Any = None, fields: Mapping[str, Any] = fields) -> Any:
            return fields.get(key, default)

        content = get("content") or get("title") or get("task")
        if not content:
            continue
        status = _TODO_STATUS.get(str(get("status", "pending")), "pending")
        priority = get("priority", "medium")
        plan.append(
            PlanItem(
                content=str(content),
                status=status,
                priority=priority if priority in ("high", "medium", "low") else "medium",
            )
        )
    return plan


@dataclass(frozen=True, slots=True, kw_only=True)
class LangGraphSessionState:
    """What the LangGraph runner keeps in `session.state["langgraph"]`."""

    thread_id: str
    """The LangGraph thread id (the ACP session id)."""
    turns: int = 0
    """Turns run so far."""

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
        return cls(thread_id=session_id, turns=turns if isinstance(turns, int) and turns >= 0 else 0)

    def serialize(self) -> dict[str, Any]:
        """JSON for `session.state[KEY]`."""
        return {"thread_id": self.thread_id, "turns": self.turns}

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
