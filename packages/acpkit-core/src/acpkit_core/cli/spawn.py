"""Start an agent process and connect the SDK's client side to its stdio.

The agent runs in its own process group, so a Ctrl-C typed in `acpkit chat` reaches the chat (which
turns it into `session/cancel`) and not the agent. It inherits the whole environment (API keys
included) and our stderr, so its logs and start-up errors show in the terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import sys
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO, cast

from acp import PROTOCOL_VERSION, Client
from acp.client.connection import ClientSideConnection
from acp.connection import StreamEvent
from acp.schema import Implementation, InitializeResponse

from .local import CAPABILITIES, LocalClient

__all__ = [
    "AgentExited",
    "agent_command",
    "agent_env",
    "client_info",
    "connect",
    "initialize",
    "json_observer",
]

_STDIO_LIMIT = 50 * 1024 * 1024
_SHUTDOWN_SECONDS = 2.0


class AgentExited(Exception):
    """The agent process ended before answering."""

    def __init__(self, code: int | None) -> None:
        super().__init__(f"the agent exited before answering (exit code {code})")
        self.code = code
        """The agent's exit code, if it ended."""


def agent_command(args: argparse.Namespace) -> list[str]:
    """The agent command line: `--agent CMD` split like a shell would, else `acpkit run TARGET` with our options."""
    if args.agent:
        return shlex.split(args.agent)
    argv = [sys.executable, "-m", "acpkit_core.cli", "run", _absolute(args.target), "--log-level", args.log_level]
    if args.store:
        argv += ["--store", args.store]
    if args.name:
        argv += ["--name", args.name]
    if args.cwd:
        argv += ["--cwd", args.cwd]
    return argv


def _absolute(target: str) -> str:
    """A file target made absolute, so the agent (started in `--cwd`) finds it from where the user typed it."""
    head, sep, tail = target.rpartition(":")
    base, suffix = (head, sep + tail) if sep and head and tail.replace(".", "_").isidentifier() else (target, "")
    path = Path(base)
    if path.is_file() and not path.is_absolute():
        return str(path.resolve()) + suffix
    return target


def agent_env(args: argparse.Namespace) -> dict[str, str]:
    """Extra environment for our own `acpkit run`: no framework start-up banners in the chat."""
    return {} if args.agent else {"PYDANTIC_AI_NO_BANNER": os.environ.get("PYDANTIC_AI_NO_BANNER", "1")}


def client_info() -> Implementation:
    """How `acpkit chat` introduces itself in `initialize`."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("acpkit-core")
    except PackageNotFoundError:
        ours = "0.0.0"
    return Implementation(name="acpkit-chat", title="ACP Kit chat", version=ours)


def json_observer(out: TextIO) -> Callable[[StreamEvent], None]:
    """An SDK stream observer writing each raw JSON-RPC message as one JSON line (`--json`)."""

    def observe(event: StreamEvent) -> None:
        direction = "client->agent" if event.direction.value == "outgoing" else "agent->client"
        out.write(json.dumps({"direction": direction, "message": event.message}, ensure_ascii=False) + "\n")
        out.flush()

    return observe


@asynccontextmanager
async def connect(
    argv: list[str],
    client: LocalClient,
    *,
    cwd: Path,
    observers: list[Callable[[StreamEvent], None]] | None = None,
    env: dict[str, str] | None = None,
) -> AsyncGenerator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """Spawn `argv` (with our environment plus `env`) and yield the SDK client connection to it.

    On exit, close the agent's stdin and end the process (terminate, then kill, after 2 s each).
    """
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            limit=_STDIO_LIMIT,
            start_new_session=True,
        )
    except OSError as exc:
        raise AgentExited(127) from exc
    assert process.stdin is not None and process.stdout is not None
    kwargs: dict[str, Any] = {"observers": list(observers)} if observers else {}
    conn = ClientSideConnection(
        cast(Client, client), process.stdin, process.stdout, use_unstable_protocol=True, **kwargs
    )
    try:
        yield conn, process
    finally:
        await client.close()
        with contextlib.suppress(Exception):
            await conn.close()
        await _stop(process)


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), _SHUTDOWN_SECONDS)
        return
    except TimeoutError:
        pass
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), _SHUTDOWN_SECONDS)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


async def initialize(conn: ClientSideConnection, process: asyncio.subprocess.Process) -> InitializeResponse:
    """Send `initialize` advertising fs and terminal; raise `AgentExited` if the agent dies first."""
    try:
        return await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=CAPABILITIES, client_info=client_info()
        )
    except ConnectionError:
        code = await process.wait()
        raise AgentExited(code) from None
