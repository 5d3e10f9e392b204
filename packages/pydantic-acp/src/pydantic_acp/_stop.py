"""Why a pydantic-ai run stopped, as an ACP stop reason.

Finish reasons go through the core table (`acpkit_core.runner.stop`); exceptions through `ERROR_STOP_REASONS`.

| pydantic-ai | ACP `stopReason` |
|---|---|
| run finished, last `finish_reason` `stop` / `tool_call` / none | `end_turn` |
| last `finish_reason` `length`, `OutputTokenLimitExceeded` (and `IncompleteToolCall`) | `max_tokens` |
| `UsageLimitExceeded` for a token limit | `max_tokens` |
| `UsageLimitExceeded` for the request, tool-call or cost limit | `max_turn_requests` |
| last `finish_reason` `content_filter`, `ContentFilterError` | `refusal` |
| `RunCancelled` | `cancelled` |

[`stop_reason_from_error`][pydantic_acp.stop_reason_from_error] goes on with the LangChain ACP
middleware specification's table for every other exception (a refused permission `cancelled`,
anything else `end_turn`); the runner itself answers a failed run with a JSON-RPC error.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import StopReason
from acpkit_core.runner.stop import stop_reason_for_failure, stop_reason_from_finish
from pydantic_ai.exceptions import ContentFilterError, OutputTokenLimitExceeded, RunCancelled, UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse

__all__ = ["ERROR_STOP_REASONS", "limit_stop_reason", "stop_reason_from_error", "stop_reason_from_messages"]

ERROR_STOP_REASONS: Sequence[tuple[type[BaseException], StopReason]] = (
    (RunCancelled, "cancelled"),
    (ContentFilterError, "refusal"),
    (OutputTokenLimitExceeded, "max_tokens"),
    (UsageLimitExceeded, "max_turn_requests"),
)
"""Stop reason by the exception a run ended with; the first matching class wins."""

_TOKEN_LIMITS = ("input_tokens_limit", "output_tokens_limit", "total_tokens_limit")


def stop_reason_from_messages(messages: Sequence[ModelMessage]) -> StopReason:
    """The stop reason of a run that finished, from its last model response."""
    for message in reversed(messages):
        if isinstance(message, ModelResponse):
            return stop_reason_from_finish(message.finish_reason)
    return "end_turn"


def stop_reason_from_error(error: BaseException) -> StopReason:
    """The stop reason an exception that ended a run means, by the middleware specification's table.

    `ERROR_STOP_REASONS` first (a cancel, a content filter, a token or request limit), then
    `cancelled` for a refused permission (`PathPolicyError`, `PermissionError`, a provider's 403)
    or `asyncio.CancelledError`, and `end_turn` for anything else.

    For a hand-built server that ends a failed run with a stop reason. `create_acp_agent` does
    not: a turn whose run fails is answered with a JSON-RPC error (-32603 unless the exception
    means something ACP names), so an editor can tell it from a normal end.
    """
    return limit_stop_reason(error) or stop_reason_for_failure(error)


def limit_stop_reason(error: BaseException) -> StopReason | None:
    """The stop reason for a run that raised `error`, or `None` when it is a real failure."""
    if isinstance(error, UsageLimitExceeded) and any(limit in error.message for limit in _TOKEN_LIMITS):
        return "max_tokens"
    for cls, reason in ERROR_STOP_REASONS:
        if isinstance(error, cls):
            return reason
    return None
