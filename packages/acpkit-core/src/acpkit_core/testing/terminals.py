"""Real subprocess terminals served by the test client."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal as signals
from collections.abc import Mapping, Sequence

__all__ = ["Terminal", "Terminals"]


class Terminal:
    """One `terminal/create`: a subprocess with stdout and stderr merged."""

    def __init__(self, process: asyncio.subprocess.Process, limit: int | None) -> None:
        self.process = process
        """The subprocess."""
        self.limit = limit
        """`outputByteLimit`: keep only this many trailing bytes."""
        self.truncated = False
        """True once output was dropped from the front."""
        self._out = bytearray()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(65536):
            self._out += chunk
            if self.limit is not None and len(self._out) > self.limit:
                del self._out[: len(self._out) - self.limit]
                self.truncated = True

    def output(self) -> str:
        """Output so far."""
        return self._out.decode("utf-8", "replace")

    def exit_status(self) -> tuple[int | None, str | None] | None:
        """`(exit code, signal)` once the process ended, else `None`."""
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return None, signals.Signals(-code).name
        return code, None

    async def wait(self) -> tuple[int | None, str | None]:
        """Wait for the process and its output."""
        await self.process.wait()
        await self._reader
        status = self.exit_status()
        assert status is not None
        return status

    def kill(self) -> None:
        """Kill the process if it runs."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()


class Terminals:
    """The terminals of one client."""

    def __init__(self) -> None:
        self._terminals: dict[str, Terminal] = {}
        self._ids = itertools.count(1)
        self.released: list[str] = []
        """Ids released by the agent, in order."""

    async def create(
        self, command: str, args: Sequence[str], *, cwd: str, env: Mapping[str, str], limit: int | None
    ) -> str:
        """Start a subprocess; returns its terminal id."""
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            cwd=cwd,
            env={**os.environ, **env},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal_id = f"term-{next(self._ids)}"
        self._terminals[terminal_id] = Terminal(process, limit)
        return terminal_id

    def get(self, terminal_id: str) -> Terminal:
        """A terminal by id (KeyError if unknown or released)."""
        return self._terminals[terminal_id]

    async def release(self, terminal_id: str) -> None:
        """Kill and forget a terminal."""
        t = self._terminals.pop(terminal_id)
        t.kill()
        await t.wait()
        self.released.append(terminal_id)

    async def close(self) -> None:
        """Kill every terminal still open."""
        for terminal_id in list(self._terminals):
            await self.release(terminal_id)
