"""The session's pydantic-ai message history, kept in `session.state` as JSON.

Stored with `ModelMessagesTypeAdapter` under [`HISTORY_KEY`][pydantic_acp.history.HISTORY_KEY].
Before it is stored, [`repair_history`][pydantic_acp.history.repair_history] makes a history
that a failed or cancelled turn left behind acceptable to any model:

- every tool call gets an answer: a call the stopped turn never started (still waiting for its
  permission, say) a `denied` tool return saying it did not run, any other an `interrupted` one saying
  it did not finish; a tool return that answers no call of the response before it is dropped;
- empty requests and unfinished (empty) responses are dropped;
- nothing from a Python traceback is ever added.
"""

from __future__ import annotations

from collections.abc import Collection, MutableMapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
)

__all__ = [
    "HISTORY_KEY",
    "INTERRUPTED_TOOL_TEXT",
    "NOT_RUN_TOOL_TEXT",
    "load_history",
    "repair_history",
    "save_history",
]

HISTORY_KEY = "pydantic_ai.messages"
"""The key of the message history in `session.state`."""

INTERRUPTED_TOOL_TEXT = "The tool call did not finish: the user stopped the turn before it returned."
"""What the model is told about a tool call the turn never answered."""

NOT_RUN_TOOL_TEXT = "The user stopped the turn before this tool call ran; the tool did not run."
"""What the model is told about a tool call the stopped turn never started."""


def load_history(state: MutableMapping[str, Any]) -> list[ModelMessage]:
    """The messages stored in a session's state (empty when none)."""
    raw = state.get(HISTORY_KEY)
    if not raw:
        return []
    return ModelMessagesTypeAdapter.validate_python(raw)


def save_history(
    state: MutableMapping[str, Any], messages: Sequence[ModelMessage], *, not_run: Collection[str] = ()
) -> None:
    """Repair `messages` and store them as JSON in the session's state (see `repair_history` for `not_run`)."""
    state[HISTORY_KEY] = ModelMessagesTypeAdapter.dump_python(repair_history(messages, not_run=not_run), mode="json")


def repair_history(messages: Sequence[ModelMessage], *, not_run: Collection[str] = ()) -> list[ModelMessage]:
    """A copy of `messages` in which every tool call is answered and nothing is empty or dangling.

    `not_run` names the calls a stopped turn never started: an unanswered one is answered as not run.
    """
    out: list[ModelMessage] = []
    pending: dict[str, str] = {}  # tool_call_id -> tool name, calls of the last response not yet answered
    for message in messages:
        if isinstance(message, ModelResponse):
            if pending:
                out.append(ModelRequest(parts=_interrupted(pending, not_run)))
                pending = {}
            if message.state != "complete":
                # An unfinished response: keep what it said, drop calls that never ran (their args may be cut off).
                kept = [p for p in message.parts if not isinstance(p, ToolCallPart)]
                message = replace(message, parts=kept, state="complete")
            if not message.parts:
                continue
            out.append(message)
            pending = {p.tool_call_id: p.tool_name for p in message.parts if isinstance(p, ToolCallPart)}
        else:
            parts: list[ModelRequestPart] = []
            for part in message.parts:
                tool_call_id = getattr(part, "tool_call_id", None)
                if isinstance(tool_call_id, str):
                    if tool_call_id not in pending:
                        continue  # answers no call of the previous response: a model would refuse it
                    del pending[tool_call_id]
                parts.append(part)
            if pending:
                parts = _interrupted(pending, not_run) + parts
                pending = {}
            if not parts:
                continue
            if parts != message.parts or message.state != "complete":
                message = replace(message, parts=parts, state="complete")
            out.append(message)
    if pending:
        out.append(ModelRequest(parts=_interrupted(pending, not_run)))
    return out


def _interrupted(pending: dict[str, str], not_run: Collection[str]) -> list[ModelRequestPart]:
    return [
        ToolReturnPart(tool_name=name, content=NOT_RUN_TOOL_TEXT, tool_call_id=call_id, outcome="denied")
        if call_id in not_run
        else ToolReturnPart(tool_name=name, content=INTERRUPTED_TOOL_TEXT, tool_call_id=call_id, outcome="interrupted")
        for call_id, name in pending.items()
    ]
