"""Authenticating `acpkit chat` / `acpkit sessions` to an agent that requires it (-32000 on session requests).

The chat passes its whole environment to the agent it starts, so an `env_var` method whose
variables are set here is already satisfied there: the chat calls `authenticate` with it. An
`agent` method (the agent signs in by itself) is tried next. A `terminal` method (offered because
the chat advertised `auth.terminal` to an agent it started) comes last: `authenticate` raises
[`TerminalLoginNeeded`][acpkit_core.cli.authenticate.TerminalLoginNeeded], and the chat stops the
agent, runs its command again with the method's arguments and environment in this terminal
([`run_terminal_login`][acpkit_core.cli.authenticate.run_terminal_login]), and reconnects. When
none can be used, the error says which variables to set.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from acp import RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import EnvVarAuthMethod, InitializeResponse, TerminalAuthMethod

from ..auth import ENV_VARS_META_KEY

__all__ = ["AUTH_REQUIRED", "TerminalLoginNeeded", "authenticate", "run_terminal_login", "with_authentication"]

AUTH_REQUIRED = -32000
"""The JSON-RPC code of "authentication required"."""

T = TypeVar("T")


class TerminalLoginNeeded(Exception):
    """Only a terminal method can authenticate: the chat runs it, then reconnects."""

    def __init__(self, method: TerminalAuthMethod) -> None:
        super().__init__(f"log in with {method.name!r} in a terminal")
        self.method = method
        """The method to run."""


async def run_terminal_login(
    argv: Sequence[str], method: TerminalAuthMethod, *, cwd: Path, env: Mapping[str, str]
) -> int:
    """Run the agent's command with the method's `args` and `env` in this terminal; its exit code.

    The process inherits the terminal (stdin, stdout, stderr) so the user talks to the login
    directly; 127 when the command cannot start.
    """
    command = [*argv, *(method.args or [])]
    environ = {**os.environ, **env, **(method.env or {})}
    try:
        process = await asyncio.create_subprocess_exec(*command, cwd=cwd, env=environ)
    except OSError:
        return 127
    return await process.wait()


def _variables(method: object) -> tuple[list[tuple[str, bool]], str | None] | None:
    """`([(name, optional)], link)` of a method that needs environment variables, `None` for another.

    ACP Kit agents describe them under `_meta["acpkit.envVars"]`; agents on an older schema send
    `type: "env_var"` with `vars`.
    """
    if isinstance(method, EnvVarAuthMethod):
        return [(v.name, bool(v.optional)) for v in method.vars], method.link
    meta: object = getattr(method, "field_meta", None)
    details: object = cast("dict[str, Any]", meta).get(ENV_VARS_META_KEY) if isinstance(meta, dict) else None
    if not isinstance(details, dict):
        return None
    fields = cast("dict[str, Any]", details)
    found: list[tuple[str, bool]] = []
    listed: list[object] = fields.get("vars") or []
    for var in listed:
        if isinstance(var, dict) and isinstance(cast("dict[str, Any]", var).get("name"), str):
            entry = cast("dict[str, Any]", var)
            found.append((str(entry["name"]), bool(entry.get("optional"))))
    link: object = fields.get("link")
    return found, link if isinstance(link, str) else None


async def authenticate(conn: ClientSideConnection, init: InitializeResponse, *, terminal: bool = False) -> str:
    """Authenticate with the first usable method; returns its id, or raises -32000 saying what to set.

    With `terminal`, a terminal method is the last resort: `TerminalLoginNeeded` is raised for it.
    """
    refusals: list[str] = []
    hints: list[str] = []
    login: TerminalAuthMethod | None = None
    for method in init.auth_methods or []:
        if isinstance(method, TerminalAuthMethod):
            login = login or method
            continue
        variables = _variables(method)
        if variables is not None:
            names, link = variables
            missing = [name for name, optional in names if not optional and not os.environ.get(name)]
            if missing:
                see = f", see {link}" if link else ""
                hints.append(f"set {' and '.join(missing)} ({method.name}{see})")
                continue
        try:
            await conn.authenticate(method_id=method.id)
        except RequestError as exc:
            refusals.append(f"{method.id}: {exc}")
            continue
        return method.id
    if login is not None and terminal:
        raise TerminalLoginNeeded(login)
    what = " or ".join(hints) if hints else "no method this chat can use"
    refused = f" ({'; '.join(refusals)})" if refusals else ""
    raise RequestError(AUTH_REQUIRED, f"the agent requires authentication: {what}, then start again{refused}")


async def with_authentication(
    conn: ClientSideConnection, init: InitializeResponse, request: Callable[[], Awaitable[T]], *, terminal: bool = False
) -> T:
    """Run `request`; when the agent answers -32000 and offers methods, authenticate once and run it again.

    With `terminal`, raises `TerminalLoginNeeded` when only a terminal method can do it.
    """
    try:
        return await request()
    except RequestError as exc:
        if exc.code != AUTH_REQUIRED or not init.auth_methods:
            raise
    await authenticate(conn, init, terminal=terminal)
    return await request()
