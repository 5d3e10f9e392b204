"""Model finish reasons as ACP stop reasons: one table for every framework; what a limit's stop says.

Providers spell the reason a model stopped differently (OpenAI `length`, Anthropic
`max_tokens`, Google `MAX_TOKENS`, pydantic-ai's normalised `length`); each adapter reads the
spelling its framework reports and asks [`stop_reason_from_finish`][acpkit_core.runner.stop.stop_reason_from_finish].

[`stop_reason_for_failure`][acpkit_core.runner.stop.stop_reason_for_failure] is the stop reason the
LangChain ACP middleware specification's error table gives an exception that is not a limit: a
cancellation or a refused permission is `cancelled`, anything else `end_turn`. Each adapter's public
`stop_reason_from_error` ends with it. A turn served by the core server that fails is still
answered with a JSON-RPC error (-32603, or the code `acpkit_core.errors.error_code` gives), never
with a stop reason: the mapping is for a hand-built server that chooses to end such a turn normally.

A turn stopped by a limit ends with a message naming the limit and how to raise it:
[`request_limit_message`][acpkit_core.runner.stop.request_limit_message] for the per-turn request
limit every adapter counts (`max_turn_requests`), [`limit_message`][acpkit_core.runner.stop.limit_message]
for a framework's own limits (pydantic-ai's usage limits, LangGraph's recursion limit).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from acp.schema import StopReason

from ..errors import PERMISSION_DENIED, error_code
from ..limits import MAX_TURN_REQUESTS

__all__ = [
    "FINISH_REASONS",
    "limit_message",
    "request_limit_message",
    "stop_reason_for_failure",
    "stop_reason_from_finish",
]

FINISH_REASONS: Mapping[str, StopReason] = {
    # OpenAI and compatible; pydantic-ai's normalised values
    "stop": "end_turn",
    "tool_calls": "end_turn",
    "tool_call": "end_turn",
    "function_call": "end_turn",
    "error": "end_turn",
    "length": "max_tokens",
    "content_filter": "refusal",
    # Anthropic
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "end_turn",
    "pause_turn": "end_turn",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
    # Google (compared case-insensitively)
    "safety": "refusal",
    "recitation": "refusal",
    "prohibited_content": "refusal",
    "blocklist": "refusal",
    "spii": "refusal",
    "image_safety": "refusal",
}
"""Model finish reasons (OpenAI, Anthropic, Google, pydantic-ai spellings) -> ACP stop reasons."""


def stop_reason_from_finish(reason: str | None) -> StopReason:
    """The ACP stop reason for a model's finish reason; unknown or missing reasons are `end_turn`."""
    if not reason:
        return "end_turn"
    return FINISH_REASONS.get(reason) or FINISH_REASONS.get(reason.lower(), "end_turn")


def stop_reason_for_failure(error: BaseException) -> StopReason:
    """The stop reason of an exception that is no limit, by the middleware specification's table.

    | exception | stop reason |
    |---|---|
    | `asyncio.CancelledError` (the run was cancelled) | `cancelled` |
    | permission denied: `PathPolicyError`, `PermissionError`, a provider's 403 (`error_code` -32013) | `cancelled` |
    | anything else | `end_turn` |

    Exceptions are recognised by type and status, never by words in their message.
    """
    if isinstance(error, asyncio.CancelledError) or error_code(error) == PERMISSION_DENIED:
        return "cancelled"
    return "end_turn"


def request_limit_message(limit: int) -> str:
    """What a turn stopped by the per-turn request limit (`max_turn_requests`) ends with: the limit and
    every way to raise it."""
    return MAX_TURN_REQUESTS.stop_message(limit)


def limit_message(what: str, how: str) -> str:
    """What a turn stopped by a framework's own limit ends with: `what` stopped it, `how` to raise it."""
    return f"The turn stopped: {what}. {how}; send a new prompt to go on."
