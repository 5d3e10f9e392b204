"""The agent process's output streams, as `acpkit chat` and `acpkit sessions` read them.

- [`AgentLog`][acpkit_core.cli.agent_streams.AgentLog]: the agent's stderr (tracebacks, log lines,
  start-up banners) goes to a log file in the state directory, not into the chat; `--verbose` shows
  it as well. The last lines are kept to explain an agent that exits.
- [`protocol_reader`][acpkit_core.cli.agent_streams.protocol_reader]: the agent's stdout, passed to
  the ACP connection line by line; a line that cannot be JSON-RPC (it does not start with `{`) is set
  aside and reported, so a program that is not an ACP agent gets a clear error, not an SDK traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..store.base import default_store_path
from .sanitize import printable

__all__ = ["AgentLog", "log_dir", "protocol_reader"]

_TAIL_LINES = 20
_KEEP_LOGS = 20


def log_dir() -> Path:
    """Where chat logs live: `logs/` in the state directory (beside the default session store)."""
    return default_store_path().parent / "logs"


class AgentLog:
    """A log file for one chat run, created on the first line written to it (the last 20 logs are kept)."""

    def __init__(self, *, echo: Callable[[str], None] | None = None) -> None:
        self.path = log_dir() / f"chat-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
        """The file; it exists once something was logged."""
        self.tail: deque[str] = deque(maxlen=_TAIL_LINES)
        """The agent's last stderr lines."""
        self.errors = 0
        """Tracebacks the agent wrote so far (a turn compares this before and after)."""
        self._echo = echo
        self._file: TextIO | None = None
        self._failed = False

    def write(self, line: str, *, source: str = "agent") -> None:
        """Append one line (without its newline) to the file, and echo it with `--verbose`."""
        if source == "agent":
            self.tail.append(line)
            if line.startswith("Traceback (most recent call last)"):
                self.errors += 1
        if self._echo is not None:
            self._echo(printable(line))
        file = self._open()
        if file is not None:
            with contextlib.suppress(OSError):
                file.write(f"{source}: {line}\n")
                file.flush()

    def _open(self) -> TextIO | None:
        if self._file is not None or self._failed:
            return self._file
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._prune()
            self._file = self.path.open("a", encoding="utf-8", errors="replace")
        except OSError:
            self._failed = True
        return self._file

    def _prune(self) -> None:
        old = sorted(self.path.parent.glob("chat-*.log"))[: -(_KEEP_LOGS - 1)]
        for path in old:
            with contextlib.suppress(OSError):
                path.unlink()

    @property
    def written(self) -> bool:
        """Whether the file holds anything."""
        return self._file is not None

    async def drain(self, stream: asyncio.StreamReader) -> None:
        """Copy the agent's stderr into the log until it ends."""
        while True:
            try:
                raw = await stream.readline()
            except (ValueError, asyncio.LimitOverrunError):
                continue  # a line over the stream limit: skip it
            if not raw:
                return
            self.write(raw.decode("utf-8", "replace").rstrip("\r\n"))

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()


def protocol_reader(
    source: asyncio.StreamReader, on_stray: Callable[[str], None], *, limit: int
) -> tuple[asyncio.StreamReader, Callable[[], asyncio.Task[None]]]:
    """A reader giving the connection only the lines of `source` that can be JSON-RPC messages.

    Returns the reader and a function starting the copying task. Other lines are handed to `on_stray`.
    """
    reader = asyncio.StreamReader(limit=limit)

    async def pump() -> None:
        try:
            while True:
                try:
                    raw = await source.readline()
                except ValueError:
                    on_stray(f"(a line over {limit} bytes, dropped)")
                    continue
                if not raw:
                    break
                if raw.lstrip()[:1] == b"{":
                    reader.feed_data(raw)
                elif raw.strip():
                    on_stray(raw.decode("utf-8", "replace").rstrip("\r\n"))
        except ConnectionError:
            pass
        finally:
            reader.feed_eof()

    return reader, lambda: asyncio.ensure_future(pump())
