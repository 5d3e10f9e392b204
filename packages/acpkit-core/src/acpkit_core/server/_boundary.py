"""The one place where ACP Kit errors become JSON-RPC errors."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

from acp import RequestError

from ..errors import ConfigError, PromptError, SessionBusyError, SessionNotFoundError, UserError
from ..store import InvalidCursorError

__all__ = ["TurnFailed", "boundary", "to_request_error"]

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")

INTERNAL_ERROR = -32603
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
RESOURCE_NOT_FOUND = -32002


class TurnFailed(RequestError):
    """`session/prompt`'s answer when the runner raised: -32603, `The agent failed: <cause>`.

    Raised only after the turn was recorded and its tool calls closed, so an editor can tell a
    failed turn from one that ended, and the transcript still shows what happened.
    """

    def __init__(self, cause: str, *, session_id: str) -> None:
        super().__init__(INTERNAL_ERROR, f"The agent failed: {cause}", {"sessionId": session_id, "cause": cause})
        self.cause = cause
        """The one-line cause: the exception's type and the first line of its message."""


def to_request_error(exc: Exception) -> RequestError | None:
    """The JSON-RPC error for an ACP Kit error, `None` for anything else."""
    if isinstance(exc, SessionNotFoundError):
        return RequestError(RESOURCE_NOT_FOUND, str(exc), {"sessionId": exc.session_id})
    if isinstance(exc, PromptError):
        return RequestError(INVALID_PARAMS, str(exc), {"index": exc.index, "field": exc.field, "reason": exc.reason})
    if isinstance(exc, ConfigError | InvalidCursorError):
        return RequestError(INVALID_PARAMS, str(exc))
    if isinstance(exc, SessionBusyError):
        return RequestError(INVALID_REQUEST, str(exc))
    if isinstance(exc, UserError):
        return RequestError(-32603, f"agent misconfigured: {exc}")
    return None


def boundary(
    method: Callable[Concatenate[S, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """Wrap an agent method so ACP Kit errors leave as `acp.RequestError` with the right code."""

    @functools.wraps(method)
    async def wrapper(self: S, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(self, *args, **kwargs)
        except RequestError:
            raise
        except Exception as exc:
            mapped = to_request_error(exc)
            if mapped is None:
                raise
            raise mapped from exc

    return wrapper
