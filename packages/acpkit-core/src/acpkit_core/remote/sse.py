"""A Streamable HTTP connection's outbound messages: its SSE streams, fed from one bounded buffer.

Per the RFD, a connection has one connection-scoped stream (`GET` with `Acp-Connection-Id`) and
may open one session-scoped stream per session (`GET` with `Acp-Session-Id` too).
[`SseRouter`][acpkit_core.remote.sse.SseRouter] sends each message of the agent to one of them:

- the answer to a session-scoped request (`session/prompt`, `session/cancel`, `session/set_mode`,
  `session/set_config_option`, `session/close`) and everything about that session while the
  request runs (its updates, the agent's requests to the client) go on the stream chosen when the
  request arrived: the session's own stream if the client had opened it, else the connection's.
  A stream is never switched in the middle of a request, so a turn's updates and its answer arrive
  on one stream, in order, even when the client opens the session's stream meanwhile (the ACP SDK's
  client does so on the first message naming the session); when the client closes the session's
  stream meanwhile, what that stream had not sent and the rest of the request, answer included,
  go on the connection's;
- the answers to every other request (`initialize` aside: its answer is the POST's response) go
  on the connection's stream, and so do `session/load`'s replayed updates unless the client opened
  the session's stream before loading it;
- any other message about a session goes on the session's stream if it is open, else on the
  connection's.

All the streams of a connection share one buffer of `limit` bytes ([`SseOutbox`][acpkit_core.remote.sse.SseOutbox]):
a message waits there until its stream takes it, and counts until the stream has handed it to the
socket. Past `limit` the agent waits (one message always fits), so a client that opens no stream,
or stops reading one, stops the turn instead of filling the server's memory; since when it waits
is [`stalled_since`][acpkit_core.remote.sse.SseRouter.stalled_since], and the server closes a
connection stalled longer than its idle limit.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, Final, cast

from ..server.turn_log import RESUME_META, TURN_ENDED

__all__ = ["SESSION_SCOPED", "SSE_KEEPALIVE_SECONDS", "SseOutbox", "SseRouter"]

SSE_KEEPALIVE_SECONDS: Final = 15.0
"""A comment line is sent on a stream that had nothing to say for this long (proxies keep it open)."""

SESSION_SCOPED: Final = frozenset(
    {"session/prompt", "session/cancel", "session/set_mode", "session/set_config_option", "session/close"}
)
"""Requests on a session open on the connection: they carry `Acp-Session-Id`, and their answers go on the
session's stream."""

_REOPENED: Final = frozenset({"session/load", "session/resume"})


def _reattaching(message: dict[str, Any]) -> bool:
    params = message.get("params")
    meta: object = cast("dict[str, Any]", params).get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and RESUME_META in meta


def _session_of(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    named: object = cast("dict[str, Any]", params).get("sessionId") if isinstance(params, dict) else None
    return named if isinstance(named, str) else None


class _Room:
    """The bytes a connection holds for its client, shared by its streams."""

    __slots__ = ("_freed", "bytes", "limit", "stalled_since")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.bytes = 0
        self.stalled_since: float | None = None
        self._freed = asyncio.Event()

    async def take(self, size: int, ended: asyncio.Event) -> None:
        while self.bytes and self.bytes + size > self.limit and not ended.is_set():
            if self.stalled_since is None:
                self.stalled_since = time.monotonic()
            self._freed.clear()
            await self._freed.wait()
        self.bytes += size

    def free(self, size: int) -> None:
        self.bytes = max(0, self.bytes - size)
        self.stalled_since = None
        self._freed.set()

    def wake(self) -> None:
        self._freed.set()


class SseOutbox:
    """The messages waiting for one SSE stream (the connection's, or one session's)."""

    def __init__(self, room: _Room, ended: asyncio.Event) -> None:
        self.attached = False
        """True while a `GET` stream reads it."""
        self.moved_to: SseOutbox | None = None
        """Where its events go once its stream is gone (the connection's outbox)."""
        self._room = room
        self._ended = ended
        self._items: deque[bytes] = deque()
        self._readable = asyncio.Event()

    async def put(self, data: bytes) -> None:
        """Queue one event; waits while the connection's buffer is full (dropped once the connection ended;
        passed on, after what was waiting, once the stream is gone)."""
        await self._room.take(len(data), self._ended)
        if self._ended.is_set():
            self._room.free(len(data))
            return
        if self.moved_to is not None:  # the stream closed while this waited for room
            self._room.free(len(data))
            await self.moved_to.put(data)
            return
        self._items.append(data)
        self._readable.set()

    def wake(self) -> None:
        """Let the stream see that the connection ended."""
        self._readable.set()

    def hand_over(self, other: SseOutbox) -> None:
        """Its stream is gone: what waits goes to `other` (after what waits there), and so does what is put
        from now on. At once, and within the connection's buffer (both share it): nothing overtakes."""
        self.moved_to = other
        if self._items:
            other._items.extend(self._items)
            self._items.clear()
            other._readable.set()

    async def events(self) -> AsyncIterator[bytes]:
        """The stream's body: every event waiting in one piece, keepalive comments, until the connection ends.

        A piece counts against the connection's buffer until the socket has taken it (the stream
        is asked for its next piece only then).
        """
        while True:
            if not self._items and not self._ended.is_set():
                self._readable.clear()
                try:
                    await asyncio.wait_for(self._readable.wait(), SSE_KEEPALIVE_SECONDS)
                except TimeoutError:
                    yield b": keepalive\n\n"
                    continue
            if self._items:
                batch = b"".join(self._items) if len(self._items) > 1 else self._items[0]
                self._items.clear()
                try:
                    yield batch
                finally:
                    self._room.free(len(batch))
            elif self._ended.is_set():
                return


class SseRouter:
    """A Streamable HTTP connection's streams, and which one each message of the agent takes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """Bytes held for the client, across its streams, past which the agent waits."""
        self.ended = asyncio.Event()
        """Set when the connection ended: its streams end, what is still sent is dropped."""
        self._room = _Room(limit)
        self.main = SseOutbox(self._room, self.ended)
        """The connection-scoped stream's outbox."""
        self.sessions: dict[str, SseOutbox] = {}
        """Each session-scoped stream's outbox, while the client has it open."""
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        """Answers that go in an HTTP response rather than on a stream (`initialize`), by JSON id."""
        self.asked: dict[str, str] = {}
        """The session each request of the agent to the client is about, by JSON id, until answered."""
        self._answers: dict[str, tuple[str, SseOutbox]] = {}
        """Requests of the client about a session, by JSON id: the session, and where the answer goes."""
        self._pins: dict[str, tuple[SseOutbox, int]] = {}
        self._following: set[str] = set()
        """Sessions whose client re-attached to a turn: their messages keep their stream until its end."""
        """The stream each session's messages take while requests about it run, and how many run."""

    @property
    def stalled_since(self) -> float | None:
        """`time.monotonic()` since when the agent has waited for room; `None` while the client reads."""
        return self._room.stalled_since

    @property
    def held(self) -> int:
        """Bytes held for the client now."""
        return self._room.bytes

    def received(self, message: dict[str, Any]) -> None:
        """A request of the client is going to the agent: choose the stream of its session's messages."""
        method = message.get("method")
        if (method not in SESSION_SCOPED and method not in _REOPENED) or "id" not in message:
            return
        session = _session_of(message)
        if session is None:
            return
        stream, running = self._pins.get(session) or (self._session_stream(session) or self.main, 0)
        if method in _REOPENED and _reattaching(message) and session not in self._following:
            # What the client missed follows the answer until the turn's end: all on one stream, in order.
            self._following.add(session)
            running += 1
        self._pins[session] = (stream, running + 1)
        self._answers[json.dumps(message["id"])] = (session, stream if method in SESSION_SCOPED else self.main)

    def route(self, message: dict[str, Any]) -> SseOutbox:
        """The stream `message` (from the agent) goes on."""
        if "method" not in message:
            entry = self._answers.pop(json.dumps(message.get("id")), None)
            if entry is None:
                return self.main
            session, stream = entry
            self._unpin(session)
            if stream is not self.main and self.sessions.get(session) is not stream:
                return self.main  # the client closed that stream meanwhile: the answer follows the turn's updates
            return stream
        session = _session_of(message)
        if session is None:
            return self.main
        if "id" in message:
            self.asked[json.dumps(message["id"])] = session
        if message.get("method") == TURN_ENDED and session in self._following:
            self._following.discard(session)
            stream = self._pins.get(session, (self.main, 0))[0]
            self._unpin(session)
            return stream if stream is self.main or self.sessions.get(session) is stream else self.main
        pinned = self._pins.get(session)
        if pinned is None:
            return self._session_stream(session) or self.main
        if pinned[0] is not self.main and self.sessions.get(session) is not pinned[0]:
            self._pins[session] = (self.main, pinned[1])  # the client closed that stream meanwhile
            return self.main
        return pinned[0]

    def _session_stream(self, session: str) -> SseOutbox | None:
        return self.sessions.get(session)

    def _unpin(self, session: str) -> None:
        pinned = self._pins.get(session)
        if pinned is None:
            return
        if pinned[1] > 1:
            self._pins[session] = (pinned[0], pinned[1] - 1)
        else:
            del self._pins[session]

    def open_session(self, session: str) -> SseOutbox:
        """The outbox of the session's stream (a `GET` with `Acp-Session-Id`), made on first use."""
        outbox = self.sessions.get(session)
        if outbox is None:
            outbox = self.sessions[session] = SseOutbox(self._room, self.ended)
        return outbox

    async def closed_session(self, session: str, outbox: SseOutbox) -> None:
        """The session's stream was closed by the client: what it had not taken goes on the connection's."""
        if self.sessions.get(session) is outbox and not outbox.attached:
            del self.sessions[session]
            outbox.hand_over(self.main)

    def end(self) -> None:
        """End every stream (after what waits) and drop anything sent from now on."""
        self.ended.set()
        self._room.wake()
        self.main.wake()
        for outbox in self.sessions.values():
            outbox.wake()

    async def stream(self, outbox: SseOutbox, session: str | None) -> AsyncIterator[bytes]:
        """A `GET` stream's body over `outbox`."""
        try:
            async for piece in outbox.events():
                yield piece
        finally:
            outbox.attached = False
            if session is not None:
                await self.closed_session(session, outbox)
