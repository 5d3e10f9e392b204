"""TCP connections before they are admitted: a deadline for the request head, and a cap on how many wait.

Anyone who can reach the port can open a socket and send half a request (`GET /acp HTTP/1.1`,
then nothing): no token is needed to hold a socket, and an open file, for as long as the server
waits. [`ConnectionGuard`][acpkit_core.remote.guard.ConnectionGuard] keeps every connection that
is *waiting*: accepted (or done with its previous request) but not yet through a complete request
head, and for a WebSocket, not yet through its upgrade. A waiting connection

- is closed when it has waited `handshake_seconds`;
- is closed, the oldest first, when more than `max_pending` connections are waiting and it has
  waited `PRESSED_SECONDS` (2 s): a flood of half-open sockets is held at `max_pending` within
  seconds, and a burst of honest clients that the server has not read yet is left alone;
- is closed, the oldest first and whatever its age, to make room for a new socket when the
  process holds `max_sockets`: a client that sends its request at once is never locked out.

Each socket's kernel send buffer is fixed (`send_buffer`, the outbound buffer's size): left to the
system it grows to megabytes, which a client that never reads fills before the server's own
bound applies. The guard also caps the sockets of the process below its open-file limit
([`raise_open_file_limit`][acpkit_core.remote.guard.raise_open_file_limit]): past `max_sockets` a
new connection is closed at once (after the oldest waiting one, if any), so the process never runs
out of file descriptors (which would stop it accepting anyone, `/healthz` included).

[`guarded_http_protocol`][acpkit_core.remote.guard.guarded_http_protocol] is uvicorn's h11 HTTP
protocol reporting to the guard; the WebSocket protocol (`wsprotocol`) reports the end of its
handshake. Both find the guard on uvicorn's `Config` (`config.acpkit_guard`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
from typing import Any, Final

__all__ = ["ConnectionGuard", "guarded_http_protocol", "raise_open_file_limit", "socket_budget"]

logger = logging.getLogger("acpkit_core.remote")

FILES_RESERVED: Final = 64
"""Open files kept for everything but sockets (the store, logs, MCP servers' pipes), at least."""
MAX_BACKLOG: Final = 2048
"""The listen backlog when the open-file limit allows it (uvicorn's default)."""
MIN_BACKLOG: Final = 64
PRESSED_SECONDS: Final = 2.0
"""Past the cap of waiting connections, one that has waited this long without a complete head is closed."""


class ConnectionGuard:
    """The sockets of one server, and the ones waiting for a complete request head."""

    def __init__(
        self, *, max_pending: int, handshake_seconds: float, max_sockets: int, send_buffer: int | None = None
    ) -> None:
        self.max_pending = max_pending
        """Waiting connections allowed at once."""
        self.handshake_seconds = handshake_seconds
        """How long a connection may wait."""
        self.max_sockets = max_sockets
        """Sockets allowed at once (below the open-file limit)."""
        self.send_buffer = send_buffer
        """The kernel's send buffer for each socket (`SO_SNDBUF`; `None`: the system's, which grows to
        megabytes for a client that does not read)."""
        self.sockets = 0
        """Sockets open now."""
        self.evicted = 0
        """Waiting connections closed to make room (since start)."""
        self.timed_out = 0
        """Waiting connections closed at their deadline (since start)."""
        self.refused = 0
        """Connections closed at once: no socket left under the open-file limit (since start)."""
        self._waiting: dict[object, tuple[asyncio.BaseTransport, asyncio.TimerHandle, float]] = {}
        self._sweep: asyncio.TimerHandle | None = None

    @property
    def waiting(self) -> int:
        """Connections waiting now."""
        return len(self._waiting)

    def opened(self, protocol: object, transport: asyncio.BaseTransport) -> bool:
        """A socket was accepted; `False` when it was closed at once (no room under the open-file limit)."""
        self.sockets += 1
        if self.sockets <= self.max_sockets:
            if self.send_buffer is not None:
                sock: Any = transport.get_extra_info("socket")
                with contextlib.suppress(OSError, AttributeError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer)
            return True
        if self._waiting:
            self._evict_oldest()
            return True
        self.refused += 1
        logger.warning("refused a connection: %d sockets open, the most the open-file limit allows", self.sockets - 1)
        _close(transport)
        return False

    def closed(self, protocol: object) -> None:
        """A socket was closed."""
        self.sockets -= 1
        self.arrived(protocol)

    def wait(self, protocol: object, transport: asyncio.BaseTransport) -> None:
        """`protocol`'s connection now waits for a request head (or its WebSocket upgrade)."""
        if protocol in self._waiting:
            return
        loop = asyncio.get_running_loop()
        timer = loop.call_later(self.handshake_seconds, self._expire, protocol)
        self._waiting[protocol] = (transport, timer, loop.time())
        self._trim()

    def _trim(self) -> None:
        """Past `max_pending` waiting, close those waiting longer than `PRESSED_SECONDS`, the oldest first.

        A burst of honest clients (hundreds connecting at once to a busy server) waits a moment for
        the server to read their heads: none of them is closed for that, only sockets that have
        had the time to send a head and did not.
        """
        self._sweep = None
        if len(self._waiting) <= self.max_pending:
            return
        loop = asyncio.get_running_loop()
        pressed = min(PRESSED_SECONDS, self.handshake_seconds)
        while len(self._waiting) > self.max_pending:
            oldest = next(iter(self._waiting.values()))
            age = loop.time() - oldest[2]
            if age < pressed:  # look again when the oldest has waited that long
                self._sweep = loop.call_later(pressed - age, self._trim)
                return
            self._evict_oldest()

    def arrived(self, protocol: object) -> None:
        """`protocol`'s request head (or WebSocket upgrade) is complete: it no longer waits."""
        entry = self._waiting.pop(protocol, None)
        if entry is not None:
            entry[1].cancel()

    def _expire(self, protocol: object) -> None:
        entry = self._waiting.pop(protocol, None)
        if entry is not None:
            self.timed_out += 1
            _close(entry[0])

    def _evict_oldest(self) -> None:
        protocol = next(iter(self._waiting))
        transport, timer, _ = self._waiting.pop(protocol)
        timer.cancel()
        self.evicted += 1
        _close(transport)


def _close(transport: asyncio.BaseTransport) -> None:
    abort: Any = getattr(transport, "abort", transport.close)
    with contextlib.suppress(Exception):
        abort()


def guard_of(config: object) -> ConnectionGuard | None:
    """The guard set on a uvicorn `Config`, if any."""
    guard: object = getattr(config, "acpkit_guard", None)
    return guard if isinstance(guard, ConnectionGuard) else None


def guarded_http_protocol() -> type[asyncio.Protocol]:
    """uvicorn's h11 HTTP protocol, reporting its connection's waits to the config's guard."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        """uvicorn's h11 protocol: waiting for a request head is watched by a `ConnectionGuard`."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.acpkit_guard = guard_of(self.config)

        def connection_made(self, transport: asyncio.BaseTransport) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
            super().connection_made(transport)  # pyright: ignore[reportArgumentType]
            guard = self.acpkit_guard
            if guard is not None and guard.opened(self, transport):
                guard.wait(self, transport)

        def connection_lost(self, exc: Exception | None) -> None:
            if self.acpkit_guard is not None:
                self.acpkit_guard.closed(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            guard = self.acpkit_guard
            if guard is not None and self.conn.their_state is not h11.IDLE:
                guard.arrived(self)  # the head is in (or the socket went to the WebSocket protocol)

        def handle_websocket_upgrade(self, event: Any) -> None:
            # The socket stays open under the WebSocket protocol, which reports its close itself.
            if self.acpkit_guard is not None:
                self.acpkit_guard.arrived(self)
                self.acpkit_guard.sockets -= 1
            super().handle_websocket_upgrade(event)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            guard = self.acpkit_guard
            if guard is not None and not self.transport.is_closing():
                guard.wait(self, self.transport)  # keep-alive: the next request head has the same deadline

    return GuardedH11Protocol


def raise_open_file_limit() -> tuple[int, int]:
    """Raise this process's soft open-file limit to its hard limit where allowed; (limit now, limit before)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    before = soft
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    return soft, before


def socket_budget(open_files: int) -> tuple[int, int]:
    """(sockets, listen backlog) for a process with `open_files` open files.

    asyncio accepts up to `backlog` connections in a row before any of them reaches the guard (and
    may do so again before the guard has run), so the sockets the guard allows, plus two backlogs,
    plus room for everything else (the store, logs, MCP servers' pipes) stay under the limit: the
    process does not fail to accept for want of a file.
    """
    backlog = min(MAX_BACKLOG, max(MIN_BACKLOG, open_files // 16))
    sockets = open_files - max(FILES_RESERVED, open_files // 8) - 2 * backlog  # room for bursts in a row
    return max(1, sockets), backlog
