"""Why a graph run ended, as ACP sees it: a stop reason, or a JSON-RPC error code.

- stop reasons: from a model's finish reason (core's table), from the graph's state, from an exception;
- errors: LangChain / LangGraph exceptions -> JSON-RPC error codes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from acp.schema import StopReason
from acpkit_core.errors import error_code as core_error_code
from acpkit_core.runner.stop import stop_reason_for_failure, stop_reason_from_finish
from langchain_core.messages import AIMessage
from langgraph.errors import GraphRecursionError

__all__ = ["error_code", "finish_reason", "limit_stop_reason", "stop_reason_from_error", "stop_reason_from_state"]


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
                return stop_reason_from_finish(finish_reason(message))
    return "end_turn"


def limit_stop_reason(error: BaseException) -> StopReason | None:
    """The stop reason of a run a limit ended (`GraphRecursionError` -> `max_turn_requests`, a model's
    length or content-filter error), or `None` for a failure."""
    if isinstance(error, GraphRecursionError):
        return "max_turn_requests"
    name = type(error).__name__
    if name in ("ContentFilterFinishReasonError",):
        return "refusal"
    if name in ("LengthFinishReasonError",):
        return "max_tokens"
    return None


def stop_reason_from_error(error: BaseException) -> StopReason:
    """The stop reason an exception that ended a graph run means, by the middleware specification's table.

    | exception | stop reason |
    |---|---|
    | `GraphRecursionError` (the recursion limit) | `max_turn_requests` |
    | a model's `LengthFinishReasonError` | `max_tokens` |
    | a model's `ContentFilterFinishReasonError` | `refusal` |
    | `asyncio.CancelledError` | `cancelled` |
    | permission denied (`PathPolicyError`, `PermissionError`, a provider's 403) | `cancelled` |
    | anything else | `end_turn` |

    For a hand-built server that ends a failed run with a stop reason (the spec's "agent
    encounters error": `end_turn`, after telling the user). `create_acp_agent` does not: a turn
    whose graph fails is answered with the JSON-RPC error of [`error_code`][langchain_acp.error_code]
    (-32603 unless the exception means something ACP names), so an editor can tell it from a normal end.
    """
    return limit_stop_reason(error) or stop_reason_for_failure(error)


def error_code(error: BaseException) -> int:
    """The JSON-RPC error code for an exception raised while running a graph.

    Core's one rule ([`acpkit_core.errors.error_code`][acpkit_core.errors.error_code], the table is
    there): -32000 auth required (a provider's `AuthenticationError` or 401), -32002 resource not
    found, -32013 permission denied (a `PathPolicyError`, a provider's 403), the ACP Kit errors as at
    the server boundary, anything else -32603.
    """
    return core_error_code(error)
