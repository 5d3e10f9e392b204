"""Deferred tool calls -> `session/request_permission`, inline in the run.

pydantic-ai defers a call that needs approval (a tool with `requires_approval=True`, or one our
capability marked because the permission policy or the mode says to ask). The run's
`HandleDeferredToolCalls` hook lands in [`resolve_deferred`][pydantic_acp._approvals.resolve_deferred],
which asks the client with the tool call's own id and answers pydantic-ai:

| client's answer | pydantic-ai result | the model reads |
|---|---|---|
| allow once / always | `ToolApproved()` | the tool's output |
| reject once / always | `ToolDenied(DECLINED_TEXT)` | that the user declined |
| cancelled | `ToolDenied(CANCELLED_TEXT)` (the turn then stops) | that the turn was stopped |

Calls deferred for *external* execution cannot run in an editor session; they fail with
[`EXTERNAL_TEXT`][pydantic_acp._approvals.EXTERNAL_TEXT].
"""

from __future__ import annotations

from collections.abc import Mapping

from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import PermissionDecision
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from ._events import EventProjector

__all__ = ["CANCELLED_TEXT", "DECLINED_TEXT", "EXTERNAL_TEXT", "resolve_deferred"]

DECLINED_TEXT = "The user declined this tool call. Do not retry it as is; ask the user or choose another approach."
"""What the model reads when the user rejects a tool call."""

CANCELLED_TEXT = "The user stopped the turn before answering the permission request; the tool did not run."
"""What the model reads (in the next turn's history) when the permission request was cancelled."""

EXTERNAL_TEXT = "This tool is executed outside the agent, which this editor session does not support."
"""What the model reads for a call deferred for external execution."""

_OUTCOME_RESULT: Mapping[str, ToolApproved | ToolDenied] = {
    "allow": ToolApproved(),
    "reject": ToolDenied(DECLINED_TEXT),
    "cancelled": ToolDenied(CANCELLED_TEXT),
}


async def resolve_deferred(
    turn: Turn, projector: EventProjector, requests: DeferredToolRequests
) -> DeferredToolResults:
    """Ask the client about every call awaiting approval, one at a time, and answer pydantic-ai."""
    results = DeferredToolResults()
    for call in requests.approvals:
        state = await projector.announce(call)
        projector.not_run.add(call.tool_call_id)  # until the user allows it (the turn may stop meanwhile)
        if turn.cancelled:
            decision = PermissionDecision(outcome="cancelled")
        else:
            decision = await turn.request_permission(
                call.tool_call_id,
                tool_name=call.tool_name,
                title=state.title,
                kind=state.kind,
                raw_input=state.args or {},
            )
        if decision.outcome == "allow":
            projector.not_run.discard(call.tool_call_id)
        results.approvals[call.tool_call_id] = _OUTCOME_RESULT[decision.outcome]
        results.answered_by[call.tool_call_id] = "acp-client"
    for call in requests.calls:
        await projector.announce(call)
        results.calls[call.tool_call_id] = ToolFailed(EXTERNAL_TEXT)
    return results
