"""The one place where ACP Kit errors leave an agent method as JSON-RPC errors."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

from acp import RequestError

from ..errors import to_request_error

__all__ = ["TurnFailed", "boundary"]

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")

INTERNAL_ERROR = -32603


class TurnFailed(RequestError):
    """`session/prompt`'s answer when the runner raised: `The agent failed: <cause>`.

    The code is [`error_code`][acpkit_core.errors.error_code]'s for the exception: -32603 unless
    it means something ACP names (-32000 auth required, -32002 resource not found, -32013
    permission denied). Raised only after the turn was recorded and its tool calls closed, so an
    editor can tell a failed turn from one that ended, and the transcript still shows what happened.
    """

    def __init__(self, cause: str, *, session_id: str, code: int = INTERNAL_ERROR) -> None:
        super().__init__(code, f"The agent failed: {cause}", {"sessionId": session_id, "cause": cause})
        self.cause = cause
        """The one-line cause: the exception's type and the first line of its message."""


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
