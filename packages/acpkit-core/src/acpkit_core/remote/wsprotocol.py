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
import time
from dataclasses import dataclass
from typing import Any, Final, cast

from .budget import Account, InflightBudget
from .frames import FrameGate
from .guard import ConnectionGuard

__all__ = [
    "FLUSH_BYTES",
    "LINK_KEY",
    "REFUSED_KEY",
    "CorkedTransport",
    "SocketLink",
    "WireSettings",
    "websocket_protocol",
]

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


LINK_KEY: Final = "acpkit.link"
"""Where the ASGI scope's `state` holds a WebSocket's [`SocketLink`][acpkit_core.remote.wsprotocol.SocketLink]."""
REFUSED_KEY: Final = "acpkit.refused"
"""The key of a `websocket.receive` event carrying a message dropped at its header (a `Refused`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WireSettings:
    """What the WebSocket protocol needs from the server (set as `uvicorn.Config.acpkit_wire`)."""

    budget: InflightBudget
    """The server-wide budget of bytes in flight."""
    max_message_bytes: int
    """The largest JSON-RPC message accepted."""
    outbound_bytes: int
    """Bytes waiting to be written to one client past which its sender waits (the socket's high-water mark)."""
    guard: ConnectionGuard | None = None
    """The connection guard (the handshake deadline, the cap on waiting connections)."""


class SocketLink:
    """What the endpoint holds of one WebSocket's protocol: its budget account, frame gate and stall clock."""

    __slots__ = ("_protocol", "account", "gate", "stalled_since")

    def __init__(self, protocol: asyncio.Protocol, account: Account, gate: FrameGate) -> None:
        self._protocol = protocol
        self.account = account
        """This connection's share of the budget of bytes in flight."""
        self.gate = gate
        """Admits or drops the client's frames."""
        self.stalled_since: float | None = None
        """`time.monotonic()` since when more than the outbound bound waits for the client; `None` while it reads."""

    def stalled_for(self, now: float) -> float:
        """Seconds the client has kept the outbound buffer full (0 when it reads)."""
        return 0.0 if self.stalled_since is None else now - self.stalled_since

    def abort(self) -> None:
        """Close the socket at once, dropping what waits for the client (who takes nothing)."""
        transport: Any = getattr(self._protocol, "transport", None)
        if transport is not None:
            transport.abort()


def _corked_protocol() -> type[asyncio.Protocol]:
    """uvicorn's sansio WebSocket protocol on a corked transport (raises if uvicorn changed)."""
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    from websockets.protocol import State

    for name in (
        "connection_made",
        "connection_lost",
        "send",
        "data_received",
        "handle_connect",
        "pause_writing",
        "resume_writing",
    ):
        if not callable(getattr(WebSocketsSansIOProtocol, name, None)):
            raise AttributeError(f"uvicorn's WebSocketsSansIOProtocol has no {name}")
    probe: Any = WebSocketsSansIOProtocol.__init__
    for name in (
        "loop",
        "conn",
        "writable",
        "close_sent",
        "disconnected",
        "handshake_complete",
        "initial_response",
        "queue",
        "read_paused",
    ):
        if name not in probe.__code__.co_names:
            raise AttributeError(f"uvicorn's WebSocketsSansIOProtocol no longer sets {name}")

    class CorkedWebSocketProtocol(WebSocketsSansIOProtocol):
        """uvicorn's `websockets-sansio` protocol writing through a `CorkedTransport`.

        With the server's settings on uvicorn's config (`config.acpkit_wire`), it also reports its
        handshake to the connection guard, admits or drops the client's frames by their header
        ([`FrameGate`][acpkit_core.remote.frames.FrameGate]), bounds what waits to be written for
        the client, and says how long the client has taken nothing
        ([`SocketLink`][acpkit_core.remote.wsprotocol.SocketLink], in the ASGI scope's state).
        """

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            wire: object = getattr(self.config, "acpkit_wire", None)
            self.acpkit_wire = wire if isinstance(wire, WireSettings) else None
            self.acpkit_link: SocketLink | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            corked = CorkedTransport(cast(asyncio.Transport, transport), self.loop)
            super().connection_made(cast(asyncio.Transport, corked))
            wire = self.acpkit_wire
            if wire is not None:
                inner = cast(asyncio.Transport, transport)
                inner.set_write_buffer_limits(high=wire.outbound_bytes)
                if wire.guard is not None and wire.guard.opened(self, inner):
                    wire.guard.wait(self, inner)

        def handle_connect(self, event: Any) -> None:
            super().handle_connect(event)
            wire = self.acpkit_wire
            if wire is not None and not self.handshake_complete:  # upgrading: the app decides next
                account = Account(wire.budget)
                link = SocketLink(self, account, FrameGate(limit=wire.max_message_bytes, admit=account.reserve))
                self.acpkit_link = link
                scope: Any = self.scope
                scope["state"][LINK_KEY] = link

        def data_received(self, data: bytes) -> None:
            link = self.acpkit_link
            if link is None or not self.handshake_complete:
                super().data_received(data)
                return
            gate = link.gate
            for segment in gate.feed(data):
                if isinstance(segment, bytes):
                    super().data_received(segment)
                elif not self.close_sent:
                    event: Any = {"type": "websocket.receive", "text": None, REFUSED_KEY: segment}
                    self.queue.put_nowait(event)
                    if not self.read_paused:  # as uvicorn does for each message: the app reads it first
                        self.read_paused = True
                        self.transport.pause_reading()
            if gate.failure is not None and not self.close_sent:
                code, reason = gate.failure
                self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
                self.conn.fail(code, reason)
                self.transport.write(b"".join(self.conn.data_to_send()))
                self.close_sent = True
                self.transport.close()

        def pause_writing(self) -> None:
            super().pause_writing()
            if self.acpkit_link is not None and self.acpkit_link.stalled_since is None:
                self.acpkit_link.stalled_since = time.monotonic()

        def resume_writing(self) -> None:
            super().resume_writing()
            if self.acpkit_link is not None:
                self.acpkit_link.stalled_since = None

        async def send(self, message: Any) -> None:
            """A text message on an open connection is framed here; everything else as uvicorn does."""
            text = message.get("text") if message["type"] == "websocket.send" else None
            if message["type"] == "websocket.accept" and self.acpkit_wire is not None:
                await super().send(message)
                if self.handshake_complete and self.acpkit_wire.guard is not None:
                    self.acpkit_wire.guard.arrived(self)
                return
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
            wire = self.acpkit_wire
            if wire is not None and wire.guard is not None:
                wire.guard.closed(self)
            if self.acpkit_link is not None:
                self.acpkit_link.stalled_since = None
                self.acpkit_link.account.close()
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
