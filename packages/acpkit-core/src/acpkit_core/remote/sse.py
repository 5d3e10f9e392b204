"""A Streamable HTTP connection's outbound messages: a bounded buffer feeding its SSE stream.

The agent's messages wait in [`SseOutbox`][acpkit_core.remote.sse.SseOutbox] until the client's
`GET` stream takes them (every message waiting goes out in one write). The buffer holds at most
`limit` bytes (and always one message, whatever its size): past that the agent waits, so a client
that opens no stream, or stops reading it, stops the turn instead of filling the server's memory.
How long it has waited is [`stalled_since`][acpkit_core.remote.sse.SseOutbox.stalled_since]; the
server closes a connection stalled longer than its idle limit.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, Final

__all__ = ["SSE_KEEPALIVE_SECONDS", "SseOutbox"]

SSE_KEEPALIVE_SECONDS: Final = 15.0
"""A comment line is sent on a stream that had nothing to say for this long (proxies keep it open)."""


class SseOutbox:
    """Messages waiting for (or flowing to) a connection's SSE stream, at most `limit` bytes of them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """Bytes held for the client past which the agent waits."""
        self.attached = False
        """True while a `GET` stream reads the outbox."""
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        """Answers that go in an HTTP response rather than on the stream (`initialize`), by JSON id."""
        self.asked: dict[str, str] = {}
        """The session each request of the agent to the client is about, by JSON id, until answered."""
        self.stalled_since: float | None = None
        """`time.monotonic()` since when the agent has been waiting for room; `None` while the client reads."""
        self.ended = False
        """Set when the connection ended: the stream ends, what is still sent is dropped."""
        self._items: deque[bytes] = deque()
        self._bytes = 0
        self._readable = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()

    @property
    def held(self) -> int:
        """Bytes waiting now."""
        return self._bytes

    async def put(self, data: bytes) -> None:
        """Queue one event; waits while `limit` bytes wait already (dropped once the outbox ended)."""
        while self._bytes and self._bytes + len(data) > self.limit and not self.ended:
            if self.stalled_since is None:
                self.stalled_since = time.monotonic()
            self._room.clear()
            await self._room.wait()
        if self.ended:
            return
        self._items.append(data)
        self._bytes += len(data)
        self._readable.set()

    def end(self) -> None:
        """End the stream (after what waits) and drop anything sent from now on."""
        self.ended = True
        self._readable.set()
        self._room.set()

    async def events(self) -> AsyncIterator[bytes]:
        """The stream's body: every event waiting in one piece, keepalive comments, until the end."""
        try:
            while True:
                if not self._items and not self.ended:
                    self._readable.clear()
                    try:
                        await asyncio.wait_for(self._readable.wait(), SSE_KEEPALIVE_SECONDS)
                    except TimeoutError:
                        yield b": keepalive\n\n"
                        continue
                if self._items:
                    batch = b"".join(self._items) if len(self._items) > 1 else self._items[0]
                    self._items.clear()
                    self._bytes = 0
                    self.stalled_since = None
                    self._room.set()
                    yield batch
                elif self.ended:
                    return
        finally:
            self.attached = False
