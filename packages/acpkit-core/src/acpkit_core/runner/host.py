"""The client's files and terminals, for one session, behind a path policy.

An ACP client may offer the agent its file system (`fs/read_text_file`, which sees unsaved editor
buffers, and `fs/write_text_file`) and terminals (`terminal/*`). [`ClientHost`][acpkit_core.runner.host.ClientHost]
wraps those requests for one session:

- a method whose capability the client did not advertise raises
  `HostUnavailableError`;
- a path must be absolute and lie inside the session's roots (its cwd, its additional
  directories and the developer's `allowed_paths`), after `..` and symlinks are resolved, or
  `PathPolicyError` is raised before anything is sent;
- an error answered by the client becomes a `HostError` whose
  `__cause__` is the `acp.RequestError`;
- [`run`][acpkit_core.runner.host.ClientHost.run] creates a terminal, waits with a timeout, kills on
  timeout or cancellation, reads the output, and always releases the terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, TypeVar

from acp import RequestError
from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    TerminalOutputResponse,
    TerminalToolCallContent,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from ..errors import HostError, HostUnavailableError, PathPolicyError, UserError
from .types import ClientInfo, Session

__all__ = ["REMOVE_FILE_METHOD", "ClientConnection", "ClientHost", "CommandResult", "Terminal"]

REMOVE_FILE_METHOD = "_acpkit/fs/remove_file"
"""The client extension method that deletes a file (`{"sessionId", "path"}`), served by `acpkit chat`
and the test client, advertised as `clientCapabilities._meta["acpkit.fs"] = {"removeFile": true}`."""

T = TypeVar("T")

_RESOURCE_NOT_FOUND = -32002
"""The JSON-RPC error code of ACP's "resource not found" (a file the client does not have)."""

_CLEANUP_TIMEOUT = 5.0
"""Seconds to wait for the client to answer kill/release during cleanup."""


class ClientConnection(Protocol):
    """The client-facing requests of the SDK's `acp.agent.connection.AgentSideConnection`."""

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse: ...

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None: ...

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse: ...

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse: ...

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse: ...

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse | None: ...

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse | None: ...

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandResult:
    """What a command run in the client's terminal produced."""

    terminal_id: str
    """The terminal's id (already released when `run` returns)."""
    output: str
    """The output the client captured (stdout and stderr, as the client merges them)."""
    exit_code: int | None
    """The exit code, or None when the process ended by a signal (or did not end)."""
    signal: str | None = None
    """The signal that ended the process, when the client reports one."""
    truncated: bool = False
    """The client cut the output at its byte limit (the beginning is dropped)."""
    timed_out: bool = False
    """The command did not finish within the timeout and was killed."""

    @property
    def ok(self) -> bool:
        """True when the command exited with code 0."""
        return self.exit_code == 0 and not self.timed_out


def _env_list(env: Mapping[str, str] | None) -> list[EnvVariable] | None:
    return [EnvVariable(name=k, value=v) for k, v in env.items()] if env else None


class Terminal:
    """A terminal running in the client, for one command.

    Embed [`content()`][acpkit_core.runner.host.Terminal.content] in a tool call so the editor shows the
    live output, then [`wait`][acpkit_core.runner.host.Terminal.wait]. Use it as an async context
    manager (or call [`release`][acpkit_core.runner.host.Terminal.release]) so the client can free it.
    """

    def __init__(self, conn: ClientConnection, session_id: str, terminal_id: str) -> None:
        self._conn = conn
        self._session_id = session_id
        self.id = terminal_id
        """The client's terminal id."""
        self.released = False
        """True once `release` was sent."""

    def content(self) -> TerminalToolCallContent:
        """Tool-call content that shows this terminal in the editor."""
        return TerminalToolCallContent(type="terminal", terminal_id=self.id)

    async def output(self) -> TerminalOutputResponse:
        """The output so far and, once the command ended, its exit status."""
        return await _call("terminal/output", self._conn.terminal_output(self._session_id, self.id))

    async def kill(self) -> None:
        """Kill the command; the terminal stays valid for `output` until released."""
        await _call("terminal/kill", self._conn.kill_terminal(self._session_id, self.id))

    async def release(self) -> None:
        """Release the terminal (kills the command if it still runs). Safe to call twice."""
        if self.released:
            return
        self.released = True
        await _call("terminal/release", self._conn.release_terminal(self._session_id, self.id))

    async def wait(self, timeout: float | None = None) -> CommandResult:
        """Wait for the command to end, at most `timeout` seconds, then collect its output.

        On timeout, or when the waiting task is cancelled, the command is killed first. The
        terminal is not released here: leave the `async with` block or call `release`.
        """
        timed_out = False
        status: WaitForTerminalExitResponse | None = None
        try:
            status = await asyncio.wait_for(
                _call("terminal/wait_for_exit", self._conn.wait_for_terminal_exit(self._session_id, self.id)),
                timeout,
            )
        except TimeoutError:
            timed_out = True
            await self._kill_quietly()
            status = await self._status_after_kill()
        except asyncio.CancelledError:
            await self._kill_quietly()
            raise
        out = await self.output()
        exit_code = status.exit_code if status else None
        signal = status.signal if status else None
        if out.exit_status is not None:
            exit_code = out.exit_status.exit_code if out.exit_status.exit_code is not None else exit_code
            signal = out.exit_status.signal or signal
        return CommandResult(
            terminal_id=self.id,
            output=out.output,
            exit_code=exit_code,
            signal=signal,
            truncated=out.truncated,
            timed_out=timed_out,
        )

    async def _kill_quietly(self) -> None:
        with contextlib.suppress(HostError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.kill()), _CLEANUP_TIMEOUT)

    async def _status_after_kill(self) -> WaitForTerminalExitResponse | None:
        try:
            return await asyncio.wait_for(
                self._conn.wait_for_terminal_exit(self._session_id, self.id), _CLEANUP_TIMEOUT
            )
        except (RequestError, TimeoutError):
            return None

    async def __aenter__(self) -> Terminal:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(self.release()), _CLEANUP_TIMEOUT)
        except (HostError, TimeoutError):
            if exc is None:
                raise


async def _call(method: str, request: Awaitable[T]) -> T:
    """Await a client request, turning the client's error answer into a `HostError`."""
    try:
        return await request
    except RequestError as error:
        raise HostError(f"{method}: the client answered with an error: {error}") from error


def _real(path: str) -> str:
    return os.path.realpath(path)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class ClientHost:
    """The client's files and terminals for one session.

    ```python
    host = ClientHost(conn, session_id, client_info, cwd="/work/project", roots=["/work/shared"])
    text = await host.read_text_file("/work/project/src/app.py")
    result = await host.run("pytest", ["-q"], timeout=60)
    ```

    `conn` is the SDK's agent-side connection (anything with its client-facing request methods,
    see [`ClientConnection`][acpkit_core.runner.host.ClientConnection]); `None` means no client at all
    (every method then raises `HostUnavailableError`). The roots are `cwd` plus `roots`; paths are
    checked against them with `..` and symlinks resolved.
    """

    def __init__(
        self,
        conn: ClientConnection | None,
        session_id: str,
        client: ClientInfo,
        *,
        cwd: str,
        roots: Sequence[str] = (),
    ) -> None:
        for root in (cwd, *roots):
            if not os.path.isabs(root):
                raise UserError(f"ClientHost: roots must be absolute paths, got {root!r}")
        self._conn = conn
        self.session_id = session_id
        """The ACP session id sent with every request."""
        self.client = client
        """What the client advertised."""
        self.cwd = os.path.normpath(cwd)
        """The session's working directory: the default cwd of commands."""
        self.roots: tuple[str, ...] = tuple(dict.fromkeys(os.path.normpath(r) for r in (cwd, *roots)))
        """The directories paths must lie in (cwd first)."""
        self._real_roots = tuple(dict.fromkeys(_real(r) for r in self.roots))

    @classmethod
    def for_session(
        cls,
        conn: ClientConnection | None,
        session: Session,
        client: ClientInfo,
        allowed_paths: Sequence[str] = (),
    ) -> ClientHost:
        """The host of `session`: roots are its cwd, its additional directories and `allowed_paths`."""
        return cls(conn, session.id, client, cwd=session.cwd, roots=(*session.additional_directories, *allowed_paths))

    # --- capabilities -------------------------------------------------------------------------

    @property
    def can_read(self) -> bool:
        """The client serves `fs/read_text_file`."""
        return self._conn is not None and self.client.read_text_file

    @property
    def can_write(self) -> bool:
        """The client serves `fs/write_text_file`."""
        return self._conn is not None and self.client.write_text_file

    @property
    def can_run(self) -> bool:
        """The client serves the `terminal/*` methods."""
        return self._conn is not None and self.client.terminal

    @property
    def can_remove(self) -> bool:
        """The client serves the extension `_acpkit/fs/remove_file` (see `ClientInfo.remove_file`)."""
        return self._conn is not None and self.client.remove_file

    def _require(self, available: bool, capability: str) -> ClientConnection:
        if not available or self._conn is None:
            raise HostUnavailableError(f"the client did not advertise {capability}")
        return self._conn

    # --- path policy ----------------------------------------------------------------------------

    def allows(self, path: str) -> bool:
        """True when `path` is absolute and inside the roots (see `check_path`)."""
        try:
            self.check_path(path)
        except PathPolicyError:
            return False
        return True

    def check_path(self, path: str) -> str:
        """The normalised absolute path, or `PathPolicyError` when it is relative or outside the roots.

        Both the path as written (with `..` collapsed) and the real path (symlinks followed)
        must lie inside a root, so neither `root/../etc` nor a symlink out of a root passes.
        """
        if not os.path.isabs(path):
            raise PathPolicyError(f"path must be absolute, got {path!r} (join it to the session cwd {self.cwd!r})")
        normal = os.path.normpath(path)
        real = _real(normal)
        if any(_inside(normal, r) for r in self.roots) and any(_inside(real, r) for r in self._real_roots):
            return normal
        shown = normal if real == normal else f"{normal} (resolves to {real})"
        raise PathPolicyError(f"{shown} is outside the session's directories: {', '.join(self.roots)}")

    # --- files ----------------------------------------------------------------------------------

    async def read_text_file(self, path: str, *, line: int | None = None, limit: int | None = None) -> str:
        """The file's text as the client sees it (unsaved buffers included).

        `line` is the 1-based first line and `limit` the number of lines to read.
        """
        conn = self._require(self.can_read, "fs.readTextFile")
        if line is not None and line < 1:
            raise UserError(f"read_text_file: line is 1-based, got {line}")
        if limit is not None and limit < 1:
            raise UserError(f"read_text_file: limit must be at least 1, got {limit}")
        path = self.check_path(path)
        response = await _call("fs/read_text_file", conn.read_text_file(self.session_id, path, line=line, limit=limit))
        return response.content

    async def write_text_file(self, path: str, content: str) -> None:
        """Write the file through the client (the editor updates its buffer)."""
        conn = self._require(self.can_write, "fs.writeTextFile")
        path = self.check_path(path)
        await _call("fs/write_text_file", conn.write_text_file(self.session_id, path, content))

    async def remove_file(self, path: str) -> None:
        """Delete a file through the client (`_acpkit/fs/remove_file`, an ACP Kit extension: ACP has no
        method for it). `HostUnavailableError` when the client did not advertise it."""
        conn = self._require(self.can_remove, '_meta["acpkit.fs"].removeFile')
        path = self.check_path(path)
        await _call(
            REMOVE_FILE_METHOD, conn.ext_method(REMOVE_FILE_METHOD[1:], {"sessionId": self.session_id, "path": path})
        )

    async def read_for_diff(self, path: str) -> str | None:
        """The current text of a file for an edit diff, or None when the file does not exist.

        Asks the client when it serves `fs/read_text_file` (so the diff is against what the user
        sees); otherwise reads the file from disk. The path policy applies either way. A new file
        costs no request: when its directory is on this machine and the file is not, the original is
        empty; and a client answering "resource not found" (-32002) means the same, silently.
        """
        path = self.check_path(path)
        if os.path.isdir(os.path.dirname(path)) and not os.path.lexists(path):
            return None  # a new file: asking the client would only show the user a failed request
        if not self.can_read:
            try:
                with open(path, encoding="utf-8", errors="replace") as file:
                    return file.read()
            except FileNotFoundError:
                return None
            except OSError as error:
                raise HostError(f"cannot read {path}: {error.strerror or error}") from error
        try:
            return await self.read_text_file(path)
        except HostError as error:
            cause = error.__cause__
            if (isinstance(cause, RequestError) and cause.code == _RESOURCE_NOT_FOUND) or not os.path.exists(path):
                return None
            raise

    # --- terminals ------------------------------------------------------------------------------

    async def create_terminal(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> Terminal:
        """Start `command` with `args` in a client terminal and return it without waiting.

        `cwd` defaults to the session cwd and must lie inside the roots. Release the terminal
        (`async with terminal:`) when done.
        """
        conn = self._require(self.can_run, "terminal")
        if output_byte_limit is not None and output_byte_limit < 1:
            raise UserError(f"create_terminal: output_byte_limit must be positive, got {output_byte_limit}")
        directory = self.check_path(cwd) if cwd is not None else self.cwd
        create = asyncio.ensure_future(
            _call(
                "terminal/create",
                conn.create_terminal(
                    self.session_id,
                    command,
                    args=list(args),
                    env=_env_list(env),
                    cwd=directory,
                    output_byte_limit=output_byte_limit,
                ),
            )
        )
        try:
            response = await asyncio.shield(create)
        except asyncio.CancelledError:
            # The client may already be running the command: release it once we learn its id.
            with contextlib.suppress(HostError, TimeoutError):
                created = await asyncio.wait_for(create, _CLEANUP_TIMEOUT)
                await asyncio.wait_for(Terminal(conn, self.session_id, created.terminal_id).release(), _CLEANUP_TIMEOUT)
            raise
        return Terminal(conn, self.session_id, response.terminal_id)

    async def run(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        output_byte_limit: int | None = None,
    ) -> CommandResult:
        """Run `command` in a client terminal and return its output and exit status.

        Waits at most `timeout` seconds (None: no limit); on timeout the command is killed and the
        result has `timed_out=True`. If the calling task is cancelled the command is killed. The
        terminal is always released.
        """
        terminal = await self.create_terminal(command, args, cwd=cwd, env=env, output_byte_limit=output_byte_limit)
        async with terminal:
            return await terminal.wait(timeout)

    async def kill(self, terminal_id: str) -> None:
        """Kill the command in a terminal created earlier (it stays readable until released)."""
        conn = self._require(self.can_run, "terminal")
        await _call("terminal/kill", conn.kill_terminal(self.session_id, terminal_id))

    async def release(self, terminal_id: str) -> None:
        """Release a terminal created earlier."""
        conn = self._require(self.can_run, "terminal")
        await _call("terminal/release", conn.release_terminal(self.session_id, terminal_id))
