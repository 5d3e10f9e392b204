"""One remote ACP connection: an [`AcpAgent`][acpkit_core.server.AcpAgent] served over frames.

A WebSocket or a Streamable HTTP connection hands the agent one JSON-RPC message per frame (a text
frame, or a POST body). [`FrameTransport`][acpkit_core.remote.connection.FrameTransport] is the
SDK connection's transport for it: each frame is classified by the same code as a stdio line
([`classify`][acpkit_core.server.transport.classify]: malformed JSON, batches and oversized
messages answered per JSON-RPC), and what the agent sends goes to the connection's `deliver`
(a WebSocket text frame, or an event on the connection's SSE stream).

Streamed updates are coalesced as on stdio: a notification sent within the write window
(`AgentOptions.write_window_ms`) of the last one waits, and the window's notifications are
delivered together at its end, in one event-loop pass, so the WebSocket's corked transport and the
SSE stream each write them with one system call. A response or a request goes at once, after
everything waiting; so does the first notification after a quiet window.
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
from ..server.transport import PREFIX_BYTES, WRITE_WINDOW_MS, BigRequests, Oversized, classify
from ..telemetry.observer import connection_probe

__all__ = ["Deliver", "FrameTransport", "RemoteConnection"]

logger = logging.getLogger("acpkit_core.remote")

Deliver = Callable[[dict[str, Any]], Awaitable[None]]
"""Sends one message from the agent to the remote client."""

INBOX_FRAMES: Final = 64
"""Frames read ahead of the agent; past this the reader waits (back-pressure on the client)."""

HELD_MESSAGES: Final = 256
"""Past this many notifications waiting for the write window's end, they are delivered at once."""


def _size(message: dict[str, Any]) -> int:
    """Bytes of `message` as JSON (what the frame or event carries)."""
    try:
        return len(pydantic_core.to_json(message))
    except pydantic_core.PydanticSerializationError:
        return len(str(message))


class FrameTransport:
    """The SDK connection's message transport for one remote connection."""

    def __init__(self, deliver: Deliver, *, max_message_bytes: int, window_ms: float = WRITE_WINDOW_MS) -> None:
        self._deliver = deliver
        self._limit = max_message_bytes
        self._inbox: asyncio.Queue[bytes | Oversized | None] = asyncio.Queue(INBOX_FRAMES)
        self._ended = False
        self._big = BigRequests()
        self._window = max(window_ms, 0.0) / 1000.0
        self._held: list[dict[str, Any]] = []
        self._timer: asyncio.TimerHandle | None = None
        """Set while a window is open."""
        self._order = asyncio.Lock()
        """Held while messages are delivered outside the window, so none overtakes another."""
        self._releases: set[asyncio.Task[None]] = set()

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
        if self._timer is not None and (isinstance(payload, list) or "id" in payload):
            self._timer.cancel()  # all delivered below: the next update goes at once again
            self._timer = None
        async with self._order:
            await self._deliver_held()
            if isinstance(payload, list):  # a refused batch: its answers, one frame each
                for item in payload:
                    await self._deliver(item)
            else:
                await self._deliver(payload)

    async def send(self, message: dict[str, Any]) -> None:
        """Send one message to the client (a notification may wait for the write window's end)."""
        self._big.sent(message)
        if "id" in message or not self._window:
            await self._send_any(message)
        elif self._timer is not None:  # inside an open window: wait for its end
            self._held.append(message)
            if len(self._held) >= HELD_MESSAGES:
                await self._release()
        else:  # the first after a quiet window: at once, and the next ones wait
            self._timer = asyncio.get_running_loop().call_later(self._window, self._window_ended)
            await self._send_any(message)

    def _window_ended(self) -> None:
        if not self._held:
            self._timer = None
            return
        self._timer = asyncio.get_running_loop().call_later(self._window, self._window_ended)
        task = asyncio.ensure_future(self._release())
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def _release(self) -> None:
        async with self._order:
            await self._deliver_held()

    async def _deliver_held(self) -> None:
        while self._held:  # all in one event-loop pass unless the client pushes back
            held, self._held = self._held, []
            for message in held:
                await self._deliver(message)

    async def close(self) -> None:
        """Deliver what waits for the window, unless the client has gone (the frames' owner closes the
        socket or stream)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._ended:
            self._held.clear()
            return
        await self._release()


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
        self.transport = FrameTransport(
            deliver_one, max_message_bytes=max_message_bytes, window_ms=agent.options.write_window_ms
        )
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
