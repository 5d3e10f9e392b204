"""`acpkit serve` from Python: run an agent behind the `/acp` endpoint on uvicorn.

```python
from acpkit_core.remote import ServeOptions, run_remote

run_remote(agent, ServeOptions(port=8000))  # an AcpAgent, e.g. pydantic_acp.create_acp_agent(...)
```

One [`AcpAgent`][acpkit_core.server.AcpAgent] is made per remote connection from the one given
(same runner, same options), and all of them share one session store, opened once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import signal
from collections.abc import AsyncGenerator, Callable, Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final

import uvicorn

from .._sdk_schema import INITIALIZE_MODELS, SESSION_MODELS, warm_models
from ..errors import UserError
from ..limits import MAX_MESSAGE_BYTES, format_size
from ..runner.types import Session
from ..server import AcpAgent
from ..server.session_manager import SessionOpenings
from ..server.turn_log import TurnLogs
from ..store import SessionPage, SessionStore, StoredSession, TurnStart, open_store
from ..store.base import DEFAULT_LEASE_SECONDS, DEFAULT_PAGE_SIZE, JsonDict
from .app import Endpoint
from .auth import Tokens, is_loopback
from .child import AgentCommand, ChildConnection
from .child_sessions import SessionChildConnection
from .connection import RemoteConnection
from .guard import guarded_http_protocol, raise_open_file_limit, socket_budget
from .limits import Limits
from .wsprotocol import WireSettings, websocket_protocol

__all__ = ["RemoteServer", "ServeOptions", "SharedStore", "run_remote", "serve_remote", "serve_signals"]

logger = logging.getLogger("acpkit_core.remote")

DEFAULT_PORT: Final = 8000
INFLIGHT_MESSAGES: Final = 4
"""The default budget of bytes in flight holds this many messages of the largest size."""


@dataclass(kw_only=True)
class ServeOptions:
    """How `acpkit serve` listens and what it allows (the agent's own options stay in `AgentOptions`)."""

    host: str = "127.0.0.1"
    """Address to listen on. Anything but loopback needs `tokens`."""
    port: int = DEFAULT_PORT
    """TCP port; `0` picks a free one ([`RemoteServer.port`][acpkit_core.remote.RemoteServer.port] says which)."""
    tokens: Tokens = dataclasses.field(default_factory=Tokens)
    """Bearer tokens and their principals ([`Tokens.load`][acpkit_core.remote.Tokens.load]); none: no authentication."""
    allowed_origins: Sequence[str] = ()
    """Browser origins allowed to connect (`*` for any). A request with another `Origin` gets `403`."""
    max_connections: int = 1000
    """Connections open at once; one more gets `503`."""
    max_sessions_per_connection: int = 32
    """Sessions one connection may hold open; one more is refused (-32600)."""
    idle_seconds: float = 600.0
    """Close a connection after this long without traffic or a running turn, or whose client has taken
    nothing for this long while its outbound buffer was full (its turns are cancelled and recorded)."""
    max_pending_connections: int = 1024
    """TCP connections still sending their request head (not yet authenticated): past it, those waiting for
    2 s or more are closed, the oldest first."""
    handshake_seconds: float = 10.0
    """A TCP connection must send its whole request head, and a WebSocket finish its upgrade, within this."""
    max_inflight_bytes: int | None = None
    """Bytes of client messages received and not yet handled, across all connections; a message past it
    is refused (JSON-RPC error, or `503`) before it is read. `None`: four times the message size limit."""
    outbound_buffer_bytes: int = 64 * 1024
    """Bytes waiting for one client past which the agent waits for it to read (one message always fits)."""
    max_connections_per_principal: int = 100
    """Connections one principal (token) may hold open; one more gets `429`. Only with tokens."""
    max_sessions_per_principal: int = 200
    """Sessions one principal may hold open across its connections; one more is refused (-32600)."""
    max_turns_per_principal: int = 20
    """Turns one principal may run at once across its connections; one more is refused (-32600)."""
    shutdown_grace_seconds: float = 30.0
    """On SIGTERM, how long running turns may go on before they are cancelled (and recorded)."""
    reconnect_grace_seconds: float = 60.0
    """How long a turn whose client's connection dropped goes on, detached, waiting for the client (the
    same principal) to re-attach; then it is cancelled and recorded. `0`: cancelled at once."""
    path: str = "/acp"
    """The endpoint's path."""
    metrics_path: str | None = "/metrics"
    """Where Prometheus scrapes the metrics, when the agent's `AgentOptions.telemetry` has metrics on
    (`None`: not served)."""
    metrics_public: bool = False
    """Serve `metrics_path` without a token (by default it needs one, like `path`)."""

    def check(self) -> None:
        """Refuse a configuration that would expose the agent (raises [`UserError`][acpkit_core.errors.UserError])."""
        if not is_loopback(self.host) and not self.tokens:
            raise UserError(
                f"refusing to listen on {self.host} without a token: anyone who can reach it could run the agent. "
                "Give --token-file FILE (or set ACPKIT_SERVE_TOKENS), or listen on 127.0.0.1"
            )
        for name in (
            "max_connections",
            "max_sessions_per_connection",
            "max_pending_connections",
            "outbound_buffer_bytes",
            "max_connections_per_principal",
            "max_sessions_per_principal",
            "max_turns_per_principal",
        ):
            if getattr(self, name) < 1:
                raise UserError(f"ServeOptions.{name} must be at least 1")
        if self.max_inflight_bytes is not None and self.max_inflight_bytes < 1:
            raise UserError("ServeOptions.max_inflight_bytes must be at least 1")
        if self.reconnect_grace_seconds < 0:
            raise UserError("ServeOptions.reconnect_grace_seconds must be 0 or more")
        for name in ("idle_seconds", "handshake_seconds"):
            if getattr(self, name) <= 0:
                raise UserError(f"ServeOptions.{name} must be positive")
        if self.metrics_path is not None and (
            not self.metrics_path.startswith("/") or self.metrics_path in (self.path, "/healthz")
        ):
            raise UserError(
                f"ServeOptions.metrics_path={self.metrics_path!r} must be a path starting with '/', "
                f"other than {self.path!r} and '/healthz'"
            )

    def limits(self, max_message_bytes: int) -> Limits:
        """The endpoint's limits, for agents whose message size limit is `max_message_bytes`.

        Raises [`UserError`][acpkit_core.errors.UserError] for a budget of bytes in flight smaller than one
        message (every message of the largest size would be refused).
        """
        inflight = self.max_inflight_bytes or INFLIGHT_MESSAGES * max_message_bytes
        if inflight < max_message_bytes:
            raise UserError(
                f"ServeOptions.max_inflight_bytes ({format_size(inflight)}) is smaller than one message of the "
                f"largest size (max_message_bytes, {format_size(max_message_bytes)}): raise it or lower that"
            )
        return Limits(
            max_message_bytes=max_message_bytes,
            max_connections=self.max_connections,
            max_sessions_per_connection=self.max_sessions_per_connection,
            idle_seconds=self.idle_seconds,
            max_pending_connections=self.max_pending_connections,
            handshake_seconds=self.handshake_seconds,
            max_inflight_bytes=inflight,
            outbound_buffer_bytes=self.outbound_buffer_bytes,
            max_connections_per_principal=self.max_connections_per_principal,
            max_sessions_per_principal=self.max_sessions_per_principal,
            max_turns_per_principal=self.max_turns_per_principal,
        )


class SharedStore:
    """One store shared by every connection: each connection's agent closes it, so closing here does nothing."""

    def __init__(self, store: SessionStore) -> None:
        self.inner = store
        """The real store (closed by the server when it stops)."""

    @property
    def path(self) -> Path | None:
        """The inner store's file."""
        return self.inner.path

    async def create(
        self, session: Session, *, server: JsonDict | None = None, transcript: Sequence[JsonDict] = ()
    ) -> None:
        """See [`SessionStore.create`][acpkit_core.store.SessionStore.create]."""
        await self.inner.create(session, server=server, transcript=transcript)

    async def get(self, session_id: str) -> StoredSession:
        """See [`SessionStore.get`][acpkit_core.store.SessionStore.get]."""
        return await self.inner.get(session_id)

    async def save(
        self,
        session: Session,
        *,
        server: JsonDict | None = None,
        append: Sequence[JsonDict] = (),
        reset_transcript: bool = False,
        release: str | None = None,
    ) -> int:
        """See [`SessionStore.save`][acpkit_core.store.SessionStore.save]."""
        return await self.inner.save(
            session, server=server, append=append, reset_transcript=reset_transcript, release=release
        )

    async def append_transcript(self, session_id: str, updates: Sequence[JsonDict]) -> None:
        """See [`SessionStore.append_transcript`][acpkit_core.store.SessionStore.append_transcript]."""
        await self.inner.append_transcript(session_id, updates)

    async def begin_turn(
        self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS
    ) -> TurnStart:
        """See [`SessionStore.begin_turn`][acpkit_core.store.SessionStore.begin_turn]."""
        return await self.inner.begin_turn(session_id, owner, lease_seconds=lease_seconds)

    async def renew_turn(self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> None:
        """See [`SessionStore.renew_turn`][acpkit_core.store.SessionStore.renew_turn]."""
        await self.inner.renew_turn(session_id, owner, lease_seconds=lease_seconds)

    async def end_turn(self, session_id: str, owner: str) -> None:
        """See [`SessionStore.end_turn`][acpkit_core.store.SessionStore.end_turn]."""
        await self.inner.end_turn(session_id, owner)

    async def recover_turn(self, session_id: str) -> bool:
        """See [`SessionStore.recover_turn`][acpkit_core.store.SessionStore.recover_turn]."""
        return await self.inner.recover_turn(session_id)

    async def transcript(self, session_id: str) -> list[JsonDict]:
        """See [`SessionStore.transcript`][acpkit_core.store.SessionStore.transcript]."""
        return await self.inner.transcript(session_id)

    async def list(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        owner: str | None = None,
    ) -> SessionPage:
        """See [`SessionStore.list`][acpkit_core.store.SessionStore.list]."""
        return await self.inner.list(cwd=cwd, cursor=cursor, limit=limit, owner=owner)

    async def delete(self, session_id: str) -> None:
        """See [`SessionStore.delete`][acpkit_core.store.SessionStore.delete]."""
        await self.inner.delete(session_id)

    async def close(self) -> None:
        """Nothing: the server closes the inner store when it stops."""

    def __getattr__(self, name: str) -> Any:
        """Anything else a store offers (a database store's extras) is the inner store's."""
        return getattr(self.inner, name)


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: the remote server drains first, then stops it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


class RemoteServer:
    """An agent served on `/acp` by uvicorn in this event loop; `async with` starts and stops it.

    ```python
    async with RemoteServer(agent, ServeOptions(port=0)) as server:
        print(server.url)  # ws://127.0.0.1:PORT/acp
    ```
    """

    def __init__(self, agent: AcpAgent | AgentCommand, options: ServeOptions | None = None) -> None:
        self.options = options or ServeOptions()
        self.options.check()
        self.agent = agent
        """The template: each connection gets an `AcpAgent` with its runner and options; or the
        [`AgentCommand`][acpkit_core.remote.AgentCommand] each connection starts as its own child process."""
        self._store: SessionStore | None = None
        make_connection: Callable[..., RemoteConnection] | None = None
        if isinstance(agent, AgentCommand):
            workspace = agent.check()
            limit = agent.message_limit
            telemetry = None
            per_session = agent.child_per == "session"
            connection = SessionChildConnection if per_session else ChildConnection
            make_connection = functools.partial(connection, agent, workspace=workspace)
        else:
            self._store = open_store(agent.options.store)
            shared = SharedStore(self._store)
            self._agent_options = dataclasses.replace(agent.options, store=shared)
            limit = MAX_MESSAGE_BYTES.value(agent.options.max_message_bytes)
            telemetry = agent.options.telemetry
        self._openings = SessionOpenings()
        self._turn_logs = TurnLogs(grace_seconds=self.options.reconnect_grace_seconds)
        limits = self.options.limits(limit)
        self.open_files, self.open_files_before = raise_open_file_limit()
        """The open-file limit the server runs with, and what it was before the server raised it."""
        max_sockets, backlog = socket_budget(self.open_files)
        self.telemetry = telemetry
        """The agent's telemetry (shared by every connection), `None` when off."""
        observer = telemetry.observer() if telemetry is not None else None  # a missing extra is said now
        if observer is not None:
            observer.declare("websocket", "http")
        self.endpoint = Endpoint(
            self._make_agent if make_connection is None else None,
            tokens=self.options.tokens,
            allowed_origins=tuple(self.options.allowed_origins),
            limits=limits,
            path=self.options.path,
            telemetry=telemetry,
            metrics_path=self._metrics_path(),
            metrics_public=self.options.metrics_public,
            max_sockets=max_sockets,
            make_connection=make_connection,
        )
        """The routes and the open connections."""
        config = uvicorn.Config(
            self.endpoint.app(),
            host=self.options.host,
            port=self.options.port,
            backlog=backlog,
            http=guarded_http_protocol(),  # uvicorn's h11, with a deadline and a cap for unfinished request heads
            ws=websocket_protocol(),  # uvicorn's, writing the frames of one loop pass in one socket write
            ws_max_size=limit + (limit >> 1) + 4096,  # a little over: the endpoint answers the limit itself
            # Compressing each streamed chunk (tens of bytes) costs more CPU than it saves bytes.
            ws_per_message_deflate=False,
            ws_ping_interval=20.0,
            ws_ping_timeout=20.0,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=5,
            server_header=False,
        )
        config_any: Any = config
        config_any.acpkit_guard = self.endpoint.guard
        config_any.acpkit_wire = WireSettings(
            budget=self.endpoint.budget,
            max_message_bytes=limit,
            outbound_bytes=limits.outbound_buffer_bytes,
            guard=self.endpoint.guard,
        )
        self._server = _Uvicorn(config)
        self._task: asyncio.Task[None] | None = None
        self._stopping: asyncio.Task[None] | None = None
        self._stopped = False

    def _metrics_path(self) -> str | None:
        """Where `/metrics` is served: only with metrics on, and a meter provider of the telemetry's own."""
        telemetry = self.telemetry
        metered = telemetry is not None and telemetry.metrics and telemetry.otel_enabled
        if not metered:
            if self.options.metrics_public:
                raise UserError(
                    "ServeOptions.metrics_public needs metrics: give the agent AgentOptions.telemetry "
                    "(acpkit serve --otel)"
                )
            return None
        assert telemetry is not None
        if telemetry.meter_provider is not None and self.options.metrics_path is not None:
            logger.warning(
                "%s is not served: the metrics go to the meter provider given to Telemetry (add your own reader)",
                self.options.metrics_path,
            )
            return None
        return self.options.metrics_path

    def _make_agent(self) -> AcpAgent:
        assert isinstance(self.agent, AcpAgent)
        agent = type(self.agent)(self.agent.runner, self._agent_options)
        agent.sessions.openings = self._openings  # one runner for every connection: its session hooks balance
        agent.served_remotely = True
        if self.options.reconnect_grace_seconds > 0:
            agent.sessions.turn_logs = self._turn_logs  # turns are numbered and logged: clients can re-attach
        return agent

    @property
    def port(self) -> int:
        """The port listened on (the real one when `port=0`)."""
        for server in getattr(self._server, "servers", []):
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        return self.options.port

    @property
    def limits(self) -> Limits:
        """What the server allows (its options, with the defaults resolved)."""
        return self.endpoint.limits

    def resources(self) -> str:
        """One line on the open-file limit the server runs with, and a warning when it cannot hold the limits."""
        guard = self.endpoint.guard
        raised = f" (raised from {self.open_files_before})" if self.open_files != self.open_files_before else ""
        line = f"open-file limit {self.open_files}{raised}: at most {guard.max_sockets} sockets"
        wanted = self.limits.max_connections + self.limits.max_pending_connections
        if guard.max_sockets < wanted:
            line += (
                f"; fewer than max_connections + max_pending_connections ({wanted}): connections past "
                f"{guard.max_sockets} sockets are closed at once. Raise the hard limit (ulimit -Hn, LimitNOFILE=) "
                "or lower --max-connections"
            )
        return line

    @property
    def url(self) -> str:
        """`ws://host:port/acp` (use `http://` for Streamable HTTP)."""
        host = self.options.host if ":" not in self.options.host else f"[{self.options.host}]"
        return f"ws://{host}:{self.port}{self.options.path}"

    async def start(self) -> None:
        """Listen; returns once connections are accepted (raises if the port cannot be bound)."""
        # The SDK models every connection uses, built now rather than on a first client's requests.
        warm_models(INITIALIZE_MODELS + SESSION_MODELS)
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise UserError(f"could not listen on {self.options.host}:{self.options.port}")
            await asyncio.sleep(0.01)

    def request_stop(self) -> None:
        """Begin a graceful stop (drain, then exit); a second call stops at once."""
        if self._stopping is None:
            self._stopping = asyncio.create_task(self.stop())
        else:
            self._server.should_exit = True
            self._server.force_exit = True

    async def stop(self) -> None:
        """Drain (running turns get `shutdown_grace_seconds`), close every connection, stop listening.

        Stopping again does nothing.
        """
        if self._stopped:
            return
        self._stopped = True
        await self.endpoint.drain(self.options.shutdown_grace_seconds)
        self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._store is not None:
            await self._store.close()
        if self.telemetry is not None:
            await asyncio.to_thread(self.telemetry.flush)  # the last spans and metrics of this server

    async def wait(self) -> None:
        """Until the server has stopped."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._stopping is not None:
            await self._stopping

    async def __aenter__(self) -> RemoteServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._stopping is None:
            self._stopping = asyncio.create_task(self.stop())
        await self._stopping


@contextlib.asynccontextmanager
async def serve_signals(server: RemoteServer) -> AsyncGenerator[None]:
    """While inside, SIGTERM and SIGINT stop `server` gracefully (a second one at once)."""
    loop = asyncio.get_running_loop()
    installed: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, server.request_stop)
            installed.append(sig)
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


async def serve_remote(
    agent: AcpAgent | AgentCommand, options: ServeOptions | None = None, *, announce: bool = True
) -> None:
    """Serve `agent` on `/acp` until SIGTERM or SIGINT, then shut down gracefully.

    SIGTERM: new connections get `503` (and `/healthz` too, so a load balancer moves on), running
    turns get `shutdown_grace_seconds` to end, the rest are cancelled and recorded, then every
    connection closes. A second signal stops at once.
    """
    server = RemoteServer(agent, options)
    await server.start()
    if announce:
        logger.warning("serving on %s (and http://...%s for Streamable HTTP)", server.url, server.options.path)
        logger.warning("%s", server.resources())
    async with serve_signals(server):
        await server.wait()


def run_remote(agent: AcpAgent | AgentCommand, options: ServeOptions | None = None) -> None:
    """Blocking form of [`serve_remote`][acpkit_core.remote.serve_remote]."""
    asyncio.run(serve_remote(agent, options))
