"""What the server tells the telemetry, per connection and per turn; nothing here imports OpenTelemetry.

The server holds no observer when telemetry is off, and then does none of this: no wrapper on
the sender, nothing counted per update. When it is on:

- a [`ConnectionProbe`][acpkit_core.telemetry.observer.ConnectionProbe] per connection counts the
  messages, updates, bytes and error answers its transport sends (plain integers, read by the
  metric callbacks when metrics are collected), and writes one log line when it closes;
- a [`TurnProbe`][acpkit_core.telemetry.observer.TurnProbe] per turn wraps the turn's update sender
  (counting updates, noting the first), holds the turn's span (current while the runner runs, so
  the framework's own spans nest under it), opens a span per tool call and per wait for the user,
  records the turn's duration and time to first update, and writes one log line when it ends.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from .logs import ACCESS_LOGGER, access_line

if TYPE_CHECKING:
    from acp import Client
    from acp.schema import Usage

    from ..runner.tool_lifecycle import ToolCallRecord
    from .otel import OtelBackend, SpanHandle
from .counts import WireCounts

__all__ = ["TRACE_META_KEYS", "ConnectionProbe", "Observer", "SessionCounts", "TurnProbe", "trace_carrier"]

access_log = logging.getLogger(ACCESS_LOGGER)

TRACE_META_KEYS = ("traceparent", "tracestate", "baggage")
"""The `_meta` keys of a request that carry the client's W3C trace context (ACP's meta-propagation RFD)."""


def trace_carrier(meta: Mapping[str, Any] | None) -> dict[str, str]:
    """The W3C trace context in a request's `_meta` (string values only; anything else is ignored)."""
    if not meta:
        return {}
    return {key: value for key in TRACE_META_KEYS if isinstance(value := meta.get(key), str)}


class SessionCounts(Protocol):
    """Open sessions and running turns of one connection (the server's `SessionManager`)."""

    def counts(self) -> tuple[int, int]:
        """(open sessions, running turns); safe to call from a metrics reader's thread."""
        ...


class Observer:
    """The process-wide side of telemetry: the OpenTelemetry backend (if any), open connections, totals."""

    def __init__(self, *, backend: OtelBackend | None, access: bool) -> None:
        self.backend = backend
        """Spans and instruments; `None` for log lines alone."""
        self.access = access
        """Write one line per connection and per turn on the `acpkit.access` logger."""
        self.tracing = backend is not None and backend.tracer is not None
        """Spans are made."""
        self._lock = threading.Lock()  # metrics are collected from a reader's thread
        self._live: dict[int, ConnectionProbe] = {}
        self._retired: dict[str, WireCounts] = {}
        self._transports: set[str] = set()
        if backend is not None:
            backend.bind(self)

    # --- connections ----------------------------------------------------------------------------

    def declare(self, *transports: str) -> None:
        """Report these transports from the start (their gauges at 0 before a first connection)."""
        with self._lock:
            self._transports.update(transports)

    def connection(
        self,
        transport: str,
        *,
        principal: str | None = None,
        connection_id: str | None = None,
        sessions: SessionCounts | None = None,
        peer: str | None = None,
    ) -> ConnectionProbe:
        """A probe for a connection that opens now."""
        probe = ConnectionProbe(
            self,
            transport,
            principal=principal,
            connection_id=connection_id or uuid.uuid4().hex,
            sessions=sessions,
            peer=peer,
        )
        with self._lock:
            self._transports.add(transport)
            self._live[id(probe)] = probe
        return probe

    def _retire(self, probe: ConnectionProbe) -> None:
        with self._lock:
            if self._live.pop(id(probe), None) is None:
                return
            self._retired.setdefault(probe.transport, WireCounts()).add(probe.counts)

    def snapshot(self) -> tuple[dict[str, int], dict[str, tuple[int, int]], dict[str, WireCounts]]:
        """Per transport: open connections, (open sessions, running turns), and everything sent so far."""
        with self._lock:
            live = list(self._live.values())
            sent = {t: c.copy() for t, c in self._retired.items()}
            transports = set(self._transports)
        connections = dict.fromkeys(transports, 0)
        work: dict[str, tuple[int, int]] = dict.fromkeys(transports, (0, 0))
        for probe in live:
            connections[probe.transport] += 1
            sessions, turns = probe.sessions.counts() if probe.sessions is not None else (0, 0)
            s, t = work[probe.transport]
            work[probe.transport] = (s + sessions, t + turns)
            sent.setdefault(probe.transport, WireCounts()).add(probe.counts)
        for transport in transports:
            sent.setdefault(transport, WireCounts())
        return connections, work, sent

    # --- turns ----------------------------------------------------------------------------------

    def turn(
        self,
        *,
        session_id: str,
        adapter: str,
        agent: str,
        principal: str | None,
        connection: ConnectionProbe | None,
        meta: Mapping[str, Any] | None,
    ) -> TurnProbe:
        """A probe for a turn that starts now (its span continues the trace in `meta`, if any)."""
        return TurnProbe(
            self,
            connection,
            session_id=session_id,
            adapter=adapter,
            agent=agent,
            principal=principal,
            carrier=trace_carrier(meta),
        )

    # --- what other parts report ------------------------------------------------------------------

    def record_refusal(self, reason: str, *, status: int | None = None, peer: str | None = None) -> None:
        """One refused connection or request."""
        if self.backend is not None:
            self.backend.refused(reason)
        if self.access and access_log.isEnabledFor(logging.INFO):
            fields: dict[str, Any] = {"reason": reason, "status": status, "peer": peer}
            access_log.info("%s", access_line("refused", fields), extra={"acpkit": {"event": "refused", **fields}})

    def record_lease_wait(self, seconds: float) -> None:
        """A turn waited `seconds` for its session's turn lease."""
        if self.backend is not None:
            self.backend.lease_wait(seconds)

    def record_lease_takeover(self) -> None:
        """A turn took over the lease of a turn whose process died."""
        if self.backend is not None:
            self.backend.lease_takeover()

    def record_store(self, operation: str, seconds: float) -> None:
        """One store call took `seconds`."""
        if self.backend is not None:
            self.backend.store_call(operation, seconds)


class ConnectionProbe:
    """One connection: what its transport sent, its turns, and its log line when it closes."""

    def __init__(
        self,
        observer: Observer,
        transport: str,
        *,
        principal: str | None,
        connection_id: str,
        sessions: SessionCounts | None,
        peer: str | None,
    ) -> None:
        self.observer = observer
        self.transport = transport
        """`stdio`, `websocket` or `http`."""
        self.principal = principal
        """Who authenticated the connection (`None` locally)."""
        self.id = connection_id
        """The connection's id (`Acp-Connection-Id` for a remote one)."""
        self.sessions = sessions
        """Its open sessions and running turns."""
        self.peer = peer
        """The client's address, for the log line."""
        self.counts = WireCounts()
        """What its transport sent (updated by the transport, per message)."""
        self.turns = 0
        """Turns run on it."""
        self._opened = time.monotonic()
        self._closed = False

    def close(self, reason: str | None = None) -> None:
        """The connection ended (`reason`: why the server closed it; `None` when the client did)."""
        if self._closed:
            return
        self._closed = True
        self.observer._retire(self)  # pyright: ignore[reportPrivateUsage]
        if self.observer.access and access_log.isEnabledFor(logging.INFO):
            counts = self.counts
            fields: dict[str, Any] = {
                "connection_id": self.id,
                "transport": self.transport,
                "principal": self.principal,
                "peer": self.peer,
                "duration_ms": round((time.monotonic() - self._opened) * 1000, 1),
                "turns": self.turns,
                "messages": counts.messages,
                "updates": counts.updates,
                "bytes": counts.bytes,
                "errors": sum(counts.errors.values()),
                "closed_by": "server" if reason else "client",
                "reason": reason,
            }
            access_log.info(
                "%s", access_line("connection", fields), extra={"acpkit": {"event": "connection", **fields}}
            )


Sender = Callable[[dict[str, Any]], Awaitable[None]]


class TurnProbe:
    """One turn: its span, its first update, its tool calls and waits, its metrics and log line."""

    def __init__(
        self,
        observer: Observer,
        connection: ConnectionProbe | None,
        *,
        session_id: str,
        adapter: str,
        agent: str,
        principal: str | None,
        carrier: dict[str, str],
    ) -> None:
        self.observer = observer
        self.connection = connection
        self.session_id = session_id
        self.adapter = adapter
        self.principal = principal
        self.updates = 0
        """Updates the turn sent."""
        self.first_update: float | None = None
        """When its first update (not counting a title) was sent (`time.perf_counter()`)."""
        self._started = time.perf_counter()
        self._tools: dict[str, SpanHandle] = {}
        self.span: SpanHandle | None = None
        """The turn's span (with traces on)."""
        backend = observer.backend
        if connection is not None:
            connection.turns += 1
        if backend is not None and observer.tracing:
            attributes: dict[str, Any] = {
                "acp.session.id": session_id,
                "gen_ai.conversation.id": session_id,
                "acp.adapter": adapter,
                "acp.agent.name": agent,
            }
            if principal is not None:
                attributes["acp.principal"] = principal
            if connection is not None:
                attributes["acp.transport"] = connection.transport
                attributes["acp.connection.id"] = connection.id
            self.span = backend.start_turn(attributes, carrier)

    # --- the update sender (the per-update path, only when telemetry is on) -------------------

    def sender(self, inner: Sender) -> Sender:
        """`inner`, counting the updates and noting when the first one went out."""

        async def send(wire: dict[str, Any]) -> None:
            self.updates += 1
            if self.first_update is None and wire.get("sessionUpdate") != "session_info_update":
                self.first_update = time.perf_counter()
            await inner(wire)

        return send

    # --- the span as the current one -------------------------------------------------------------

    @contextlib.contextmanager
    def current(self) -> Generator[None]:
        """While inside, the turn's span is the current span (tasks started inside inherit it)."""
        backend = self.observer.backend
        if self.span is None or backend is None:
            yield
            return
        with backend.use(self.span):
            yield

    # --- tool calls (`ToolCalls.observer`) ------------------------------------------------------

    def tool_call_opened(self, record: ToolCallRecord) -> None:
        """A tool call was announced: its span starts."""
        backend = self.observer.backend
        if self.span is None or backend is None or record.hidden or record.id in self._tools:
            return
        attributes = {
            "gen_ai.tool.name": record.name,
            "gen_ai.tool.call.id": record.id,
            "acp.tool_call.id": record.id,
            "acp.tool_call.kind": record.kind,
        }
        self._tools[record.id] = backend.start_child(self.span, f"tool_call {record.name}", attributes)

    def tool_call_started(self, record: ToolCallRecord) -> None:
        """The tool began to run."""
        span = self._tools.get(record.id)
        if span is not None and self.observer.backend is not None:
            self.observer.backend.event(span, "started")

    def tool_call_finished(self, record: ToolCallRecord) -> None:
        """The tool call reached `completed` or `failed`: its span ends."""
        span = self._tools.pop(record.id, None)
        if span is not None and self.observer.backend is not None:
            failed = record.status == "failed"
            self.observer.backend.end(
                span,
                {"acp.tool_call.status": record.status, "acp.tool_call.kind": record.kind},
                error="tool call failed" if failed else None,
            )

    # --- waits for the user ------------------------------------------------------------------------

    def client(self, conn: Client | None) -> Client | None:
        """`conn`, with a span around each question to the user (with traces on)."""
        if conn is None or self.span is None:
            return conn
        return cast("Client", _WatchedClient(conn, self))

    def wait_span(self, name: str, tool_call_id: str | None) -> SpanHandle | None:
        """A span for a wait for the user, under its tool call's span when there is one."""
        backend = self.observer.backend
        if self.span is None or backend is None:
            return None
        parent = self._tools.get(tool_call_id, self.span) if tool_call_id else self.span
        attributes: dict[str, Any] = {"acp.session.id": self.session_id}
        if tool_call_id:
            attributes["acp.tool_call.id"] = tool_call_id
        return backend.start_child(parent, name, attributes, client=True)

    # --- the end ---------------------------------------------------------------------------------

    def end(self, *, stop_reason: str | None, usage: Usage | None = None, error_code: int | None = None) -> None:
        """The turn ended with `stop_reason`, or failed with `error_code` (its answer was an error)."""
        duration = time.perf_counter() - self._started
        first = self.first_update - self._started if self.first_update is not None else None
        backend = self.observer.backend
        transport = self.connection.transport if self.connection is not None else None
        if backend is not None:
            for span in self._tools.values():  # closed by the server, but a span must never be left open
                backend.end(span, {}, error=None)
            self._tools.clear()
            backend.turn_ended(
                adapter=self.adapter,
                transport=transport,
                stop_reason=stop_reason,
                error_code=error_code,
                duration=duration,
                first_update=first,
                usage=usage,
            )
            if self.span is not None:
                attributes: dict[str, Any] = {"acp.updates": self.updates}
                if stop_reason is not None:
                    attributes["acp.stop_reason"] = stop_reason
                if error_code is not None:
                    attributes["rpc.jsonrpc.error_code"] = error_code
                if first is not None:
                    attributes["acp.time_to_first_update_ms"] = round(first * 1000, 3)
                if usage is not None:
                    attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
                    attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
                    for name in ("thought_tokens", "cached_read_tokens", "cached_write_tokens"):
                        value = getattr(usage, name)
                        if value is not None:
                            attributes[f"acp.usage.{name}"] = value
                error = f"JSON-RPC error {error_code}" if error_code is not None else None
                backend.end(self.span, attributes, error=error)
        if self.observer.access and access_log.isEnabledFor(logging.INFO):
            fields: dict[str, Any] = {
                "session_id": self.session_id,
                "connection_id": self.connection.id if self.connection is not None else None,
                "transport": transport,
                "principal": self.principal,
                "adapter": self.adapter,
                "stop_reason": stop_reason,
                "error_code": error_code,
                "duration_ms": round(duration * 1000, 1),
                "first_update_ms": round(first * 1000, 1) if first is not None else None,
                "updates": self.updates,
                "input_tokens": usage.input_tokens if usage is not None else None,
                "output_tokens": usage.output_tokens if usage is not None else None,
                "trace_id": backend.trace_id(self.span) if backend is not None and self.span is not None else None,
            }
            access_log.info("%s", access_line("turn", fields), extra={"acpkit": {"event": "turn", **fields}})


class _WatchedClient:
    """The client connection of a traced turn: a span around each permission question and elicitation."""

    def __init__(self, inner: Client, probe: TurnProbe) -> None:
        self._inner = inner
        self._probe = probe

    async def request_permission(self, *, tool_call: Any, **kwargs: Any) -> Any:
        """`session/request_permission`, in a span saying how the user answered."""
        span = self._probe.wait_span("session/request_permission", getattr(tool_call, "tool_call_id", None))
        outcome: dict[str, Any] = {"acp.permission.outcome": "cancelled"}
        try:
            response = await self._inner.request_permission(tool_call=tool_call, **kwargs)
            answer: Any = getattr(response, "outcome", None)
            outcome["acp.permission.outcome"] = getattr(answer, "outcome", "unknown")
            option = getattr(answer, "option_id", None)
            if option is not None:
                outcome["acp.permission.option_id"] = option
            return response
        finally:
            self._end(span, outcome)

    async def create_elicitation(self, **kwargs: Any) -> Any:
        """`elicitation/create`, in a span saying how the user answered."""
        mode: Any = kwargs.get("mode")
        span = self._probe.wait_span("elicitation/create", getattr(mode, "tool_call_id", None))
        outcome: dict[str, Any] = {"acp.elicitation.action": "cancelled"}
        try:
            response = await self._inner.create_elicitation(**kwargs)
            outcome["acp.elicitation.action"] = getattr(response, "action", "unknown")
            return response
        finally:
            self._end(span, outcome)

    def _end(self, span: SpanHandle | None, attributes: dict[str, Any]) -> None:
        backend = self._probe.observer.backend
        if span is not None and backend is not None:
            backend.end(span, attributes, error=None)

    def __getattr__(self, name: str) -> Any:
        """Everything else (files, terminals, updates) is the connection's own."""
        return getattr(self._inner, name)
