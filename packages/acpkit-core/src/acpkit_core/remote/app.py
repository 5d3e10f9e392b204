"""The `/acp` endpoint (both profiles of the ACP remote transport) and `/healthz`, as a Starlette app.

Routing, per the RFD "Streamable HTTP & WebSocket Transport":

| request | answer |
|---|---|
| `GET /acp` + `Upgrade: websocket` | `101` with `Acp-Connection-Id`; JSON-RPC in text frames (binary frames ignored) |
| `POST /acp` `initialize` (no `Acp-Connection-Id`) | `200`, the JSON-RPC result, `Acp-Connection-Id` header |
| `POST /acp` anything else | `202`; the answer comes on the connection's SSE stream |
| `GET /acp` + `Accept: text/event-stream` | the connection's one SSE stream (`406` without that Accept) |
| `DELETE /acp` | `202`: the connection and its sessions end |
| `GET /metrics` | the Prometheus text format, with telemetry on (`ServeOptions.metrics_path`) |

`400` for a missing `Acp-Connection-Id` (or `Acp-Session-Id` on a session-scoped POST), `404` for an
unknown (or another principal's) connection, `415` for a POST that is not `application/json`,
`501` for a batch, `413` for a body over the message size limit. Every request but `/healthz`
is authenticated first (`401`, one answer whatever failed) and its `Origin` checked (`403`), and so
is `/metrics` unless `ServeOptions.metrics_public`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

import pydantic_core
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from ..server import AcpAgent
from ..telemetry import Telemetry
from .auth import Tokens, origin_allowed
from .connection import RemoteConnection

__all__ = ["CONNECTION_HEADER", "SESSION_HEADER", "Endpoint", "Limits"]

logger = logging.getLogger("acpkit_core.remote")

CONNECTION_HEADER: Final = "Acp-Connection-Id"
SESSION_HEADER: Final = "Acp-Session-Id"
SESSION_SCOPED: Final = frozenset(
    {"session/prompt", "session/cancel", "session/set_mode", "session/set_config_option", "session/close"}
)
"""POSTs that must carry `Acp-Session-Id` (the methods acting on a session open on the connection)."""
SSE_KEEPALIVE_SECONDS: Final = 15.0
SSE_BUFFER: Final = 1024
"""Messages held for a connection whose SSE stream is not (or not yet) open; past this the agent waits."""
INITIALIZE_TIMEOUT: Final = 30.0
WS_GOING_AWAY: Final = 1001
WS_TRY_AGAIN: Final = 1013
WS_IDLE: Final = 4408
"""WebSocket close code for a connection closed by the idle limit (reason says so)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """What one `acpkit serve` process allows."""

    max_message_bytes: int
    """One JSON-RPC message (a WebSocket frame or a POST body)."""
    max_connections: int = 1000
    """Connections open at once (WebSocket and Streamable HTTP together)."""
    max_sessions_per_connection: int = 32
    """Sessions one connection may hold open."""
    idle_seconds: float = 600.0
    """A connection with no traffic and no running turn for this long is closed."""


def _error(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=dict(headers or {}))


UNAUTHORIZED: Final = "unauthorized: send Authorization: Bearer <token>"


@dataclass(eq=False)
class _SseOutbox:
    """A Streamable HTTP connection's messages waiting for (or flowing to) its SSE stream."""

    queue: asyncio.Queue[bytes | None] = field(default_factory=lambda: asyncio.Queue(SSE_BUFFER))
    attached: bool = False
    waiting: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=lambda: {})


def _json(message: dict[str, Any]) -> bytes:
    """One message as compact JSON (a lone surrogate from a model is escaped, not fatal)."""
    try:
        return pydantic_core.to_json(message)
    except pydantic_core.PydanticSerializationError:
        return json.dumps(message, separators=(",", ":")).encode("utf-8")


def _frame(message: dict[str, Any]) -> str:
    """One message as a WebSocket text frame."""
    return _json(message).decode("utf-8")


class _AsgiEndpoint:
    """An ASGI app calling `handler` (a bound method is wrapped by Starlette; this is not)."""

    def __init__(self, handler: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self._handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._handler(scope, receive, send)


class Endpoint:
    """The `/acp` and `/healthz` routes over one agent factory, with the connections they hold."""

    def __init__(
        self,
        make_agent: Callable[[], AcpAgent],
        *,
        tokens: Tokens,
        allowed_origins: tuple[str, ...],
        limits: Limits,
        path: str = "/acp",
        telemetry: Telemetry | None = None,
        metrics_path: str | None = None,
        metrics_public: bool = False,
    ) -> None:
        self._make_agent = make_agent
        self.telemetry = telemetry
        """Counts refusals; serves `metrics_path` (Prometheus) when it owns its meter provider."""
        self.metrics_path = metrics_path
        """Where the Prometheus scrape endpoint is (`None`: not served)."""
        self.metrics_public = metrics_public
        """Serve `metrics_path` without a token."""
        self.tokens = tokens
        self.allowed_origins = allowed_origins
        self.limits = limits
        self.path = path
        self.connections: dict[str, RemoteConnection] = {}
        """Open connections by id."""
        self.draining = False
        """Set on shutdown: new connections are refused (`503`) and `/healthz` answers `503`."""
        self._reaper: asyncio.Task[None] | None = None

    # --- the app ----------------------------------------------------------------------------------

    def app(self) -> Starlette:
        """The ASGI application."""

        @contextlib.asynccontextmanager
        async def lifespan(_: Starlette) -> AsyncGenerator[None]:
            self._reaper = asyncio.create_task(self._reap_idle())
            try:
                yield
            finally:
                self._reaper.cancel()
                await self.close_all(WS_GOING_AWAY, "the server is shutting down")

        routes = [
            Route(self.path, self._http, methods=["GET", "POST", "DELETE"]),
            WebSocketRoute(self.path, _AsgiEndpoint(self._websocket_asgi)),
            Route("/healthz", self._health, methods=["GET"]),
        ]
        if self.metrics_path is not None:
            routes.append(Route(self.metrics_path, self._metrics, methods=["GET"]))
        return Starlette(routes=routes, lifespan=lifespan)

    async def _metrics(self, request: Request) -> Response:
        """The Prometheus scrape endpoint: authenticated like `/acp` unless `metrics_public`."""
        if not self.metrics_public:
            refusal, _ = self._admit(request.headers)
            if refusal is not None:
                return refusal
        text = self.telemetry.prometheus_text() if self.telemetry is not None else None
        if text is None:
            return _error(404, "no metrics here: telemetry is off, or its metrics go to another meter provider")
        return Response(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    def _refused(self, reason: str) -> None:
        if self.telemetry is not None:
            self.telemetry.record_refusal(reason)

    async def _health(self, _: Request) -> Response:
        if self.draining:
            return JSONResponse({"status": "draining"}, status_code=503)
        return JSONResponse({"status": "ok", "connections": len(self.connections)})

    # --- checks shared by both profiles ---------------------------------------------------------

    def _admit(self, headers: Mapping[str, str]) -> tuple[Response | None, str | None]:
        """(a refusal, None) or (None, the principal)."""
        if not origin_allowed(headers.get("origin"), self.allowed_origins):
            self._refused("origin")
            return _error(403, "origin not allowed: the server's --allow-origin list does not include it"), None
        principal: str | None = None
        if self.tokens:
            principal = self.tokens.principal(headers.get("authorization"))
            if principal is None:
                self._refused("unauthorized")
                return _error(401, UNAUTHORIZED, {"WWW-Authenticate": "Bearer"}), None
        return None, principal

    def _room(self) -> Response | None:
        if self.draining:
            self._refused("draining")
            return _error(503, "the server is shutting down: connect to another replica", {"Retry-After": "1"})
        if len(self.connections) >= self.limits.max_connections:
            self._refused("max_connections")
            limit = self.limits.max_connections
            return _error(503, f"too many connections: this server holds at most {limit} (max_connections)")
        return None

    def _new_connection(
        self, deliver: Callable[[dict[str, Any]], Any], principal: str | None, kind: str, peer: str | None
    ) -> RemoteConnection:
        conn = RemoteConnection(
            self._make_agent(),
            deliver,
            principal=principal,
            max_message_bytes=self.limits.max_message_bytes,
            max_sessions=self.limits.max_sessions_per_connection,
            kind=kind,
            peer=peer,
        )
        self.connections[conn.id] = conn
        conn.start()
        return conn

    async def _drop(self, conn: RemoteConnection) -> None:
        self.connections.pop(conn.id, None)
        await conn.finish()

    # --- WebSocket ------------------------------------------------------------------------------

    async def _websocket_asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._websocket(WebSocket(scope, receive, send), send)

    async def _websocket(self, ws: WebSocket, send: Send) -> None:
        refusal, principal = self._admit(ws.headers)
        refusal = refusal or self._room()
        if refusal is not None:
            await ws.send_denial_response(refusal)
            return

        gone = False

        async def deliver(message: dict[str, Any]) -> None:
            nonlocal gone
            if gone:  # the client left: what is still being said to it is dropped
                return
            try:  # straight to the server (one text frame per message): this is the streaming hot path
                await send({"type": "websocket.send", "text": _frame(message)})
            except (OSError, RuntimeError):  # uvicorn's ClientDisconnected is an OSError
                gone = True
                logger.debug("the client of a WebSocket connection left; dropping what is sent to it")

        conn = self._new_connection(deliver, principal, "websocket", ws.client.host if ws.client else None)

        async def close(code: int, reason: str) -> None:
            with contextlib.suppress(RuntimeError, OSError):
                await ws.close(code, reason)

        conn.on_close = close
        await ws.accept(headers=[(CONNECTION_HEADER.lower().encode(), conn.id.encode())])
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text: str | None = message.get("text")
                if text is not None:  # binary frames are ignored (RFD)
                    await conn.feed(text.encode("utf-8"))
        finally:
            await self._drop(conn)

    # --- Streamable HTTP --------------------------------------------------------------------------

    async def _http(self, request: Request) -> Response:
        refusal, principal = self._admit(request.headers)
        if refusal is not None:
            return refusal
        if request.method == "POST":
            return await self._post(request, principal)
        conn_id = request.headers.get(CONNECTION_HEADER)
        if conn_id is None:
            return _error(400, f"missing {CONNECTION_HEADER} header (POST initialize first)")
        conn = self.connections.get(conn_id)
        if conn is None or conn.principal != principal or not isinstance(conn.sse, _SseOutbox):
            return _error(404, f"unknown {CONNECTION_HEADER}")
        if request.method == "DELETE":
            await self._drop(conn)
            return Response(status_code=202)
        if "text/event-stream" not in request.headers.get("accept", ""):
            return _error(406, "the stream needs Accept: text/event-stream")
        outbox: _SseOutbox = conn.sse
        if outbox.attached:
            return _error(409, "this connection's stream is already open (one GET stream per connection)")
        outbox.attached = True
        return StreamingResponse(
            self._events(conn, outbox),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", CONNECTION_HEADER: conn.id},
        )

    async def _events(self, conn: RemoteConnection, outbox: _SseOutbox) -> AsyncIterator[bytes]:
        """The SSE stream: every message waiting is sent in one write (a streamed answer queues many at once)."""
        queue = outbox.queue
        try:
            while True:
                if queue.empty():
                    try:
                        first = await asyncio.wait_for(queue.get(), SSE_KEEPALIVE_SECONDS)
                    except TimeoutError:
                        yield b": keepalive\n\n"
                        continue
                else:
                    first = queue.get_nowait()
                batch: list[bytes] = []
                item = first
                while item is not None:
                    batch.append(item)
                    if queue.empty():
                        break
                    item = queue.get_nowait()
                if batch:
                    yield b"".join(batch)
                if item is None:
                    return
        finally:
            outbox.attached = False

    async def _read_body(self, request: Request) -> bytes | None:
        """The body, or `None` when it is over the message size limit (not kept in memory)."""
        limit = self.limits.max_message_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return None
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                return None
        return bytes(body)

    async def _post(self, request: Request, principal: str | None) -> Response:
        if not request.headers.get("content-type", "").lower().startswith("application/json"):
            return _error(415, "Content-Type must be application/json")
        body = await self._read_body(request)
        if body is None:
            limit = self.limits.max_message_bytes
            return _error(413, f"a JSON-RPC message is over the {limit} bytes limit (max_message_bytes)")
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return _error(501, "batch requests are not supported: send one JSON-RPC message per POST")
        message = cast("dict[str, Any]", parsed) if isinstance(parsed, dict) else {}
        conn_id = request.headers.get(CONNECTION_HEADER)
        if conn_id is None:
            if message.get("method") == "initialize" and "id" in message:
                peer = request.client.host if request.client else None
                return await self._initialize(body, message, principal, peer)
            return _error(400, f"missing {CONNECTION_HEADER} header (POST initialize first)")
        conn = self.connections.get(conn_id)
        if conn is None or conn.principal != principal or not isinstance(conn.sse, _SseOutbox):
            return _error(404, f"unknown {CONNECTION_HEADER}")
        params: Any = message.get("params")
        named: Any = cast("dict[str, Any]", params).get("sessionId") if isinstance(params, dict) else None
        header = request.headers.get(SESSION_HEADER)
        if message.get("method") in SESSION_SCOPED and header is None:
            return _error(400, f"missing {SESSION_HEADER} header (session-scoped request)")
        if header is not None and isinstance(named, str) and header != named:
            return _error(400, f"{SESSION_HEADER} does not match the message's sessionId")
        await conn.feed(body)
        return Response(status_code=202)

    async def _initialize(
        self, body: bytes, message: dict[str, Any], principal: str | None, peer: str | None
    ) -> Response:
        room = self._room()
        if room is not None:
            return room
        outbox = _SseOutbox()

        async def deliver(msg: dict[str, Any]) -> None:
            if "method" not in msg and (waiter := outbox.waiting.pop(json.dumps(msg.get("id")), None)):
                waiter.set_result(msg)
                return
            await outbox.queue.put(b"event: message\ndata: " + _json(msg) + b"\n\n")

        conn = self._new_connection(deliver, principal, "http", peer)
        conn.sse = outbox

        async def close(code: int, reason: str) -> None:
            self.connections.pop(conn.id, None)
            with contextlib.suppress(asyncio.QueueFull):
                outbox.queue.put_nowait(None)

        conn.on_close = close
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        outbox.waiting[json.dumps(message["id"])] = waiter
        await conn.feed(body)
        try:
            answer = await asyncio.wait_for(waiter, INITIALIZE_TIMEOUT)
        except TimeoutError:
            await self._drop(conn)
            return _error(504, "initialize timed out")
        return JSONResponse(answer, headers={CONNECTION_HEADER: conn.id})

    # --- idle connections and shutdown ------------------------------------------------------------

    async def _reap_idle(self) -> None:
        idle = self.limits.idle_seconds
        while True:
            await asyncio.sleep(min(5.0, max(idle / 4, 0.05)))
            now = time.monotonic()
            for conn in list(self.connections.values()):
                if not conn.busy and now - conn.last_active > idle:
                    logger.info("connection %s idle for %.0f s: closed", conn.id, idle)
                    await self._close(conn, WS_IDLE, f"closed after {idle:g} s without traffic (idle_seconds)")

    async def _close(self, conn: RemoteConnection, code: int, reason: str) -> None:
        conn.closing = reason
        self.connections.pop(conn.id, None)
        if conn.on_close is not None:
            await conn.on_close(code, reason)
        await conn.finish()

    async def drain(self, grace_seconds: float) -> None:
        """Stop taking connections, let running turns end for up to `grace_seconds`, then cancel them.

        A cancelled turn ends `cancelled` and is recorded like any other; then every connection is
        closed (WebSocket close 1001, SSE streams ended).
        """
        self.draining = True
        deadline = time.monotonic() + grace_seconds
        while any(c.busy for c in self.connections.values()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        cancelled = sum(c.cancel_turns() for c in self.connections.values())
        if cancelled:
            logger.warning("shutdown: cancelled %d running turn(s) after %.0f s", cancelled, grace_seconds)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*(c.turns_ended() for c in self.connections.values())), 10)
        await self.close_all(WS_GOING_AWAY, "the server is shutting down: reconnect to another replica")

    async def close_all(self, code: int, reason: str) -> None:
        """Close every connection."""
        await asyncio.gather(*(self._close(c, code, reason) for c in list(self.connections.values())))
