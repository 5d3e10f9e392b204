"""The client side of `acpkit chat`: the ACP `Client` methods served from the local machine.

File reads and writes go to the real disk, limited to the working directory (and its
subdirectories); terminals are real subprocesses. Session updates and permission requests are
handed to callbacks, so the terminal view and the permission prompt live elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    EnvVariable,
    FileSystemCapabilities,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

__all__ = ["CAPABILITIES", "LocalClient", "PermissionHandler", "UpdateHandler"]

CAPABILITIES = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
    terminal=True,
)
"""What `acpkit chat` advertises: it really serves file reads, writes and terminals."""

UpdateHandler = Callable[[str, Any], None]
"""Called with (session id, update model) for each `session/update`."""

PermissionHandler = Callable[[str, ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]
"""Answers `session/request_permission`."""

_DEFAULT_OUTPUT_LIMIT = 1_000_000


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None

    def append(self, chunk: bytes) -> None:
        self.output += chunk
        if len(self.output) > self.limit:
            cut = len(self.output) - self.limit
            # keep the tail, starting on a UTF-8 character boundary
            while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                cut += 1
            del self.output[:cut]
            self.truncated = True

    def status(self) -> TerminalExitStatus | None:
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


class LocalClient:
    """An ACP client serving fs and terminal requests from `root`, and forwarding the rest to callbacks."""

    def __init__(self, root: Path, *, on_update: UpdateHandler, on_permission: PermissionHandler) -> None:
        self.root = root.resolve()
        self._on_update = on_update
        self._on_permission = on_permission
        self._terminals: dict[str, _Terminal] = {}

    # --- updates and permissions ------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Hand a `session/update` to the view."""
        self._on_update(session_id, update)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        """Ask the user (or the automatic answer) which option to take."""
        return await self._on_permission(session_id, tool_call, options)

    # --- files --------------------------------------------------------------------------------

    def _inside(self, path: str) -> Path:
        p = Path(path)
        if not p.is_absolute():
            raise RequestError.invalid_params({"path": path, "reason": "paths must be absolute"})
        resolved = p.resolve()
        if not resolved.is_relative_to(self.root):
            raise RequestError.invalid_params(
                {"path": path, "reason": f"outside the working directory {self.root}; acpkit chat refuses it"}
            )
        return resolved

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        """Read a text file under the working directory (`line` is 1-based)."""
        target = self._inside(path)
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RequestError.resource_not_found(target.as_uri()) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            end = start + limit if limit is not None else None
            text = "".join(lines[start:end])
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        """Write a text file under the working directory, creating parent directories."""
        target = self._inside(path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        except OSError as exc:
            raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None
        return WriteTextFileResponse()

    # --- terminals ----------------------------------------------------------------------------

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        """Start a real subprocess (through `/bin/sh -c` when no `args` are given)."""
        workdir = self._inside(cwd) if cwd else self.root
        child_env = dict(os.environ)
        child_env.update({v.name: v.value for v in env or []})
        try:
            if args:
                process = await asyncio.create_subprocess_exec(
                    command,
                    *args,
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
        terminal = _Terminal(process=process, limit=output_byte_limit or _DEFAULT_OUTPUT_LIMIT)
        terminal.reader = asyncio.create_task(self._pump(terminal))
        terminal_id = f"term_{uuid.uuid4().hex[:12]}"
        self._terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    @staticmethod
    async def _pump(terminal: _Terminal) -> None:
        stream = terminal.process.stdout
        if stream is None:
            return
        while chunk := await stream.read(65536):
            terminal.append(chunk)

    def _terminal(self, terminal_id: str) -> _Terminal:
        try:
            return self._terminals[terminal_id]
        except KeyError:
            raise RequestError.invalid_params({"terminalId": terminal_id, "reason": "unknown terminal"}) from None

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        """The output so far, and the exit status once the process ended."""
        terminal = self._terminal(terminal_id)
        status = terminal.status()
        if status is not None and terminal.reader is not None:
            await terminal.reader
        return TerminalOutputResponse(
            output=terminal.output.decode("utf-8", errors="replace"),
            truncated=terminal.truncated,
            exit_status=terminal.status(),
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        """Wait for the process to end."""
        terminal = self._terminal(terminal_id)
        await terminal.process.wait()
        if terminal.reader is not None:
            await terminal.reader
        status = terminal.status()
        return WaitForTerminalExitResponse(
            exit_code=status.exit_code if status else None, signal=status.signal if status else None
        )

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        """Kill the process (and its process group); the output stays readable until release."""
        terminal = self._terminal(terminal_id)
        _kill(terminal.process)
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        """Kill the process if it still runs and forget the terminal."""
        terminal = self._terminals.pop(terminal_id, None)
        if terminal is not None:
            _kill(terminal.process)
            if terminal.reader is not None:
                terminal.reader.cancel()
        return ReleaseTerminalResponse()

    async def close(self) -> None:
        """Kill every terminal the agent did not release."""
        for terminal_id in list(self._terminals):
            await self.release_terminal("", terminal_id)


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
