"""LangChain human-in-the-loop interrupts -> ACP permission requests -> `Command(resume=...)`.

`HumanInTheLoopMiddleware` pauses a graph in one of two shapes:

- batched: one interrupt whose value lists `action_requests` (name, args, no tool call id),
  answered with `{"decisions": [...]}` in the same order;
- per call: one interrupt per gated call, value `{"type": "tool_approval", "tool_call_id", ...}`,
  answered with a single decision.

Both are asked with the tool call's own id (for the batched shape, found by matching the
requests against the last AI message's tool calls, then against the calls already shown that never
started: a subagent's gated call is not in the parent's messages), and answered keyed by interrupt id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from acpkit_core.runner.types import PermissionDecision
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Interrupt

__all__ = ["Ask", "is_hitl", "plan_questions", "to_decision"]


@dataclass(frozen=True, slots=True)
class Ask:
    """One question for the user: a gated tool call."""

    interrupt_id: str
    """The interrupt it belongs to."""
    tool_call_id: str
    """The tool call's own id."""
    name: str
    """Tool name."""
    args: dict[str, Any]
    """Tool arguments."""
    batched: bool
    """True for the batched shape (the answer goes in a `decisions` list)."""


def is_hitl(value: Any) -> bool:
    """True when an interrupt value is one of LangChain's two HITL shapes."""
    if not isinstance(value, Mapping):
        return False
    value = cast(Mapping[str, Any], value)
    return value.get("type") == "tool_approval" or isinstance(value.get("action_requests"), list)


def plan_questions(
    interrupts: Sequence[Interrupt],
    messages: Sequence[Any],
    pending_calls: Sequence[tuple[str, str, Mapping[str, Any]]] = (),
) -> list[Ask] | None:
    """The questions to ask for these interrupts, or `None` when one of them is not a HITL interrupt.

    `pending_calls` are `(id, name, args)` of the turn's tool calls shown but not started (see
    `ToolCalls.pending`): a batched request is matched against them after the last AI
    message's calls, so a subagent's gated call is asked with its own id.
    """
    asks: list[Ask] = []
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    last_ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    open_calls: list[dict[str, Any]] = [
        {"id": c["id"], "name": c["name"], "args": c["args"]}
        for c in (last_ai.tool_calls if last_ai else [])
        if c["id"] and c["id"] not in answered
    ]
    in_messages = {c["id"] for c in open_calls}
    open_calls += [
        {"id": i, "name": n, "args": dict(a)} for i, n, a in pending_calls if i not in in_messages and i not in answered
    ]
    used: set[str] = set()
    for intr in interrupts:
        value = intr.value
        if not is_hitl(value):
            return None
        value = cast(Mapping[str, Any], value)
        if value.get("type") == "tool_approval":
            asks.append(
                Ask(intr.id, str(value["tool_call_id"]), str(value["name"]), dict(value.get("args") or {}), False)
            )
            continue
        for n, request in enumerate(cast(list[Mapping[str, Any]], value["action_requests"])):
            name, args = str(request["name"]), dict(request.get("args") or {})
            match = next(
                (c for c in open_calls if c["id"] not in used and c["name"] == name and c["args"] == args), None
            )
            match = match or next((c for c in open_calls if c["id"] not in used and c["name"] == name), None)
            tool_call_id = match["id"] if match and match["id"] else f"{intr.id}-{n}"
            used.add(tool_call_id)
            asks.append(Ask(intr.id, tool_call_id, name, args, True))
    return asks


def to_decision(
    decision: PermissionDecision, *, edited_args: Mapping[str, Any] | None = None, name: str
) -> dict[str, Any]:
    """A LangChain HITL decision for the client's answer (`approve`, `edit` with new args, `reject`)."""
    if decision.allowed:
        if edited_args is not None:
            return {"type": "edit", "edited_action": {"name": name, "args": dict(edited_args)}}
        return {"type": "approve"}
    return {"type": "reject", "message": "The user declined this tool call in the editor."}


def resume_value(asks: Sequence[Ask], decisions: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The `Command(resume=...)` map, keyed by interrupt id, for the decisions by tool call id."""
    resume: dict[str, Any] = {}
    for ask in asks:
        decision = decisions[ask.tool_call_id]
        if ask.batched:
            resume.setdefault(ask.interrupt_id, {"decisions": []})["decisions"].append(decision)
        else:
            resume[ask.interrupt_id] = decision
    return resume
