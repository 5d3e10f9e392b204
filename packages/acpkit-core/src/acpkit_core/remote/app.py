"""The `/acp` endpoint (both profiles of the ACP remote transport) and `/healthz`, as a Starlette app.

Routing, per the RFD "Streamable HTTP & WebSocket Transport":

| request | answer |
|---|---|
| `GET /acp` + `Upgrade: websocket` | `101` with `Acp-Connection-Id`; JSON-RPC in text frames (binary frames ignored) |
| `POST /acp` `initialize` (no `Acp-Connection-Id`) | `200`, the JSON-RPC result, `Acp-Connection-Id` header |
| `POST /acp` anything else | `202`; the answer comes on the connection's SSE stream |
| `GET /acp` + `Accept: text/event-stream` | the connection's one SSE stream (`406` without that Accept) |
| `DELETE /acp` | `202`: the connection and its sessions end, and its SSE stream |
| `GET /metrics` | the Prometheus text format, with telemetry on (`ServeOptions.metrics_path`) |

`400` for a missing `Acp-Connection-Id` (or `Acp-Session-Id` on a session-scoped POST), `404` for an
unknown (or another principal's) connection, `415` for a POST that is not `application/json`,
`501` for a batch, `413` for a body over the message size limit. Every request but `/healthz`
is authenticated first (`401`, one answer whatever failed) and its `Origin` checked (`403`), and so
is `/metrics` unless `ServeOptions.metrics_public`.

What one client may hold is bounded ([`Limits`][acpkit_core.remote.Limits]): connections (`503`),
connections, sessions and turns per principal (`429`, -32600), bytes in flight across the server
(a JSON-RPC error or `503`), bytes waiting for one client (the agent waits; a client that takes
nothing for `idle_seconds` is closed and its turns cancelled).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, Final, cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from ..server import AcpAgent
from ..telemetry import Telemetry
from .auth import Tokens, origin_allowed
from .budget import Account, InflightBudget
from .connection import RemoteConnection
from .frames import Refused
from .framing import UNAUTHORIZED, error_response, sse_event, too_big, ws_frame
from .guard import ConnectionGuard
from .limits import Limits
from .quotas import PrincipalQuotas
from .sse import SESSION_SCOPED, SseRouter
from .wsprotocol import LINK_KEY, REFUSED_KEY, SocketLink

__all__ = ["CONNECTION_HEADER", "SESSION_HEADER", "Endpoint"]

logger = logging.getLogger("acpkit_core.remote")

CONNECTION_HEADER: Final = "Acp-Connection-Id"
SESSION_HEADER: Final = "Acp-Session-Id"
INITIALIZE_TIMEOUT: Final = 30.0
WS_NORMAL: Final = 1000
WS_GOING_AWAY: Final = 1001
WS_TRY_AGAIN: Final = 1013
WS_IDLE: Final = 4408
"""WebSocket close code for a connection closed by the idle limit (reason says so)."""
TURNS_END_SECONDS: Final = 10.0
"""How long cancelled turns get to end (and be recorded) before their connection is closed anyway."""


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
        make_agent: Callable[[], AcpAgent] | None,
        *,
        tokens: Tokens,
        allowed_origins: tuple[str, ...],
        limits: Limits,
        path: str = "/acp",
        telemetry: Telemetry | None = None,
        metrics_path: str | None = None,
        metrics_public: bool = False,
        max_sockets: int = 1 << 20,
        make_connection: Callable[..., RemoteConnection] | None = None,
    ) -> None:
        self._make_agent = make_agent
        self._make_connection = make_connection
        """Makes a connection of another kind (`acpkit serve -- CMD`: a child process); takes the keywords of
        `RemoteConnection` but the agent. `None`: a `RemoteConnection` over `make_agent()`."""
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
        self.budget = InflightBudget(limits.max_inflight_bytes)
        """Bytes of client messages in flight across every connection."""
        self.guard = ConnectionGuard(
            max_pending=limits.max_pending_connections,
            handshake_seconds=limits.handshake_seconds,
            max_sockets=max_sockets,
            send_buffer=limits.outbound_buffer_bytes,
        )
        """TCP connections waiting for their request head (deadline, cap) and the socket cap."""
        self.quotas = PrincipalQuotas(
            connections=limits.max_connections_per_principal,
            sessions=limits.max_sessions_per_principal,
            turns=limits.max_turns_per_principal,
        )
        """Connections, sessions and turns per principal."""
        self.quotas.on_refusal = self._refused
        self.stalled = 0
        """Connections closed because their client took nothing for `idle_seconds` (since start)."""
        self.detached: set[RemoteConnection] = set()
        """Connections whose client left while turns ran: the turns go on (a dropped client's, waiting
        for it to re-attach) and count against the caps until they end."""
        self._reaper: asyncio.Task[None] | None = None
        self._closing: dict[str, asyncio.Task[None]] = {}
        """Stalled connections being closed (their turns get time to end), by id."""

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
            return error_response(404, "no metrics here: telemetry is off, or its metrics go to another meter provider")
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
            return error_response(403, "origin not allowed: the server's --allow-origin list does not include it"), None
        principal: str | None = None
        if self.tokens:
            principal = self.tokens.principal(headers.get("authorization"))
            if principal is None:
                self._refused("unauthorized")
                return error_response(401, UNAUTHORIZED, {"WWW-Authenticate": "Bearer"}), None
        return None, principal

    def _room(self, principal: str | None) -> Response | None:
        if self.draining:
            self._refused("draining")
            return error_response(503, "the server is shutting down: connect to another replica", {"Retry-After": "1"})
        if len(self.connections) + len(self.detached) >= self.limits.max_connections:
            self._refused("max_connections")
            limit = self.limits.max_connections
            return error_response(503, f"too many connections: this server holds at most {limit} (max_connections)")
        refusal = self.quotas.connection_refusal(principal)
        if refusal is not None:
            self._refused("principal_connections")
            return error_response(429, refusal, {"Retry-After": "1"})
        return None

    def _new_connection(
        self,
        deliver: Callable[[dict[str, Any]], Any],
        principal: str | None,
        account: Account,
        kind: str,
        peer: str | None,
    ) -> RemoteConnection:
        settings: dict[str, Any] = {
            "principal": principal,
            "max_message_bytes": self.limits.max_message_bytes,
            "max_sessions": self.limits.max_sessions_per_connection,
            "kind": kind,
            "peer": peer,
            "account": account,
        }
        if self._make_connection is not None:
            conn = self._make_connection(deliver, **settings)
        else:
            assert self._make_agent is not None
            conn = RemoteConnection(self._make_agent(), deliver, **settings)
        self.connections[conn.id] = conn
        self.quotas.add(conn)
        conn.start()
        return conn

    def _forget(self, conn: RemoteConnection) -> None:
        self.connections.pop(conn.id, None)
        task = conn.task
        if conn.busy and task is not None and not task.done():
            # Its turns run on (detached for a client that dropped, or ending): they count against
            # the caps (max_connections, the principal's quotas) until they end, so dropping
            # connections cannot pile up turns past them.
            self.detached.add(conn)

            def ended(_: object) -> None:
                self.detached.discard(conn)
                self.quotas.remove(conn)

            task.add_done_callback(ended)
        else:
            self.quotas.remove(conn)

    async def _drop(self, conn: RemoteConnection) -> None:
        self._forget(conn)
        if isinstance(conn.sse, SseRouter):
            conn.sse.end()  # its GET streams end too (after what is already waiting)
        await conn.finish()

    # --- WebSocket ------------------------------------------------------------------------------

    async def _websocket_asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._websocket(WebSocket(scope, receive, send), send)

    async def _websocket(self, ws: WebSocket, send: Send) -> None:
        refusal, principal = self._admit(ws.headers)
        refusal = refusal or self._room(principal)
        if refusal is not None:
            await ws.send_denial_response(refusal)
            return

        gone = False

        async def deliver(message: dict[str, Any]) -> None:
            nonlocal gone
            if gone:  # the client left: what is still being said to it is dropped
                return
            try:  # straight to the server (one text frame per message): this is the streaming hot path
                await send({"type": "websocket.send", "text": ws_frame(message)})
            except (OSError, RuntimeError):  # uvicorn's ClientDisconnected is an OSError
                gone = True
                logger.debug("the client of a WebSocket connection left; dropping what is sent to it")

        state: dict[str, Any] = ws.scope.get("state") or {}
        link = state.get(LINK_KEY)
        link = link if isinstance(link, SocketLink) else None  # None: stock uvicorn (no frame gate)
        peer = ws.client.host if ws.client else None
        account = link.account if link else Account(self.budget)
        conn = self._new_connection(deliver, principal, account, "websocket", peer)
        conn.outbound = link

        async def close(code: int, reason: str) -> None:
            if link is not None and conn.stalled_for(time.monotonic()) > 0:
                link.abort()  # nothing more reaches the client: no close frame can either
                return
            with contextlib.suppress(RuntimeError, OSError):
                await ws.close(code, reason)

        conn.on_close = close
        await ws.accept(headers=[(CONNECTION_HEADER.lower().encode(), conn.id.encode())])
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    if message.get("code") == WS_NORMAL:  # the client closed it on purpose: its turns end
                        conn.cancel_turns()
                    break
                refused = message.get(REFUSED_KEY)
                if isinstance(refused, Refused):
                    conn.last_active = time.monotonic()
                    await conn.transport.refuse(refused)
                    continue
                text: str | None = message.get("text")
                if text is not None:  # binary frames are ignored (RFD)
                    await conn.feed(text.encode("utf-8"), reserved=link is not None)
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
            return error_response(400, f"missing {CONNECTION_HEADER} header (POST initialize first)")
        conn = self.connections.get(conn_id)
        if conn is None or conn.principal != principal or not isinstance(conn.sse, SseRouter):
            return error_response(404, f"unknown {CONNECTION_HEADER}")
        if request.method == "DELETE":
            conn.cancel_turns()  # ended on purpose (a dropped client re-attaches instead): its turns end
            await self._drop(conn)
            return Response(status_code=202)
        if "text/event-stream" not in request.headers.get("accept", ""):
            return error_response(406, "the stream needs Accept: text/event-stream")
        router: SseRouter = conn.sse
        session = request.headers.get(SESSION_HEADER)
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", CONNECTION_HEADER: conn.id}
        if session is None:
            outbox = router.main
        elif not conn.has_session(session):
            return error_response(404, f"unknown {SESSION_HEADER} for this connection (open or load the session first)")
        else:
            outbox = router.open_session(session)
            headers[SESSION_HEADER] = session
        if outbox.attached:
            which = "this connection's" if session is None else "this session's"
            return error_response(409, f"{which} stream is already open (one GET stream each)")
        after = request.headers.get("last-event-id")
        if after is not None and session is not None:
            # the session's stream taken up after the last update the client saw (its number: the event id)
            if not after.isdigit():
                return error_response(400, "Last-Event-ID must be the number of the last update seen (the event's id)")
            if not conn.follow(session, int(after)):
                return error_response(
                    400, "this server keeps no update log (--reconnect-grace 0): Last-Event-ID is not served"
                )
        outbox.attached = True
        return StreamingResponse(router.stream(outbox, session), media_type="text/event-stream", headers=headers)

    async def _read_body(self, request: Request, account: Account) -> bytes | Response:
        """The body, its bytes taken from the budget; or the refusal (`413` over the message size limit,
        `503` when the budget cannot take it), before more than the limit is read into memory."""
        limit = self.limits.max_message_bytes
        declared = request.headers.get("content-length")
        size = int(declared) if declared is not None and declared.isdigit() else None
        if size is not None and size > limit:
            return too_big(limit)
        if size is not None and not account.reserve(size):
            return self._over_budget(size)
        body = bytearray()
        try:
            async for chunk in request.stream():
                if size is None and not account.reserve(len(chunk)):
                    account.release(len(body))
                    return self._over_budget(len(body) + len(chunk))
                body += chunk
                if len(body) > limit:
                    account.release(size if size is not None else len(body) - len(chunk))
                    return too_big(limit)
        except BaseException:  # the client left mid-body: what was taken for it goes back
            account.release(size if size is not None else len(body))
            raise
        if size is not None and len(body) != size:  # h11 holds the client to its Content-Length
            account.release(size - len(body))
        return bytes(body)

    def _over_budget(self, size: int) -> Response:
        self._refused("max_inflight_bytes")
        return error_response(503, self.budget.refusal(size), {"Retry-After": "1"})

    async def _post(self, request: Request, principal: str | None) -> Response:
        if not request.headers.get("content-type", "").lower().startswith("application/json"):
            return error_response(415, "Content-Type must be application/json")
        conn_id = request.headers.get(CONNECTION_HEADER)
        conn = self.connections.get(conn_id) if conn_id is not None else None
        account = conn.account if conn is not None else Account(self.budget)
        body = await self._read_body(request, account)
        if isinstance(body, Response):
            return body
        try:
            answer = await self._posted(request, principal, conn_id, conn, body, account)
        except BaseException:
            account.release(len(body))
            raise
        if answer.status_code != 202 and answer.status_code != 200:
            account.release(len(body))  # refused: the message goes no further
        return answer

    async def _posted(
        self,
        request: Request,
        principal: str | None,
        conn_id: str | None,
        conn: RemoteConnection | None,
        body: bytes,
        account: Account,
    ) -> Response:
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return error_response(501, "batch requests are not supported: send one JSON-RPC message per POST")
        message = cast("dict[str, Any]", parsed) if isinstance(parsed, dict) else {}
        if conn_id is None:
            if message.get("method") == "initialize" and "id" in message:
                peer = request.client.host if request.client else None
                return await self._initialize(body, message, principal, account, peer)
            return error_response(400, f"missing {CONNECTION_HEADER} header (POST initialize first)")
        if conn is None or conn.principal != principal or not isinstance(conn.sse, SseRouter):
            return error_response(404, f"unknown {CONNECTION_HEADER}")
        refusal = _session_header_refusal(message, request.headers.get(SESSION_HEADER), conn.sse)
        if refusal is not None:
            return error_response(400, refusal)
        conn.sse.received(message)
        await conn.feed(body, reserved=True)
        return Response(status_code=202)

    async def _initialize(
        self, body: bytes, message: dict[str, Any], principal: str | None, account: Account, peer: str | None
    ) -> Response:
        room = self._room(principal)
        if room is not None:
            return room
        router = SseRouter(self.limits.outbound_buffer_bytes)

        async def deliver(msg: dict[str, Any]) -> None:
            if "method" not in msg and (waiter := router.waiting.pop(json.dumps(msg.get("id")), None)):
                waiter.set_result(msg)
                return
            await router.route(msg).put(sse_event(msg))

        conn = self._new_connection(deliver, principal, account, "http", peer)
        conn.sse = router
        conn.outbound = router

        async def close(code: int, reason: str) -> None:
            self._forget(conn)
            router.end()

        conn.on_close = close
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        router.waiting[json.dumps(message["id"])] = waiter
        await conn.feed(body, reserved=True)
        try:
            answer = await asyncio.wait_for(waiter, INITIALIZE_TIMEOUT)
        except TimeoutError:
            await self._drop(conn)
            return error_response(504, "initialize timed out")
        return JSONResponse(answer, headers={CONNECTION_HEADER: conn.id})

    # --- idle and stalled connections, shutdown --------------------------------------------------

    async def _reap_idle(self) -> None:
        idle = self.limits.idle_seconds
        while True:
            await asyncio.sleep(min(5.0, max(idle / 4, 0.05)))
            now = time.monotonic()
            for conn in list(self.connections.values()):
                if conn.stalled_for(now) > idle:
                    if conn.id not in self._closing:  # its turns get time to end: the others go on meanwhile
                        task = asyncio.create_task(self._close_stalled(conn, idle))
                        self._closing[conn.id] = task
                        task.add_done_callback(lambda _, cid=conn.id: self._closing.pop(cid, None))
                elif not conn.busy and now - conn.last_active > idle:
                    logger.info("connection %s idle for %.0f s: closed", conn.id, idle)
                    await self._close(conn, WS_IDLE, f"closed after {idle:g} s without traffic (idle_seconds)")

    async def _close_stalled(self, conn: RemoteConnection, idle: float) -> None:
        """The client took nothing for `idle` seconds: its turns are cancelled (and recorded), then it is closed."""
        self.stalled += 1
        conn.silence()  # nothing more can reach it: what the agent still sends is dropped
        cancelled = conn.cancel_turns()
        if cancelled:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(conn.turns_ended(), TURNS_END_SECONDS)
        logger.warning(
            "connection %s: the client took nothing for %.0f s (idle_seconds): closed, %d running turn(s) cancelled",
            conn.id,
            idle,
            cancelled,
        )
        await self._close(conn, WS_IDLE, f"the client took nothing for {idle:g} s (idle_seconds)")

    async def _close(self, conn: RemoteConnection, code: int, reason: str) -> None:
        conn.closing = reason
        self._forget(conn)
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

        def serving() -> list[RemoteConnection]:
            return [*self.connections.values(), *self.detached]

        while any(c.busy for c in serving()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        cancelled = sum(c.cancel_turns() for c in serving())
        if cancelled:
            logger.warning("shutdown: cancelled %d running turn(s) after %.0f s", cancelled, grace_seconds)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*(c.turns_ended() for c in serving())), TURNS_END_SECONDS)
        await self.close_all(WS_GOING_AWAY, "the server is shutting down: reconnect to another replica")

    async def close_all(self, code: int, reason: str) -> None:
        """Close every connection."""
        await asyncio.gather(*(self._close(c, code, reason) for c in list(self.connections.values())))


def _session_header_refusal(message: dict[str, Any], header: str | None, router: SseRouter) -> str | None:
    """Why a POST's `Acp-Session-Id` is refused (`400`), or `None`.

    Required on the session-scoped methods; when given, it must name the message's `sessionId`, or
    for the client's answer to an agent request, the session that request was about.
    """
    method = message.get("method")
    if method in SESSION_SCOPED and header is None:
        return f"missing {SESSION_HEADER} header (session-scoped request)"
    if method is None and "id" in message:
        asked = router.asked.pop(json.dumps(message.get("id")), None)
        if header is not None and asked is not None and header != asked:
            return f"{SESSION_HEADER} does not name the session of the request this answers"
        return None
    params: Any = message.get("params")
    named: Any = cast("dict[str, Any]", params).get("sessionId") if isinstance(params, dict) else None
    if header is not None and isinstance(named, str) and header != named:
        return f"{SESSION_HEADER} does not match the message's sessionId"
    return None
