"""Authenticating `acpkit chat` / `acpkit sessions` to an agent that requires it (-32000 on session requests).

The chat passes its whole environment to the agent it starts, so an `env_var` method whose
variables are set here is already satisfied there: the chat calls `authenticate` with it. An
`agent` method (the agent signs in by itself) is tried next. When none can be used, the error says
which variables to set.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

from acp import RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import AuthMethodAgent, EnvVarAuthMethod, InitializeResponse

__all__ = ["AUTH_REQUIRED", "authenticate", "with_authentication"]

AUTH_REQUIRED = -32000
"""The JSON-RPC code of "authentication required"."""

T = TypeVar("T")


def _missing(method: EnvVarAuthMethod) -> list[str]:
    return [v.name for v in method.vars if not v.optional and not os.environ.get(v.name)]


async def authenticate(conn: ClientSideConnection, init: InitializeResponse) -> str:
    """Authenticate with the first usable method; returns its id, or raises -32000 saying what to set."""
    refusals: list[str] = []
    hints: list[str] = []
    for method in init.auth_methods or []:
        if isinstance(method, EnvVarAuthMethod):
            missing = _missing(method)
            if missing:
                link = f", see {method.link}" if method.link else ""
                hints.append(f"set {' and '.join(missing)} ({method.name}{link})")
                continue
        elif not isinstance(method, AuthMethodAgent):
            continue  # terminal methods need the editor's terminal
        try:
            await conn.authenticate(method_id=method.id)
        except RequestError as exc:
            refusals.append(f"{method.id}: {exc}")
            continue
        return method.id
    what = " or ".join(hints) if hints else "no method this chat can use"
    refused = f" ({'; '.join(refusals)})" if refusals else ""
    raise RequestError(AUTH_REQUIRED, f"the agent requires authentication: {what}, then start again{refused}")


async def with_authentication(
    conn: ClientSideConnection, init: InitializeResponse, request: Callable[[], Awaitable[T]]
) -> T:
    """Run `request`; when the agent answers -32000 and offers methods, authenticate once and run it again."""
    try:
        return await request()
    except RequestError as exc:
        if exc.code != AUTH_REQUIRED or not init.auth_methods:
            raise
    await authenticate(conn, init)
    return await request()
