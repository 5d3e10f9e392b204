"""Start an agent process and connect the SDK's client side to its stdio.

The agent runs in its own process group, so a Ctrl-C typed in `acpkit chat` reaches the chat (which
turns it into `session/cancel`) and not the agent. It inherits the whole environment (API keys
included). Its stderr goes to the chat's log file (see `agent_streams`); a program that is missing, or
that is not an ACP agent, gets one clear message (`AgentExited`).
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO, cast

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.client.connection import ClientSideConnection
from acp.connection import StreamEvent
from acp.schema import Implementation, InitializeResponse

from ..server._sdk import tracked
from ..server.requests import Incoming
from .agent_streams import AgentLog, protocol_reader
from .local import SPAWNED_CAPABILITIES, LocalClient
from .sanitize import printable

__all__ = [
    "AgentExited",
    "AgentProcess",
    "agent_command",
    "agent_env",
    "chat_cancel",
    "client_info",
    "connect",
    "initialize",
    "json_observer",
]

_STDIO_LIMIT = 50 * 1024 * 1024
_SHUTDOWN_SECONDS = 2.0
_STRAY_KEPT = 5


class AgentExited(Exception):
    """The agent could not start, or is not an ACP agent; the message says why, in one paragraph."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        """The agent's exit code, if it ended."""


@dataclass
class AgentProcess:
    """The running agent: its process, its log, and what it printed that was not JSON-RPC."""

    argv: list[str]
    """The command line."""
    process: asyncio.subprocess.Process
    """The subprocess."""
    log: AgentLog
    """Its stderr (and stray stdout lines)."""
    stray: list[str] = field(default_factory=list[str])
    """The first lines of stdout that were not JSON-RPC messages."""

    @property
    def name(self) -> str:
        """The program, as the user typed it."""
        return self.argv[0] if self.argv else "the agent"

    def on_stray(self, line: str) -> None:
        """A stdout line that is not JSON-RPC: keep the first few, log all."""
        if len(self.stray) < _STRAY_KEPT:
            self.stray.append(line)
        self.log.write(line, source="agent stdout")


def chat_cancel(request: Incoming) -> Literal["cancel", "ignore"]:
    """The agent's `$/cancel_request` in the chat: a file or terminal request stops (-32800); a
    question on screen stays until answered (the chat resolves it when the turn ends)."""
    return "ignore" if request.method in {"session/request_permission", "elicitation/create"} else "cancel"


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
    log: AgentLog,
    observers: list[Callable[[StreamEvent], None]] | None = None,
    env: dict[str, str] | None = None,
) -> AsyncGenerator[tuple[ClientSideConnection, AgentProcess]]:
    """Spawn `argv` (with our environment plus `env`) and yield the SDK client connection to it.

    The agent's stderr goes to `log`. Raises `AgentExited` when the program does not exist or cannot
    run. On exit, close the agent's stdin and end the process (terminate, then kill, after 2 s each).
    """
    if not argv:
        raise AgentExited("the agent command is empty", 127)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            limit=_STDIO_LIMIT,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise AgentExited(f"{argv[0]}: command not found", 127) from None
    except PermissionError:
        raise AgentExited(f"{argv[0]}: permission denied (not an executable program)", 126) from None
    except OSError as exc:
        raise AgentExited(f"{argv[0]}: cannot start: {exc.strerror or exc}", 126) from None
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    agent = AgentProcess(argv=argv, process=process, log=log)
    stdout, start_pump = protocol_reader(process.stdout, agent.on_stray, limit=_STDIO_LIMIT)
    tasks = [start_pump(), asyncio.ensure_future(log.drain(process.stderr))]
    kwargs: dict[str, Any] = {"observers": list(observers)} if observers else {}
    conn = ClientSideConnection(cast(Client, client), process.stdin, stdout, use_unstable_protocol=True, **kwargs)
    tracked(conn, chat_cancel)
    try:
        yield conn, agent
    finally:
        await client.close()
        with contextlib.suppress(Exception):
            await conn.close()
        await _stop(process)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), _SHUTDOWN_SECONDS)


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


async def initialize(conn: ClientSideConnection, agent: AgentProcess, *, timeout: float) -> InitializeResponse:
    """Send `initialize` advertising fs, terminal and terminal logins.

    Raises `AgentExited`, with what went wrong in words, when the agent exits first, does not answer
    within `timeout` seconds, or answers with an error: the usual signs of a program that is not an
    ACP agent.
    """
    try:
        return await asyncio.wait_for(
            conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=SPAWNED_CAPABILITIES,
                client_info=client_info(),
            ),
            timeout,
        )
    except (ConnectionError, asyncio.IncompleteReadError):
        code = await agent.process.wait()
        await asyncio.sleep(0)  # let the stderr reader catch up
        raise AgentExited(_exited(agent, code), code) from None
    except TimeoutError:
        raise AgentExited(
            f"{agent.name} did not answer initialize within {timeout:g} s; is it an ACP agent?"
            f"{_printed(agent)} (--timeout SECONDS waits longer)"
        ) from None
    except RequestError as exc:
        raise AgentExited(f"{agent.name} refused initialize ({exc}); is it an ACP agent?{_printed(agent)}") from None


def _printed(agent: AgentProcess) -> str:
    if not agent.stray:
        return ""
    return " It printed, instead of JSON-RPC: " + " | ".join(printable(line)[:200] for line in agent.stray[:3])


def _exited(agent: AgentProcess, code: int) -> str:
    if agent.stray:
        return f"{agent.name} is not an ACP agent: it exited (code {code}) without answering initialize." + _printed(
            agent
        )
    tail = "\n".join(printable(line) for line in agent.log.tail)
    said = f"\n{tail}" if tail else ""
    return f"the agent exited before answering (exit code {code}){said}"
