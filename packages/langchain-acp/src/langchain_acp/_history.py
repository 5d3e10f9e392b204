"""Tool calls a stopped turn left unanswered: answered as not executed when the next turn starts.

A turn cancelled while a tool call waits for the user's permission, or while the tool runs, leaves
the thread with an `AIMessage` whose tool calls have no `ToolMessage`: the graph run was stopped
before it wrote one. A model then reads calls with no result (most providers refuse that
outright), or a later step takes them for done. The next turn's input therefore starts with an
error `ToolMessage` for each of them, saying it did not run (still waiting for permission, or not
started) or did not finish (stopped while it ran), before the user's new message.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, cast

from acpkit_core.runner.tool_lifecycle import NOT_RUN_TEXT, STOPPED_TEXT
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

__all__ = [
    "NOT_RUN_TEXT",
    "STOPPED_TEXT",
    "answer_unanswered",
    "messages_of",
    "remember_unstarted",
    "was_stopped",
]


_KEY = "langgraph.unstarted_calls"
"""`session.state` key: ids of the tool calls a stopped turn never started."""


def remember_unstarted(state: MutableMapping[str, Any], tool_call_ids: Sequence[str]) -> None:
    """Record (in the session's state) which calls of a stopped turn never started."""
    state[_KEY] = list(tool_call_ids)


def was_stopped(state: Mapping[str, Any]) -> bool:
    """True when the session's last turn was stopped (cancelled or failed) and may have left calls unanswered."""
    return _KEY in state


def answer_unanswered(state: MutableMapping[str, Any], messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """An error `ToolMessage` for each call of the thread's last `AIMessage` that has no answer."""
    raw = state.pop(_KEY, None)
    unstarted = {str(i) for i in cast(list[Any], raw)} if isinstance(raw, list) else set[str]()
    last = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)), None)
    if last is None:
        return []
    ai = cast(AIMessage, messages[last])
    answered = {m.tool_call_id for m in messages[last + 1 :] if isinstance(m, ToolMessage)}
    return [
        ToolMessage(
            content=NOT_RUN_TEXT if call["id"] in unstarted else STOPPED_TEXT,
            name=call["name"],
            tool_call_id=call["id"],
            status="error",
        )
        for call in ai.tool_calls
        if call["id"] and call["id"] not in answered
    ]


def messages_of(values: Mapping[str, Any] | None) -> list[BaseMessage]:
    """The `messages` of a graph state (empty when there are none)."""
    found = (values or {}).get("messages")
    return [m for m in cast(list[Any], found) if isinstance(m, BaseMessage)] if isinstance(found, list) else []
