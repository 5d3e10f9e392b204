"""uvicorn's WebSocket protocol, with the frames of one event-loop pass written in one socket write.

A streamed answer is one `session/update` per token, and the RFD wants each JSON-RPC message in its
own text frame. Stock uvicorn writes every frame to the socket at once: one `send` system call
(and one wake-up of the reader) per token. [`CorkedTransport`][acpkit_core.remote.wsprotocol.CorkedTransport]
keeps the bytes written during one pass of the event loop and writes them together at the end of
the pass, or as soon as `FLUSH_BYTES` are waiting: the frames are the same, in the same order, one
message each; only the number of system calls changes. Nothing waits longer than the current pass.
A text message sent while the connection is open (and writable) is framed here too
([`text_frame`][acpkit_core.remote.wsprotocol.text_frame]: two to ten header bytes and the
payload) rather than through a `websockets` frame object per message; anything else (binary
frames, close, a paused or closing connection) goes through uvicorn as usual.

[`websocket_protocol`][acpkit_core.remote.wsprotocol.websocket_protocol] gives the protocol class
for `uvicorn.Config(ws=...)`: uvicorn's `websockets-sansio` protocol with its transport corked, or
`"auto"` (stock uvicorn) when the installed uvicorn no longer has what this relies on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import struct
from typing import Any, Final, cast

__all__ = ["FLUSH_BYTES", "CorkedTransport", "websocket_protocol"]

logger = logging.getLogger("acpkit_core.remote")

FLUSH_BYTES: Final = 64 * 1024
"""Past this many waiting bytes the frames are written at once (the socket's flow control then applies)."""


class CorkedTransport:
    """A transport that writes what was written during one event-loop pass in one write to `inner`.

    Everything the protocol writes goes through it (frames, pings, the close frame), so the order
    on the wire is the order of the writes. Closing writes what is waiting first.
    """

    __slots__ = ("_inner", "_loop", "_pending", "_scheduled", "_size")

    def __init__(self, inner: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._inner = inner
        self._loop = loop
        self._pending: list[bytes] = []
        self._size = 0
        self._scheduled = False

    @property
    def inner(self) -> asyncio.Transport:
        """The socket's transport."""
        return self._inner

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Queue `data`; it goes out at the end of this loop pass (or now, past `FLUSH_BYTES`)."""
        if not data:
            return
        self._pending.append(bytes(data))
        self._size += len(data)
        if self._size >= FLUSH_BYTES:
            self.flush()
        elif not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._flush_scheduled)

    def writelines(self, list_of_data: Any) -> None:
        """Queue each piece in order."""
        for data in list_of_data:
            self.write(data)

    def _flush_scheduled(self) -> None:
        self._scheduled = False
        self.flush()

    def flush(self) -> None:
        """Write everything waiting, in one write."""
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending.clear()
        self._size = 0
        self._inner.write(data)

    def discard(self) -> None:
        """Drop what is waiting (the connection is lost: nobody can read it)."""
        self._pending.clear()
        self._size = 0

    def close(self) -> None:
        """Write what is waiting, then close."""
        self.flush()
        self._inner.close()

    def abort(self) -> None:
        """Close at once, dropping what is waiting."""
        self.discard()
        self._inner.abort()

    def write_eof(self) -> None:
        """Write what is waiting, then half-close."""
        self.flush()
        self._inner.write_eof()

    def is_closing(self) -> bool:
        """As the socket's transport."""
        return self._inner.is_closing()

    def get_write_buffer_size(self) -> int:
        """Bytes not yet taken by the kernel, waiting here included."""
        return self._inner.get_write_buffer_size() + self._size

    def __getattr__(self, name: str) -> Any:
        """Everything else (`get_extra_info`, `pause_reading`, ...) is the socket transport's."""
        return getattr(self._inner, name)


_SHORT_TEXT_HEADS: Final = tuple(bytes((0x81, n)) for n in range(126))


def text_frame(payload: bytes) -> bytes:
    """One unmasked text frame with FIN set (what a server sends, RFC 6455 section 5.2)."""
    n = len(payload)
    if n < 126:
        return _SHORT_TEXT_HEADS[n] + payload
    if n < 1 << 16:
        return struct.pack("!BBH", 0x81, 126, n) + payload
    return struct.pack("!BBQ", 0x81, 127, n) + payload


def _corked_protocol() -> type[asyncio.Protocol]:
    """uvicorn's sansio WebSocket protocol on a corked transport (raises if uvicorn changed)."""
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    from websockets.protocol import State

    for name in ("connection_made", "connection_lost", "send", "data_received"):
        if not callable(getattr(WebSocketsSansIOProtocol, name, None)):
            raise AttributeError(f"uvicorn's WebSocketsSansIOProtocol has no {name}")
    probe: Any = WebSocketsSansIOProtocol.__init__
    for name in ("loop", "conn", "writable", "close_sent", "disconnected", "handshake_complete", "initial_response"):
        if name not in probe.__code__.co_names:
            raise AttributeError(f"uvicorn's WebSocketsSansIOProtocol no longer sets {name}")

    class CorkedWebSocketProtocol(WebSocketsSansIOProtocol):
        """uvicorn's `websockets-sansio` protocol writing through a `CorkedTransport`."""

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            corked = CorkedTransport(cast(asyncio.Transport, transport), self.loop)
            super().connection_made(cast(asyncio.Transport, corked))

        async def send(self, message: Any) -> None:
            """A text message on an open connection is framed here; everything else as uvicorn does."""
            text = message.get("text") if message["type"] == "websocket.send" else None
            if (
                text is not None
                and message.get("bytes") is None
                and self.writable.is_set()
                and self.handshake_complete
                and not self.close_sent
                and not self.disconnected
                and self.initial_response is None
                and self.conn.state is State.OPEN
                and not self.conn.extensions
            ):
                self.transport.write(text_frame(text.encode()))
                return
            await super().send(message)
            if message["type"] == "websocket.http.response.body" and self.close_sent:
                # The handshake ended with the refusal (401, 403, 503) just sent: uvicorn would
                # otherwise log "ASGI callable returned without completing handshake." per refusal.
                self.handshake_complete = True

        def connection_lost(self, exc: Exception | None) -> None:
            transport: Any = self.transport
            if isinstance(transport, CorkedTransport):
                transport.discard()
            super().connection_lost(exc)

    return CorkedWebSocketProtocol


@functools.cache
def websocket_protocol() -> type[asyncio.Protocol] | str:
    """The `ws=` for `uvicorn.Config`: the corked protocol, or `"auto"` when uvicorn lacks what it needs."""
    try:
        return _corked_protocol()
    except (ImportError, AttributeError) as exc:
        logger.warning("stock uvicorn WebSocket protocol (one socket write per frame): %s", exc)
        return "auto"
