"""The client half of ACP's file and terminal methods, served from this machine.

An ACP client answers `fs/read_text_file`, `fs/write_text_file` and `terminal/*` for the agent
(and, as an ACP Kit extension, `_acpkit/fs/remove_file`, with which a rewind removes a file the
agent created).
[`LocalClientHost`][acpkit_core.client.local_host.LocalClientHost] does it from the local disk and real
subprocesses; both `acpkit chat` and the test client ([`AcpTestClient`][acpkit_core.testing.AcpTestClient])
delegate to it. Paths must be absolute and, when a `root` is given, inside it. Failures are
`acp.RequestError`s, ready to go back over the wire: a missing file or an unknown terminal id is
*resource not found*, any other problem *invalid params* naming the path and the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
from pathlib import Path

from acp import RequestError
from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

__all__ = ["LocalClientHost", "LocalTerminal"]

_CHUNK = 65536


class LocalTerminal:
    """One `terminal/create`: a subprocess (in its own process group) with stdout and stderr merged."""

    def __init__(self, process: asyncio.subprocess.Process, limit: int | None) -> None:
        self.process = process
        """The subprocess."""
        self.limit = limit
        """`outputByteLimit`: keep only about this many trailing bytes (`None`: keep everything)."""
        self.truncated = False
        """True once output was dropped from the front."""
        self._out = bytearray()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        stream = self.process.stdout
        if stream is None:
            return
        while chunk := await stream.read(_CHUNK):
            self._append(chunk)

    def _append(self, chunk: bytes) -> None:
        self._out += chunk
        if self.limit is None or len(self._out) <= self.limit:
            return
        cut = len(self._out) - self.limit
        # keep the tail, starting on a UTF-8 character boundary
        while cut < len(self._out) and (self._out[cut] & 0xC0) == 0x80:
            cut += 1
        del self._out[:cut]
        self.truncated = True

    def output(self) -> str:
        """The output kept so far, decoded as UTF-8 (invalid bytes replaced)."""
        return self._out.decode("utf-8", "replace")

    def exit_status(self) -> TerminalExitStatus | None:
        """The exit code or signal name once the process ended, else `None`."""
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return TerminalExitStatus(exit_code=None, signal=name)
        return TerminalExitStatus(exit_code=code, signal=None)

    async def wait(self) -> TerminalExitStatus:
        """Wait for the process to end and its output to be read."""
        await self.process.wait()
        await self._reader
        status = self.exit_status()
        assert status is not None
        return status

    async def settle(self) -> None:
        """If the process ended, wait until its remaining output is read."""
        if self.process.returncode is not None:
            await self._reader

    def kill(self) -> None:
        """Kill the process and its process group if it still runs."""
        if self.process.returncode is not None:
            return
        # Signal by pid, not with `process.kill()`: `Popen.send_signal` polls first and may reap
        # the child before asyncio's watcher does, which then reports exit code 255.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGKILL)

    async def stop(self) -> None:
        """Kill the process, wait for it, and stop reading its output."""
        self.kill()
        await self.process.wait()
        if not self._reader.done():
            self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


class LocalClientHost:
    """Serves the client's file and terminal methods from the local disk and real subprocesses.

    The methods take the ACP request fields (without the session id) and return the ACP response
    models, so an ACP client delegates to them in one line.
    """

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        cwd: str | Path | None = None,
        output_byte_limit: int | None = None,
        shell: bool = True,
    ) -> None:
        self.root = Path(root).resolve() if root is not None else None
        """Paths must lie inside this directory (after resolving links); `None` allows any absolute path."""
        self.cwd = Path(cwd).resolve() if cwd is not None else self.root
        """Where terminals start when the agent gives no `cwd` (`None`: this process's directory)."""
        self.output_byte_limit = output_byte_limit
        """The output byte limit when the agent sets none (`None`: unlimited)."""
        self.shell = shell
        """Run a command given without `args` through `/bin/sh -c` (else execute it directly)."""
        self.terminals: dict[str, LocalTerminal] = {}
        """Open terminals by id."""
        self.released: list[str] = []
        """Terminal ids released so far, in order."""
        self._ids = itertools.count(1)

    # --- paths ---------------------------------------------------------------------------------

    def resolve(self, path: str) -> Path:
        """The absolute, resolved `path`; invalid params if it is relative or outside `root`."""
        p = Path(path)
        if not p.is_absolute():
            raise RequestError.invalid_params({"path": path, "reason": "paths must be absolute"})
        resolved = p.resolve()
        if self.root is not None and not resolved.is_relative_to(self.root):
            raise RequestError.invalid_params({"path": path, "reason": f"outside the allowed directory {self.root}"})
        return resolved

    # --- files ---------------------------------------------------------------------------------

    async def read_text_file(
        self, path: str, *, line: int | None = None, limit: int | None = None
    ) -> ReadTextFileResponse:
        """Read a UTF-8 text file, optionally `limit` lines from `line` (1-based)."""
        target = self.resolve(path)
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : start + limit] if limit is not None else lines[start:])
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, path: str, content: str) -> WriteTextFileResponse:
        """Write a UTF-8 text file, creating its parent directories."""
        target = self.resolve(path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        except OSError as exc:
            raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None
        return WriteTextFileResponse()

    async def remove_file(self, path: str) -> None:
        """Delete a file (the `_acpkit/fs/remove_file` extension; a file already gone is fine)."""
        target = self.resolve(path)
        if target.is_dir():
            raise RequestError.invalid_params({"path": path, "reason": "is a directory, not a file"})
        try:
            target.unlink(missing_ok=True)
        except OSError as exc:
            raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None

    # --- terminals -----------------------------------------------------------------------------

    async def create_terminal(
        self,
        command: str,
        args: list[str] | None = None,
        *,
        cwd: str | None = None,
        env: list[EnvVariable] | None = None,
        output_byte_limit: int | None = None,
    ) -> CreateTerminalResponse:
        """Start `command` with `args` in `cwd` (default `self.cwd`), with `env` added to this process's."""
        workdir = self.resolve(cwd) if cwd else self.cwd
        child_env = {**os.environ, **{v.name: v.value for v in env or []}}
        limit = output_byte_limit if output_byte_limit is not None else self.output_byte_limit
        try:
            if args or not self.shell:
                process = await asyncio.create_subprocess_exec(
                    command,
                    *(args or []),
                    cwd=workdir,
                    env=child_env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True,
                )
            else:
                process = await asyncio.create_subprocess_shell(
                    command,
                    cwd=workdir,
                    env=child_env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True,
                )
        except OSError as exc:
            raise RequestError.invalid_params({"command": command, "reason": str(exc)}) from None
        terminal_id = f"term-{next(self._ids)}"
        self.terminals[terminal_id] = LocalTerminal(process, limit)
        return CreateTerminalResponse(terminal_id=terminal_id)

    def terminal(self, terminal_id: str) -> LocalTerminal:
        """An open terminal by id; resource not found if unknown or released."""
        try:
            return self.terminals[terminal_id]
        except KeyError:
            raise RequestError.resource_not_found(terminal_id) from None

    async def terminal_output(self, terminal_id: str) -> TerminalOutputResponse:
        """The output so far, and the exit status once the process ended."""
        terminal = self.terminal(terminal_id)
        await terminal.settle()
        return TerminalOutputResponse(
            output=terminal.output(), truncated=terminal.truncated, exit_status=terminal.exit_status()
        )

    async def wait_for_terminal_exit(self, terminal_id: str) -> WaitForTerminalExitResponse:
        """Wait for the process to end."""
        status = await self.terminal(terminal_id).wait()
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, terminal_id: str) -> KillTerminalResponse:
        """Kill the process (and its process group); the output stays readable until release."""
        self.terminal(terminal_id).kill()
        return KillTerminalResponse()

    async def release_terminal(self, terminal_id: str) -> ReleaseTerminalResponse:
        """Kill the process if it still runs and forget the terminal."""
        terminal = self.terminal(terminal_id)
        del self.terminals[terminal_id]
        await terminal.stop()
        self.released.append(terminal_id)
        return ReleaseTerminalResponse()

    async def close(self) -> None:
        """Kill and release every terminal still open."""
        for terminal_id in list(self.terminals):
            await self.release_terminal(terminal_id)
