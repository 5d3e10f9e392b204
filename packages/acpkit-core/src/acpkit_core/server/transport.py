"""The agent side's byte transport: newline-delimited JSON-RPC, read and written by us.

The SDK's connection moves decoded messages through a transport object; this module is ours:

- Writing: the SDK's stdio sender puts every outgoing message on a queue, wakes a writer task and
  waits for it, which costs two task switches per message; for a streamed answer that is one
  message per token. [`DirectSender`][acpkit_core.server.transport.DirectSender] writes in call
  order instead, without a task, and only waits when the peer reads slower than we write. It
  also coalesces writes: a notification (a streamed chunk) sent less than the write window
  (`AgentOptions.write_window_ms`, 2 ms) after the last write waits, with the others of that
  window, for one write at the window's end; a response or a request (the turn's answer, a
  permission question) goes at once with everything before it; so does a batch past
  `FLUSH_BYTES`. The first update after a pause goes at once. Every message stays its own line,
  in order: only the number of `write` system calls changes.
- Reading: [`LineReader`][acpkit_core.server.transport.LineReader] reads one line at a time and
  never keeps more than the message size limit of one (a longer line is skipped to its newline);
  [`WireTransport`][acpkit_core.server.transport.WireTransport] answers every line that is not a
  valid JSON-RPC message itself ([`jsonrpc`][acpkit_core.server.jsonrpc]) and hands only valid
  ones to the SDK, so no line can stop the agent. (The SDK's connection takes a transport object
  only on versions with `acp._transport`: see `server/_sdk.py`.)
- Forgetting: the SDK's receive loop keeps the last message it received until the next one
  arrives, so the text of a big prompt would stay in memory after its turn, until the client
  speaks again. [`BigRequests`][acpkit_core.server.transport.BigRequests] drops such a request's
  `params` once its answer is sent (every transport, stdio and remote, does it).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Final

from ..json_text import json_bytes
from ..limits import MAX_MESSAGE_BYTES, format_size
from .jsonrpc import INTERNAL_ERROR, Inbound, error_response, oversized, read_line
from .memory import RELEASE_AFTER_BYTES

__all__ = [
    "FLUSH_BYTES",
    "WRITE_WINDOW_MS",
    "BigRequests",
    "DirectSender",
    "LineReader",
    "Oversized",
    "WireTransport",
    "classify",
    "encode_message",
]

logger = logging.getLogger("acpkit_core.server")

PREFIX_BYTES: Final = 4096
"""How much of an over-long line is kept to find its `id`."""

WRITE_WINDOW_MS: Final = 2.0
"""The default write window (`AgentOptions.write_window_ms`): at most this long a streamed update
waits to share a write with the next ones (well under what a person can see)."""

FLUSH_BYTES: Final = 64 * 1024
"""Past this many bytes waiting, they are written at once, whatever the window."""


def encode_message(payload: dict[str, Any] | list[dict[str, Any]]) -> bytes:
    """One NDJSON line: compact UTF-8 JSON ([`json_bytes`][acpkit_core.json_text.json_bytes]) and a newline."""
    return json_bytes(payload) + b"\n"


class DirectSender:
    """Writes one JSON-RPC message per line to `writer`, in the order `send` is called.

    With a window (`window_ms > 0`), notifications sent within `window_ms` of the last write wait
    to go out together at the window's end (or past `FLUSH_BYTES`); a notification after a quiet
    window, and every response and request, is written at once, with whatever waits before it.
    `window_ms=0` writes each message on its own, as it comes.
    """

    def __init__(self, writer: asyncio.StreamWriter, *, window_ms: float = WRITE_WINDOW_MS) -> None:
        self._writer = writer
        self._closed = False
        self._window = max(window_ms, 0.0) / 1000.0
        self._waiting: list[bytes] = []
        self._waiting_bytes = 0
        self._timer: asyncio.TimerHandle | None = None
        """Set while a window is open: it ends with a write of what waits, or closes when none does."""

    async def send(self, payload: dict[str, Any] | list[dict[str, Any]]) -> None:
        """Encode and write `payload` (a message, or a batch's answers); wait only while the peer's buffer is full.

        Raises `ConnectionError` once the stream is closed or the peer has gone.
        """
        if self._closed or self._writer.is_closing():
            raise ConnectionError("Connection closed")
        if self._put(payload, encode_message(payload)):
            # The kernel did not take it all: the peer reads slower than we write. Wait while
            # the buffer is over its high-water mark (raises if the peer has gone).
            await self._writer.drain()

    def _put(self, payload: dict[str, Any] | list[dict[str, Any]], data: bytes) -> bool:
        """Write `data` now or at the window's end; whether the peer is behind (the caller drains)."""
        notification = isinstance(payload, dict) and "id" not in payload
        if self._timer is None or not notification:
            # No window open, or a response / request: everything waiting, then this, in one write.
            if self._waiting:
                self._waiting.append(data)
                self._flush()
            else:
                self._writer.write(data)
            if not notification:  # all written: the next update goes at once again
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
            elif self._window:  # the next ones wait for the window's end
                self._timer = asyncio.get_running_loop().call_later(self._window, self._window_ended)
        else:  # a notification inside an open window: it waits for the window's end
            self._waiting.append(data)
            self._waiting_bytes += len(data)
            if self._waiting_bytes >= FLUSH_BYTES:
                self._flush()
        return bool(self._writer.transport.get_write_buffer_size())

    def _flush(self) -> None:
        data = b"".join(self._waiting)
        self._waiting.clear()
        self._waiting_bytes = 0
        if not self._writer.is_closing():
            self._writer.write(data)

    def _window_ended(self) -> None:
        if self._waiting:  # still streaming: write what came, and keep the window going
            self._flush()
            self._timer = asyncio.get_running_loop().call_later(self._window, self._window_ended)
        else:
            self._timer = None

    def flush(self) -> None:
        """Write whatever waits for the window now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._waiting:
            self._flush()

    async def close(self) -> None:
        """Write what waits, then stop sending (the stream itself belongs to whoever opened it)."""
        self.flush()
        self._closed = True


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line longer than the limit: skipped, all but its first bytes unread into memory."""

    prefix: bytes
    """Its first bytes (up to 4 KiB), to find its `id`."""
    size: int
    """Its length in bytes, without the newline."""


def _head(pieces: list[bytes]) -> bytes:
    """The first `PREFIX_BYTES` of the pieces, without joining them all."""
    head = bytearray()
    for piece in pieces:
        head += piece[: PREFIX_BYTES - len(head)]
        if len(head) >= PREFIX_BYTES:
            break
    return bytes(head)


class LineReader:
    """Newline-delimited lines from `reader`, none kept in memory beyond `limit` bytes.

    A line over `limit` is read on to its newline in pieces that are dropped as they come, and
    reported as [`Oversized`][acpkit_core.server.transport.Oversized]. Memory stays within `limit`
    plus the reader's own buffer (twice its `limit`), whatever the client sends.
    """

    def __init__(self, reader: asyncio.StreamReader, limit: int) -> None:
        self._reader = reader
        self._limit = limit
        self._eof = False

    async def readline(self) -> bytes | Oversized | None:
        """The next line without its line ending, an `Oversized` line, or `None` at the end of input."""
        if self._eof:
            return None
        pieces: list[bytes] = []
        prefix: bytes | None = None
        size = 0
        while True:
            ended = True
            try:
                piece = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:  # the end of input: the last line needs no newline
                piece = exc.partial
                self._eof = True
            except asyncio.LimitOverrunError as exc:  # longer than the reader's buffer: take what it has
                piece = await self._reader.readexactly(max(exc.consumed, 1))
                ended = False
            size += len(piece)
            if prefix is None:
                pieces.append(piece)
                if size - piece.endswith(b"\n") > self._limit:  # too long: keep the start, drop the rest
                    prefix = _head(pieces)
                    pieces.clear()
            if ended:
                break
        if prefix is not None:
            return Oversized(prefix=prefix, size=size - (not self._eof))
        line = b"".join(pieces).rstrip(b"\r\n")
        if not line and self._eof:
            return None
        return line


def classify(line: bytes | Oversized, limit: int) -> Inbound:
    """What to do with one message from the client (a line, or a WebSocket / HTTP frame), never raising.

    Every transport uses it: stdio lines and remote frames get the same answers.
    """
    if isinstance(line, Oversized):
        reason = MAX_MESSAGE_BYTES.refusal(line.size, limit)
        data = {"limit": MAX_MESSAGE_BYTES.option, "max": limit, "size": line.size}
        return oversized(line.prefix, reason, data)
    try:
        return read_line(line)
    except Exception:  # a bug here must not end the connection: answer it and read on
        logger.exception("could not classify a line of %s from the client", format_size(len(line)))
        return Inbound(replies=(error_response(None, INTERNAL_ERROR, "Internal error reading the message"),))


class BigRequests:
    """Big requests until their answer is sent; then their `params` are dropped.

    The SDK's connection reads messages in a loop whose local variable keeps the last one received
    until the next arrives, and the message holds the decoded prompt. After the answer, the SDK no
    longer reads the message, so its `params` can go: a 20 MB prompt's text leaves memory when its
    turn ends, not when the client next speaks. Requests under `RELEASE_AFTER_BYTES` are not
    tracked (the size at which the server also gives memory back after the turn).
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: dict[str | int, dict[str, Any]] = {}

    def received(self, message: dict[str, Any], size: int) -> None:
        """Note `message` (`size` bytes on the wire) if it is a big request."""
        if size < RELEASE_AFTER_BYTES or "method" not in message:
            return
        request_id = message.get("id")
        if isinstance(request_id, str | int):
            self._held[request_id] = message

    def sent(self, payload: dict[str, Any] | list[dict[str, Any]]) -> None:
        """`payload` is going to the client: if it answers a big request, drop that request's `params`."""
        if not self._held or isinstance(payload, list) or "method" in payload:
            return
        request_id = payload.get("id")
        if isinstance(request_id, str | int):
            request = self._held.pop(request_id, None)
            if request is not None:
                request.pop("params", None)


class WireTransport:
    """The SDK's message transport over a byte stream pair, with JSON-RPC errors answered by us.

    `receive` hands the connection only well-formed messages; a line that is not one is answered
    (or dropped) as [`read_line`][acpkit_core.server.jsonrpc.read_line] says, and the loop reads on.
    """

    def __init__(self, reader: asyncio.StreamReader, sender: DirectSender, *, max_message_bytes: int) -> None:
        self._lines = LineReader(reader, max_message_bytes)
        self._sender = sender
        self._limit = max_message_bytes
        self._big = BigRequests()

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message to the client."""
        self._big.sent(message)
        await self._sender.send(message)

    async def receive(self) -> dict[str, Any] | None:
        """The next valid message from the client, or `None` when the input has ended."""
        while True:
            try:
                line = await self._lines.readline()
            except (ConnectionError, OSError) as exc:
                logger.info("the client's input failed (%s): ending the connection", exc)
                return None
            if line is None:
                return None
            if isinstance(line, bytes) and not line.strip(b" \t\r"):  # a blank line (JSON's whitespace)
                continue
            inbound = self._classify(line)
            if inbound.note:
                logger.warning("%s", inbound.note)
            for reply in inbound.replies:
                try:
                    await self._sender.send(reply)
                except ConnectionError:
                    return None
            if inbound.message is not None:
                self._big.received(inbound.message, len(line) if isinstance(line, bytes) else line.size)
                return inbound.message

    def _classify(self, line: bytes | Oversized) -> Inbound:
        return classify(line, self._limit)

    async def close(self) -> None:
        """Stop sending."""
        await self._sender.close()
