"""One remote ACP connection: an [`AcpAgent`][acpkit_core.server.AcpAgent] served over frames.

A WebSocket or a Streamable HTTP connection hands the agent one JSON-RPC message per frame (a text
frame, or a POST body). [`FrameTransport`][acpkit_core.remote.connection.FrameTransport] is the
SDK connection's transport for it: each frame is classified by the same code as a stdio line
([`classify`][acpkit_core.server.transport.classify]: malformed JSON, batches and oversized
messages answered per JSON-RPC), and what the agent sends goes to the connection's `deliver`
(a WebSocket text frame, or an event on the connection's SSE stream).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Final, cast

import acp
import pydantic_core

from ..server import AcpAgent
from ..server.transport import PREFIX_BYTES, BigRequests, Oversized, classify
from ..telemetry.observer import connection_probe

__all__ = ["Deliver", "FrameTransport", "RemoteConnection"]

logger = logging.getLogger("acpkit_core.remote")

Deliver = Callable[[dict[str, Any]], Awaitable[None]]
"""Sends one message from the agent to the remote client."""

INBOX_FRAMES: Final = 64
"""Frames read ahead of the agent; past this the reader waits (back-pressure on the client)."""


def _size(message: dict[str, Any]) -> int:
    """Bytes of `message` as JSON (what the frame or event carries)."""
    try:
        return len(pydantic_core.to_json(message))
    except pydantic_core.PydanticSerializationError:
        return len(str(message))


class FrameTransport:
    """The SDK connection's message transport for one remote connection."""

    def __init__(self, deliver: Deliver, *, max_message_bytes: int) -> None:
        self._deliver = deliver
        self._limit = max_message_bytes
        self._inbox: asyncio.Queue[bytes | Oversized | None] = asyncio.Queue(INBOX_FRAMES)
        self._ended = False
        self._big = BigRequests()

    async def feed(self, frame: bytes) -> None:
        """Queue one frame from the client (waits while the agent is `INBOX_FRAMES` behind)."""
        if self._ended:
            return
        item: bytes | Oversized = frame
        if len(frame) > self._limit:
            item = Oversized(prefix=frame[:PREFIX_BYTES], size=len(frame))
        await self._inbox.put(item)

    def end(self) -> None:
        """The client has gone: the agent reads the end of input next (frames not yet read are dropped)."""
        if self._ended:
            return
        self._ended = True
        while self._inbox.full():
            self._inbox.get_nowait()
        self._inbox.put_nowait(None)

    async def receive(self) -> dict[str, Any] | None:
        """The next valid message, answering invalid ones as a stdio line would be; `None` at the end."""
        while True:
            frame = await self._inbox.get()
            if frame is None:
                return None
            if isinstance(frame, bytes) and not frame.strip(b" \t\r\n"):
                continue
            inbound = classify(frame, self._limit)
            if inbound.note:
                logger.warning("%s", inbound.note)
            for reply in inbound.replies:
                try:
                    await self._send_any(reply)
                except ConnectionError:
                    return None
            if inbound.message is not None:
                self._big.received(inbound.message, len(frame) if isinstance(frame, bytes) else frame.size)
                return inbound.message

    async def _send_any(self, payload: dict[str, Any] | list[dict[str, Any]]) -> None:
        if isinstance(payload, list):  # a refused batch: its answers, one frame each
            for item in payload:
                await self._deliver(item)
        else:
            await self._deliver(payload)

    async def send(self, message: dict[str, Any]) -> None:
        """Send one message to the client."""
        self._big.sent(message)
        await self._deliver(message)

    async def close(self) -> None:
        """Nothing to release: the frames' owner closes the socket or stream."""


class RemoteConnection:
    """One remote client's ACP connection: its own `AcpAgent`, transport and serving task."""

    def __init__(
        self,
        agent: AcpAgent,
        deliver: Deliver,
        *,
        principal: str | None,
        max_message_bytes: int,
        max_sessions: int | None,
        kind: str = "websocket",
        peer: str | None = None,
    ) -> None:
        self.id = uuid.uuid4().hex
        """The `Acp-Connection-Id`."""
        self.agent = agent
        """The ACP agent serving this connection (sessions, turns)."""
        self.principal = principal
        """Who authenticated it (`None` without tokens)."""
        agent.sessions.principal = principal
        agent.sessions.max_open_sessions = max_sessions
        self.probe = connection_probe(agent, kind, principal=principal, connection_id=self.id, peer=peer)
        """Its telemetry (`kind` is `websocket` or `http`); `None` when telemetry is off."""
        self.closing: str | None = None
        """Why the server closed it (`None` while open, or when the client left)."""
        deliver_one = self._deliver if self.probe is None else self._deliver_counted
        self.transport = FrameTransport(deliver_one, max_message_bytes=max_message_bytes)
        self.last_active = time.monotonic()
        """When a frame last came or went (the idle limit counts from here)."""
        self.sse: Any = None
        """The Streamable HTTP stream's outbox; `None` for a WebSocket connection."""
        self.on_close: Callable[[int, str], Awaitable[None]] | None = None
        """Closes the socket or stream with a code and a reason (set by its handler)."""
        self._deliver_to = deliver
        self._task: asyncio.Task[None] | None = None

    async def _deliver(self, message: dict[str, Any]) -> None:
        self.last_active = time.monotonic()
        await self._deliver_to(message)

    async def _deliver_counted(self, message: dict[str, Any]) -> None:
        """`_deliver`, counting the message (telemetry on)."""
        assert self.probe is not None
        self.last_active = time.monotonic()
        self.probe.counts.note(message, _size(message))
        await self._deliver_to(message)

    def start(self) -> None:
        """Start serving (the agent reads frames as they are fed)."""
        self._task = asyncio.create_task(self._serve(), name=f"acp-connection-{self.id[:8]}")

    async def _serve(self) -> None:
        try:
            # AcpAgent leaves out what it does not serve (so those answer -32601): cast, not subclass.
            await acp.run_agent(cast(acp.Agent, self.agent), self.transport, use_unstable_protocol=True)
        except Exception:
            logger.exception("connection %s failed", self.id)
        finally:
            await self.agent.shutdown()
            if self.probe is not None:
                self.probe.close(self.closing)

    async def feed(self, frame: bytes) -> None:
        """One frame from the client."""
        self.last_active = time.monotonic()
        await self.transport.feed(frame)

    @property
    def busy(self) -> bool:
        """True while one of its sessions runs a turn."""
        return bool(self.agent.sessions.running())

    def cancel_turns(self) -> int:
        """Cancel every running turn (each ends `cancelled` and is recorded); how many there were."""
        running = self.agent.sessions.running()
        for live in running:
            self.agent.turns.cancel(live.session.id)
        return len(running)

    async def turns_ended(self) -> None:
        """Wait until no turn of this connection runs."""
        for live in self.agent.sessions.running():
            await live.idle.wait()

    async def finish(self, timeout: float = 10.0) -> None:
        """End the input and wait (up to `timeout`) for the agent to close its sessions."""
        self.transport.end()
        if self._task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout)
        except TimeoutError:
            logger.warning("connection %s did not end within %.0f s: cancelled", self.id, timeout)
            self._task.cancel()
