"""Why a graph run ended, as ACP sees it: a stop reason, or a JSON-RPC error code.

- stop reasons: from a model's finish reason (core's table), from the graph's state, from an exception;
- errors: LangChain / LangGraph exceptions -> JSON-RPC error codes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from acp.schema import StopReason
from acpkit_core.errors import error_code as core_error_code
from acpkit_core.stop import stop_reason_from_finish
from langchain_core.messages import AIMessage
from langgraph.errors import GraphRecursionError

__all__ = ["error_code", "finish_reason", "stop_reason_from_error", "stop_reason_from_state"]


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

    Core's one rule ([`acpkit_core.errors.error_code`][acpkit_core.errors.error_code], the table is
    there): -32000 auth required (a provider's `AuthenticationError` or 401), -32002 resource not
    found, -32013 permission denied (a `PathPolicyError`, a provider's 403), the ACP Kit errors as at
    the server boundary, anything else -32603.
    """
    return core_error_code(error)
