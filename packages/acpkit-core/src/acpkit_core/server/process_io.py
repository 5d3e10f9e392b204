"""The agent process's own stdin and stdout, made fit to carry ACP.

One rule for every way of serving over stdio (`acpkit run`, `run_stdio`, each adapter's `run_acp`):

- [`protect_stdout`][acpkit_core.server.process_io.protect_stdout]: stdout carries JSON-RPC only.
  The real stdout is kept for the protocol; file descriptor 1 and `sys.stdout` point at stderr, so
  a `print()` in an agent's tool, a library's output or a child process's output lands in the log
  instead of corrupting the stream.
- [`terminal_notice`][acpkit_core.server.process_io.terminal_notice]: started by hand in a
  terminal, an agent says what it is and how to talk to it, and exits, instead of waiting for
  JSON-RPC a person will not type.
- [`stdio_streams`][acpkit_core.server.process_io.stdio_streams]: stdin and stdout as asyncio
  streams, pipes and sockets as usual and regular files too (`> transcript.jsonl`), where the
  event loop's pipe transports refuse them. Whatever else a shell can give as stdin ends the
  session cleanly, as a client closing the pipe does: `</dev/null` (a device the event loop cannot
  watch: read as a file, at its end at once) and a closed stdin (`<&-`: read as an empty stream,
  never as whatever file later took descriptor 0).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import stat
import sys
from typing import Any, TextIO

__all__ = [
    "ProtocolStdout",
    "protect_stdout",
    "stdin_is_closed",
    "stdin_is_terminal",
    "stdio_streams",
    "terminal_notice",
]

_CHUNK = 1 << 16


class ProtocolStdout:
    """Stands in for `sys.stdout` while serving.

    `fileno()` is the protocol's descriptor (the real stdout), which the transport writes JSON-RPC
    to; text written to this object (a stray `print()`) goes to `fallback` (stderr) instead.
    """

    def __init__(self, fd: int, fallback: TextIO) -> None:
        self._fd = fd
        self._fallback = fallback

    def fileno(self) -> int:
        """The protocol's file descriptor."""
        return self._fd

    def write(self, text: str) -> int:
        """Write `text` to the fallback stream (stderr)."""
        return self._fallback.write(text)

    def flush(self) -> None:
        """Flush the fallback stream."""
        self._fallback.flush()

    def isatty(self) -> bool:
        """Never a terminal, so libraries do not colour what they print."""
        return False

    def close(self) -> None:
        """Close the protocol's descriptor."""
        os.close(self._fd)

    def __getattr__(self, name: str) -> Any:  # encoding, errors, buffer...: the fallback's
        return getattr(self._fallback, name)


def protect_stdout() -> int:
    """Keep stdout for the protocol alone; returns the protocol's file descriptor.

    Duplicates descriptor 1 for the protocol, points descriptor 1 at stderr (child processes
    inherit that) and replaces `sys.stdout` with a [`ProtocolStdout`][acpkit_core.server.process_io.ProtocolStdout].
    Calling it again returns the same descriptor. On Windows stdout is left as it is.
    """
    current: object = sys.stdout
    if isinstance(current, ProtocolStdout):
        return current.fileno()
    if os.name == "nt":
        return 1
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = ProtocolStdout(protocol_fd, sys.stderr)  # pyright: ignore[reportAttributeAccessIssue]
    return protocol_fd


def stdin_is_terminal() -> bool:
    """True when stdin is a terminal, that is, a person started the agent by hand."""
    try:
        return os.isatty(0)
    except OSError:
        return False


def terminal_notice(name: str, chat: str | None = None) -> str:
    """The line shown when an agent is started in a terminal.

    `chat` is the `acpkit chat` command that would talk to it; by default one that runs this very
    command line (`acpkit chat --agent "python my_agent.py"`).
    """
    if chat is None:
        chat = "acpkit chat --agent " + shlex.quote(shlex.join(_command_line()))
    return (
        f"{name} is an ACP agent: it talks JSON-RPC over stdin/stdout to an editor, not to a terminal. "
        f"To chat with it here: {chat} (or add it to your editor's agent servers)."
    )


def _command_line() -> list[str]:
    argv = list(getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv])
    if argv and os.path.basename(argv[0]).startswith("python"):
        argv[0] = "python"
    return argv


class _FileWriteTransport(asyncio.WriteTransport):
    """Writes to a regular file, synchronously (the kernel takes file writes at once)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing:
            return
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def abort(self) -> None:
        self._closing = True

    def can_write_eof(self) -> bool:
        return False


class _FileReadTransport(asyncio.ReadTransport):
    """Feeds a regular file to a `StreamReader`, pausing while the reader's buffer is full."""

    def __init__(self, fd: int, reader: asyncio.StreamReader) -> None:
        super().__init__()
        self._fd = fd
        self._reader = reader
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._closing = False
        self.task = asyncio.ensure_future(self._feed())

    async def _feed(self) -> None:
        while not self._closing:
            await self._resumed.wait()
            data = os.read(self._fd, _CHUNK)
            if not data:
                break
            self._reader.feed_data(data)
            await asyncio.sleep(0)
        self._reader.feed_eof()

    def pause_reading(self) -> None:
        self._resumed.clear()

    def resume_reading(self) -> None:
        self._resumed.set()

    def is_reading(self) -> bool:
        return self._resumed.is_set()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True
        self._resumed.set()


def _unwatchable(fd: int) -> bool:
    """True for what the event loop cannot watch but plain reads and writes serve: a regular file, or a
    device that is not a terminal (`/dev/null`), which epoll refuses with `EPERM`."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if stat.S_ISREG(mode) or stat.S_ISBLK(mode):
        return True
    return stat.S_ISCHR(mode) and not os.isatty(fd)


def stdin_is_closed(fd: int = 0) -> bool:
    """True when the process was started without a stdin (`<&-`).

    Python then sets `sys.stdin` to `None`, and descriptor 0 is free: the next file opened (or
    `protect_stdout`'s duplicate of stdout) takes it, so it is never read as the client's stream.
    """
    if fd == 0 and sys.stdin is None:  # pyright: ignore[reportUnnecessaryComparison]
        return True
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


async def stdio_streams(
    *, limit: int, stdin_fd: int = 0, stdout_fd: int | None = None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Asyncio streams over stdin and the protocol's stdout (`stdout_fd`, by default `sys.stdout`'s).

    `limit` is the reader's buffer size (a line may be longer: see
    [`LineReader`][acpkit_core.server.transport.LineReader]). A closed stdin reads as an empty
    stream; `/dev/null` and regular files are read to their end.
    """
    if os.name == "nt":  # the SDK's thread-fed streams
        from acp.stdio import stdio_streams as sdk_stdio_streams

        return await sdk_stdio_streams(limit=limit)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    if stdin_is_closed(stdin_fd):
        reader.feed_eof()  # no client at all: the session is over before it starts
    elif _unwatchable(stdin_fd):
        reader.set_transport(_FileReadTransport(stdin_fd, reader))
    else:
        protocol = asyncio.StreamReaderProtocol(reader)
        await loop.connect_read_pipe(lambda: protocol, os.fdopen(stdin_fd, "rb", buffering=0, closefd=False))
    out_fd = sys.stdout.fileno() if stdout_fd is None else stdout_fd
    write_protocol = asyncio.streams.FlowControlMixin()
    transport: asyncio.WriteTransport
    if _unwatchable(out_fd):
        transport = _FileWriteTransport(out_fd)
    else:
        pipe = os.fdopen(out_fd, "wb", buffering=0, closefd=False)
        transport, _ = await loop.connect_write_pipe(lambda: write_protocol, pipe)
    return reader, asyncio.StreamWriter(transport, write_protocol, None, loop)
