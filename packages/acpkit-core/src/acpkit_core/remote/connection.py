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
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Final, Protocol, cast

import acp
import pydantic_core

from ..server import AcpAgent
from ..server.jsonrpc import INVALID_REQUEST, Inbound, error_response, oversized
from ..server.probes import connection_probe
from ..server.reattach import follow
from ..server.session_manager import Admission
from ..server.transport import PREFIX_BYTES, WRITE_WINDOW_MS, BigRequests, Oversized, classify
from .budget import Account
from .frames import Refused

__all__ = ["Deliver", "FrameTransport", "Outbound", "RemoteConnection"]

logger = logging.getLogger("acpkit_core.remote")

Deliver = Callable[[dict[str, Any]], Awaitable[None]]
"""Sends one message from the agent to the remote client."""


class Outbound(Protocol):
    """Where a connection's messages wait for its client."""

    @property
    def stalled_since(self) -> float | None:
        """`time.monotonic()` since when the client has taken nothing with the buffer full; `None` while it reads."""
        ...


INBOX_FRAMES: Final = 64
"""Frames read ahead of the agent; past this the reader waits (back-pressure on the client)."""

NOT_INITIALIZED: Final = (
    "initialize first: the first request on a remote connection must be `initialize` "
    "(the RFD's WebSocket flow; on Streamable HTTP the connection begins with its POST)"
)

_Item = bytes | Oversized | Refused | None
HELD_MESSAGES: Final = 256
"""Past this many notifications waiting for the write window's end, they are delivered at once."""


def _size(message: dict[str, Any]) -> int:
    """Bytes of `message` as JSON (what the frame or event carries)."""
    try:
        return len(pydantic_core.to_json(message))
    except pydantic_core.PydanticSerializationError:
        return len(str(message))


_SUPERSEDED: set[asyncio.Task[None]] = set()


class FrameTransport:
    """The SDK connection's message transport for one remote connection.

    Every message from the client is counted against the server's budget of bytes in flight
    ([`Account`][acpkit_core.remote.budget.Account]) from when it arrives until it is handled: a
    request until its answer is sent, anything else until the agent has taken it. A message the
    budget cannot take is answered with an error naming it, and never read. Until the client has
    sent `initialize`, any other request is answered -32600 (the RFD: `initialize` comes first).

    Notifications are written in windows of `window_ms` (`AgentOptions.write_window_ms`): the first
    after a quiet window goes at once, the next ones wait for the window's end (at most
    `HELD_MESSAGES` of them), and an answer takes every held one out before it.
    """

    def __init__(
        self, deliver: Deliver, *, max_message_bytes: int, account: Account, window_ms: float = WRITE_WINDOW_MS
    ) -> None:
        self._deliver = deliver
        self._limit = max_message_bytes
        self.account = account
        """This connection's share of the server's budget of bytes in flight."""
        self._inbox: asyncio.Queue[tuple[_Item, int]] = asyncio.Queue(INBOX_FRAMES)
        self._ended = False
        self._big = BigRequests()
        self._initialized = False
        self._answering: dict[str | int, int] = {}
        """Bytes held by each request not answered yet, by id."""
        self._taken = 0
        """Bytes of the last message handed to the agent that was not a request (released on the next read)."""
        self._window = max(window_ms, 0.0) / 1000.0
        self._held: list[dict[str, Any]] = []
        self._timer: asyncio.TimerHandle | None = None
        """Set while a window is open."""
        self._order = asyncio.Lock()
        """Held while messages are delivered outside the window, so none overtakes another."""
        self._releases: set[asyncio.Task[None]] = set()

    async def feed(self, frame: bytes, *, reserved: bool = False) -> None:
        """Queue one frame from the client (waits while the agent is `INBOX_FRAMES` behind).

        `reserved`: its bytes were already taken from the budget (by the frame gate or the POST
        handler); otherwise they are taken here, and a frame that does not fit is answered.
        """
        if self._ended:
            if reserved:
                self.account.release(len(frame))
            return
        item: _Item = frame
        held = len(frame) if reserved else 0
        if len(frame) > self._limit:
            item = Oversized(prefix=frame[:PREFIX_BYTES], size=len(frame))
            self.account.release(held)
            held = 0
        elif not reserved:
            if self.account.reserve(len(frame)):
                held = len(frame)
            else:
                item = Refused(prefix=frame[:PREFIX_BYTES], size=len(frame), reason="budget")
        await self._inbox.put((item, held))

    async def refuse(self, refused: Refused) -> None:
        """Answer a message the frame gate dropped at its header (too big, or over the budget)."""
        if not self._ended:
            await self._inbox.put((refused, 0))

    def end(self) -> None:
        """The client has gone: the agent reads the end of input next (frames not yet read are dropped)."""
        if self._ended:
            return
        self._ended = True
        while not self._inbox.empty():
            _, held = self._inbox.get_nowait()
            self.account.release(held)
        self._inbox.put_nowait((None, 0))

    async def receive(self) -> dict[str, Any] | None:
        """The next valid message, answering invalid ones as a stdio line would be; `None` at the end."""
        self.account.release(self._taken)
        self._taken = 0
        while True:
            frame, held = await self._inbox.get()
            if frame is None:
                return None
            if isinstance(frame, bytes) and not frame.strip(b" \t\r\n"):
                self.account.release(held)
                continue
            inbound = self._classify(frame)
            if inbound.note:
                logger.warning("%s", inbound.note)
            message = inbound.message
            replies = list(inbound.replies)
            if message is not None and not self._initialized:
                message, refusal = self._before_initialize(message)
                replies.extend(refusal)
            for reply in replies:
                try:
                    await self._send_any(reply)
                except ConnectionError:
                    self.account.release(held)
                    return None
            if message is None:
                self.account.release(held)
                continue
            size = frame.size if isinstance(frame, Oversized | Refused) else len(frame)
            self._big.received(message, size)
            request_id = message.get("id")
            if "method" in message and isinstance(request_id, str | int):
                self._answering[request_id] = self._answering.get(request_id, 0) + held
            else:
                self._taken = held
            return message

    def _classify(self, frame: bytes | Oversized | Refused) -> Inbound:
        if isinstance(frame, Refused):
            if frame.reason == "size":
                return classify(Oversized(prefix=frame.prefix, size=frame.size), self._limit)
            budget = self.account.budget
            return oversized(frame.prefix, budget.refusal(frame.size), budget.refusal_data(frame.size))
        return classify(frame, self._limit)

    def _before_initialize(self, message: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """Before `initialize`: that request goes on; another request is refused, anything else dropped."""
        method = message.get("method")
        if method == "initialize" and "id" in message:
            self._initialized = True
            return message, []
        if method is not None and "id" in message:
            return None, [error_response(message.get("id"), INVALID_REQUEST, NOT_INITIALIZED)]
        logger.info("dropped a message sent before initialize: %s", method or "a response")
        return None, []

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
        """Send one message to the client (a notification may wait for the write window's end; an
        answer gives its request's bytes back to the budget)."""
        self._big.sent(message)
        if self._answering and "method" not in message:
            request_id = message.get("id")
            if isinstance(request_id, str | int):
                self.account.release(self._answering.pop(request_id, 0))
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
        account: Account,
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
            deliver_one,
            max_message_bytes=max_message_bytes,
            account=account,
            window_ms=agent.options.write_window_ms,
        )
        self.last_active = time.monotonic()
        """When a frame last came or went (the idle limit counts from here)."""
        self.sse: Any = None
        """The Streamable HTTP stream's outbox; `None` for a WebSocket connection."""
        self.outbound: Outbound | None = None
        """Where messages wait for the client (a WebSocket's socket, the SSE outbox): says since when it stalls."""
        self.on_close: Callable[[int, str], Awaitable[None]] | None = None
        """Closes the socket or stream with a code and a reason (set by its handler)."""
        self.silenced = False
        """Set when nothing more can reach the client: what the agent sends is dropped."""
        self._deliver_to = deliver
        self._task: asyncio.Task[None] | None = None
        self.detached = False
        """Set when the client left while turns ran: they go on, logged, until they end (or their grace passes)."""
        agent.outbox.on_takeover = self._superseded

    @property
    def task(self) -> asyncio.Task[None] | None:
        """The task serving the connection (it runs on while detached turns do)."""
        return self._task

    @property
    def account(self) -> Account:
        """This connection's share of the server's budget of bytes in flight."""
        return self.transport.account

    def stalled_for(self, now: float) -> float:
        """Seconds the client has taken nothing while the outbound buffer was full (0 when it reads)."""
        since = self.outbound.stalled_since if self.outbound is not None else None
        return 0.0 if since is None else now - since

    async def _deliver(self, message: dict[str, Any]) -> None:
        if self.silenced:
            return
        self.last_active = time.monotonic()
        await self._deliver_to(message)

    async def _deliver_counted(self, message: dict[str, Any]) -> None:
        """`_deliver`, counting the message (telemetry on)."""
        assert self.probe is not None
        if self.silenced:
            return
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
            await self._wait_detached()
            await self.agent.shutdown()
            if self.probe is not None:
                self.probe.close(self.closing)

    async def _wait_detached(self) -> None:
        """The client left: logged turns go on detached until they end (their grace cancels them)."""
        logs = list(self.agent.outbox.logs.values())
        if not logs:
            return
        self.detached = True
        for log in logs:
            log.detach()
        logger.info("connection %s: the client left during %d turn(s); they go on detached", self.id, len(logs))
        with contextlib.suppress(asyncio.CancelledError):
            await self.turns_ended()

    def follow(self, session_id: str, after: int) -> bool:
        """Send this client the session's update log after `after` (`Last-Event-ID`); `False` without a log."""
        return follow(self.agent.sessions, session_id, after)

    def silence(self) -> None:
        """Send nothing more to the client (it takes nothing): its turns' logged updates are only logged."""
        self.silenced = True
        for log in self.agent.outbox.logs.values():
            log.detach()

    def _superseded(self) -> None:
        """The client re-attached to one of this connection's turns elsewhere: nothing more goes to this one."""
        self.silenced = True
        task = asyncio.ensure_future(self._end_superseded())
        _SUPERSEDED.add(task)
        task.add_done_callback(_SUPERSEDED.discard)

    async def _end_superseded(self) -> None:
        self.closing = "the client re-attached on another connection"
        if self.on_close is not None:
            with contextlib.suppress(Exception):
                await self.on_close(4409, self.closing)
        await self.finish()

    async def feed(self, frame: bytes, *, reserved: bool = False) -> None:
        """One frame from the client (`reserved`: its bytes were already taken from the budget)."""
        self.last_active = time.monotonic()
        await self.transport.feed(frame, reserved=reserved)

    @property
    def busy(self) -> bool:
        """True while one of its sessions runs a turn."""
        return bool(self.agent.sessions.running())

    def has_session(self, session_id: str) -> bool:
        """True when `session_id` is open on this connection."""
        return self.agent.sessions.open_session(session_id) is not None

    @property
    def open_sessions(self) -> int:
        """Sessions open on this connection."""
        return self.agent.sessions.open_count

    @property
    def running_turns(self) -> int:
        """Turns running on this connection."""
        return len(self.agent.sessions.running())

    def admit(self, admission: Admission) -> None:
        """Check each session it opens and each turn it starts against `admission` (per-principal quotas)."""
        self.agent.sessions.admission = admission

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
        self.account.close()
        if self._task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout)
        except TimeoutError:
            if self.detached:  # its turns go on until they end or their grace passes
                return
            logger.warning("connection %s did not end within %.0f s: cancelled", self.id, timeout)
            self._task.cancel()
