"""One child process of `acpkit serve -- CMD`: started in its own process group, read line by line, stopped as a whole.

[`ChildConnection`][acpkit_core.remote.child.ChildConnection] owns one (or, with
`child_per="session"`, one per session besides the first); this is only the process: its stdin
(one JSON line per message, written in order), its stdout read up to the message size limit, the
end of its stderr (to say why it exited), and the stop sequence (stdin closed, `SIGTERM` to its
group after `stop_seconds`, then `SIGKILL`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

from ..json_text import json_bytes
from ..server.stdio import PRINCIPAL_ENV
from .auth import TOKENS_ENV

__all__ = ["ChildProcess"]

logger = logging.getLogger("acpkit_core.remote")

STDERR_TAIL: Final = 2048
"""Bytes of the child's stderr kept, to say why it exited."""
_READ_CHUNK: Final = 64 * 1024


def _line(message: dict[str, Any]) -> bytes:
    return json_bytes(message) + b"\n"


class ChildProcess:
    """One agent process: its pipes, the end of its stderr, and how it stops."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None,
        env: Mapping[str, str],
        label: str,
        session: bool = False,
        principal: str | None = None,
    ) -> None:
        self._argv = tuple(argv)
        self._cwd = cwd
        self._env = env
        self._principal = principal
        self.label = label
        """Names it in the log (the connection, and the session it serves)."""
        self.session = session
        """True for a session's own child (`child_per="session"`), False for the connection's first."""
        self.process: asyncio.subprocess.Process | None = None
        """The process (once started)."""
        self.exited = False
        """Set once its stdout closed and it exited (or was killed)."""
        self.why: str | None = None
        """Why it ended (once it has)."""
        self.stopping = False
        """Set when the server stops it on purpose (its session closed, its connection ended)."""
        self.sessions: set[str] = set()
        """The sessions it serves (with `child_per="session"`)."""
        self.tasks: list[asyncio.Task[None]] = []
        """Its readers."""
        self._stdin_lock = asyncio.Lock()
        self._stderr = bytearray()

    async def start(self) -> None:
        """Start it (raises `OSError` when it cannot)."""
        self.process = await asyncio.create_subprocess_exec(
            *self._argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self._cwd,
            env=self._environment(),
            start_new_session=True,  # its own process group: stopped as a whole
        )
        logger.info("%s: started %s (pid %d)", self.label, self._argv[0], self.process.pid)

    def _environment(self) -> dict[str, str]:
        """The server's environment without its tokens, the command's variables, and the principal of the
        connection (`ACPKIT_PRINCIPAL`, never inherited: an anonymous connection's child has none)."""
        env = {k: v for k, v in os.environ.items() if k not in (TOKENS_ENV, PRINCIPAL_ENV)}
        env.update(self._env)
        env.pop(PRINCIPAL_ENV, None)
        if self._principal is not None:
            env[PRINCIPAL_ENV] = self._principal
        return env

    @property
    def pid(self) -> int | None:
        """Its process id (`None` before it started)."""
        return None if self.process is None else self.process.pid

    @property
    def returncode(self) -> int | None:
        """Its exit status (`None` while it runs)."""
        return None if self.process is None else self.process.returncode

    @property
    def stderr(self) -> str:
        """The end of what it wrote to stderr."""
        return self._stderr.decode("utf-8", "replace").strip()

    async def write(self, message: dict[str, Any]) -> bool:
        """Write one message to its stdin (waits while it does not read); False when it cannot take it."""
        process = self.process
        if process is None or process.stdin is None or self.exited:
            return False
        async with self._stdin_lock:
            try:
                process.stdin.write(_line(message))
                await process.stdin.drain()  # a child that does not read holds the client back
            except (ConnectionError, RuntimeError):
                logger.debug("%s: the child's stdin is closed", self.label)
                return False
        return True

    async def read(self, limit: int, on_line: Callable[[bytes], Awaitable[None]]) -> str | None:
        """Hand each stdout line to `on_line` until it ends; why it stopped early (a line over `limit`)."""
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        buffer = bytearray()
        while True:
            chunk = await stdout.read(_READ_CHUNK)
            if not chunk:
                break
            buffer += chunk
            while (end := buffer.find(b"\n")) >= 0 and end <= limit:
                line = bytes(buffer[:end])
                del buffer[: end + 1]
                await on_line(line)
            if end > limit or len(buffer) > limit:
                return f"the agent sent a message over the {limit} bytes limit (max_message_bytes)"
        if buffer.strip():
            await on_line(bytes(buffer))
        return None

    async def read_stderr(self) -> None:
        """Keep the last `STDERR_TAIL` bytes of its stderr."""
        assert self.process is not None and self.process.stderr is not None
        while chunk := await self.process.stderr.read(4096):
            self._stderr += chunk
            if len(self._stderr) > STDERR_TAIL:
                del self._stderr[: len(self._stderr) - STDERR_TAIL]

    async def ended(self, reason: str | None) -> str:
        """Its stdout closed (`reason`: it broke a limit, and is killed): wait for it; why it ended."""
        process = self.process
        assert process is not None
        if reason is not None:
            self.kill_group()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 5.0)
        self.exited = True
        stderr = self.stderr
        last = stderr.splitlines()[-1] if stderr else ""
        self.why = reason or (
            f"the agent process exited (exit code {process.returncode})" + (f": {last}" if last else "")
        )
        return self.why

    def kill_group(self, sig: signal.Signals = signal.SIGKILL) -> None:
        """Send `sig` to its process group (to it alone if the group is gone)."""
        process = self.process
        if process is None:
            return
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, sig)

    async def stop(self, stop_seconds: float) -> None:
        """Close its stdin; `SIGTERM` its group after `stop_seconds`, `SIGKILL` as long after."""
        self.stopping = True
        process = self.process
        if process is None:
            return
        try:
            if process.returncode is None:
                if process.stdin is not None:
                    process.stdin.close()
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    try:
                        await asyncio.wait_for(process.wait(), stop_seconds)
                        break
                    except TimeoutError:
                        logger.info("%s: the agent did not exit: %s", self.label, sig.name)
                        self.kill_group(sig)
                await process.wait()
        finally:
            self.kill_group()  # whatever it started in its group goes with it
