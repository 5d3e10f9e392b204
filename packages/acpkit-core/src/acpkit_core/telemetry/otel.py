"""The OpenTelemetry side of [`Telemetry`][acpkit_core.telemetry.Telemetry]: providers, spans, instruments.

Imported only when traces or metrics are on (it needs the `otel` extra). Providers come from the
`Telemetry` when given; otherwise:

- spans go to OpenTelemetry's global tracer provider when something (your code, `logfire`,
  `opentelemetry-instrument`) set one up, else to one made here from the standard variables
  (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_EXPORTER` (default `otlp`),
  `OTEL_EXPORTER_OTLP_*`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`), installed as the global one;
- metrics go to a provider made here, read on demand for `/metrics` and exported as
  `OTEL_METRICS_EXPORTER` says (default `otlp`; `prometheus` or `none`: the endpoint alone;
  `OTEL_METRIC_EXPORT_INTERVAL`).

Connections, open sessions, running turns and what was sent are observable instruments: their
callbacks read the counts the transports keep, so nothing calls OpenTelemetry per update.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Generator, Iterable, Mapping, Sequence
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Final, Protocol

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation
from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter
from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from ..errors import UserError
from .prometheus import render_prometheus

if TYPE_CHECKING:
    from acp.schema import Usage

    from .counts import WireCounts

__all__ = [
    "FIRST_UPDATE_BUCKETS",
    "STORE_BUCKETS",
    "TURN_BUCKETS",
    "CountSource",
    "OtelBackend",
    "SpanHandle",
    "TelemetrySettings",
]

logger = logging.getLogger("acpkit_core.telemetry")


class TelemetrySettings(Protocol):
    """What the backend reads of a [`Telemetry`][acpkit_core.telemetry.Telemetry]."""

    @property
    def traces(self) -> bool: ...
    @property
    def metrics(self) -> bool: ...
    @property
    def tracer_provider(self) -> TracerProvider | None: ...
    @property
    def meter_provider(self) -> MeterProvider | None: ...


class CountSource(Protocol):
    """What the observable instruments read: the observer's counts per transport."""

    def snapshot(self) -> tuple[dict[str, int], dict[str, tuple[int, int]], dict[str, WireCounts]]:
        """Open connections, (open sessions, running turns) and everything sent, per transport."""
        ...


SCOPE: Final = "acpkit_core"
TURN_BUCKETS: Final = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
"""Histogram buckets of `acpkit.turn.duration` and `acpkit.lease.wait` (seconds)."""
FIRST_UPDATE_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
"""Histogram buckets of `acpkit.turn.first_update` (seconds)."""
STORE_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
"""Histogram buckets of `acpkit.store.duration` (seconds)."""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("acpkit-core")
    except PackageNotFoundError:
        return "0"


class SpanHandle:
    """A span and the context it makes current (the client's baggage included)."""

    __slots__ = ("context", "span")

    def __init__(self, span: Span, context: otel_context.Context) -> None:
        self.span = span
        self.context = context


# --- providers from the environment -----------------------------------------------------------------


def _resource() -> Resource:
    """`OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`, with `service.name` `acpkit` when neither names one."""
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "acpkit"}))
    return resource


def _exporters(signal: str) -> list[Any]:
    """The exporters `OTEL_{TRACES,METRICS}_EXPORTER` names (default `otlp`), from their entry points."""
    variable = f"OTEL_{signal.upper()}_EXPORTER"
    names = [n.strip().lower() for n in os.environ.get(variable, "otlp").split(",") if n.strip()]
    if "none" in names:
        return []
    exporters: list[Any] = []
    for name in names:
        if name == "prometheus" and signal == "metrics":
            continue  # the `/metrics` endpoint of `acpkit serve`, always there
        found = name
        if name == "otlp":
            protocol = os.environ.get(
                f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL", os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "")
            )
            found = "otlp_proto_grpc" if protocol.strip().lower() == "grpc" else "otlp_proto_http"
        points = list(entry_points(group=f"opentelemetry_{signal}_exporter", name=found))
        if not points:
            raise UserError(
                f"{variable}={name}: no OpenTelemetry {signal} exporter {found!r} is installed "
                f'(the otlp exporter over HTTP comes with "acpkit-core[otel]"; set {variable}=none for none)'
            )
        exporters.append(points[0].load()())
    return exporters


def _tracer_provider(given: TracerProvider | None) -> tuple[TracerProvider, SdkTracerProvider | None]:
    """(the provider, the one made here if any)."""
    if given is not None:
        return given, None
    current = trace.get_tracer_provider()
    if not isinstance(current, trace.ProxyTracerProvider):
        return current, None  # set up by the application (or an OpenTelemetry distro)
    provider = SdkTracerProvider(resource=_resource())
    for exporter in _exporters("traces"):
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider, provider


def _meter_provider(
    given: MeterProvider | None,
) -> tuple[MeterProvider, SdkMeterProvider | None, InMemoryMetricReader | None]:
    """(the provider, the one made here if any, the reader behind `/metrics` if any)."""
    if given is not None:
        return given, None, None
    reader = InMemoryMetricReader()
    readers: list[MetricReader] = [reader]
    readers += [PeriodicExportingMetricReader(exporter) for exporter in _exporters("metrics")]
    # No exemplars unless asked for (`OTEL_METRICS_EXEMPLAR_FILTER`): the text format does not carry
    # them, and offering each measurement to a reservoir is most of what a measurement costs.
    chosen = None if os.environ.get("OTEL_METRICS_EXEMPLAR_FILTER") else AlwaysOffExemplarFilter()
    provider = SdkMeterProvider(metric_readers=readers, resource=_resource(), exemplar_filter=chosen)
    return provider, provider, reader


# --- the backend ----------------------------------------------------------------------------------------


class OtelBackend:
    """Spans and instruments for one [`Telemetry`][acpkit_core.telemetry.Telemetry]."""

    def __init__(self, telemetry: TelemetrySettings) -> None:
        self.tracer: trace.Tracer | None = None
        """The tracer (traces on)."""
        self._own_tracer: SdkTracerProvider | None = None
        self._own_meter: SdkMeterProvider | None = None
        self._reader: InMemoryMetricReader | None = None
        self._meter_provider: MeterProvider | None = None
        if telemetry.traces:
            provider, self._own_tracer = _tracer_provider(telemetry.tracer_provider)
            self.tracer = provider.get_tracer(SCOPE, _version())
        if telemetry.metrics:
            self._meter_provider, self._own_meter, self._reader = _meter_provider(telemetry.meter_provider)
            meter = self._meter_provider.get_meter(SCOPE, _version())
            self._turn_duration = meter.create_histogram(
                "acpkit.turn.duration",
                unit="s",
                description="How long prompt turns took, by stop reason ('error' for a turn answered with an error).",
                explicit_bucket_boundaries_advisory=TURN_BUCKETS,
            )
            self._first_update = meter.create_histogram(
                "acpkit.turn.first_update",
                unit="s",
                description="Time from a prompt to the first update of its answer.",
                explicit_bucket_boundaries_advisory=FIRST_UPDATE_BUCKETS,
            )
            self._tokens = meter.create_counter(
                "acpkit.turn.tokens", unit="{token}", description="Tokens the model used, by type (input, output)."
            )
            self._refusals = meter.create_counter(
                "acpkit.refusals",
                unit="{refusal}",
                description="Connections and requests refused before reaching the agent, by reason.",
            )
            self._lease_wait = meter.create_histogram(
                "acpkit.lease.wait",
                unit="s",
                description="How long a turn waited for its session's turn lease.",
                explicit_bucket_boundaries_advisory=TURN_BUCKETS,
            )
            self._takeovers = meter.create_counter(
                "acpkit.lease.takeovers",
                unit="{takeover}",
                description="Turn leases taken over from a process that died mid-turn.",
            )
            self._store = meter.create_histogram(
                "acpkit.store.duration",
                unit="s",
                description="Latency of session store calls, by operation.",
                explicit_bucket_boundaries_advisory=STORE_BUCKETS,
            )
            self._meter = meter

    @property
    def metering(self) -> bool:
        """Metrics are on."""
        return self._meter_provider is not None

    def bind(self, observer: CountSource) -> None:
        """Register the observable instruments, read from `observer`'s counts."""
        if self._meter_provider is None:
            return
        meter = self._meter

        def connections(_: CallbackOptions) -> Iterable[Observation]:
            open_, _work, _sent = observer.snapshot()
            return [Observation(n, {"transport": t}) for t, n in open_.items()]

        def sessions(_: CallbackOptions) -> Iterable[Observation]:
            _open, work, _sent = observer.snapshot()
            return [Observation(s, {"transport": t}) for t, (s, _) in work.items()]

        def turns(_: CallbackOptions) -> Iterable[Observation]:
            _open, work, _sent = observer.snapshot()
            return [Observation(n, {"transport": t}) for t, (_, n) in work.items()]

        def updates(_: CallbackOptions) -> Iterable[Observation]:
            return [Observation(c.updates, {"transport": t}) for t, c in observer.snapshot()[2].items()]

        def messages(_: CallbackOptions) -> Iterable[Observation]:
            return [Observation(c.messages, {"transport": t}) for t, c in observer.snapshot()[2].items()]

        def sent_bytes(_: CallbackOptions) -> Iterable[Observation]:
            return [Observation(c.bytes, {"transport": t}) for t, c in observer.snapshot()[2].items()]

        def errors(_: CallbackOptions) -> Iterable[Observation]:
            return [
                Observation(n, {"transport": t, "code": str(code)})
                for t, c in observer.snapshot()[2].items()
                for code, n in sorted(c.errors.items())
            ]

        meter.create_observable_up_down_counter(
            "acpkit.connections", [connections], unit="{connection}", description="Open connections, by transport."
        )
        meter.create_observable_up_down_counter(
            "acpkit.sessions.open", [sessions], unit="{session}", description="Sessions open on the connections."
        )
        meter.create_observable_up_down_counter(
            "acpkit.turns.running", [turns], unit="{turn}", description="Prompt turns running now."
        )
        meter.create_observable_counter(
            "acpkit.sent.updates", [updates], unit="{update}", description="session/update notifications sent."
        )
        meter.create_observable_counter(
            "acpkit.sent.messages", [messages], unit="{message}", description="JSON-RPC messages sent."
        )
        meter.create_observable_counter(
            "acpkit.sent.bytes", [sent_bytes], unit="By", description="Bytes of JSON-RPC messages sent."
        )
        meter.create_observable_counter(
            "acpkit.errors", [errors], unit="{error}", description="JSON-RPC error answers sent, by code."
        )

    # --- spans ------------------------------------------------------------------------------------------

    def start_turn(self, attributes: Mapping[str, Any], carrier: Mapping[str, str]) -> SpanHandle:
        """The span of a turn: a child of the client's span when `carrier` holds its trace context."""
        assert self.tracer is not None
        parent = propagate.extract(carrier) if carrier else otel_context.get_current()
        span = self.tracer.start_span("session/prompt", context=parent, kind=SpanKind.SERVER, attributes=attributes)
        return SpanHandle(span, trace.set_span_in_context(span, parent))

    def start_child(
        self, parent: SpanHandle, name: str, attributes: Mapping[str, Any], *, client: bool = False
    ) -> SpanHandle:
        """A span under `parent` (`client`: a request the agent sends to the client)."""
        assert self.tracer is not None
        kind = SpanKind.CLIENT if client else SpanKind.INTERNAL
        span = self.tracer.start_span(name, context=parent.context, kind=kind, attributes=attributes)
        return SpanHandle(span, trace.set_span_in_context(span, parent.context))

    @contextlib.contextmanager
    def use(self, handle: SpanHandle) -> Generator[None]:
        """Make the span (and the client's baggage) current while inside."""
        token = otel_context.attach(handle.context)
        try:
            yield
        finally:
            otel_context.detach(token)

    def event(self, handle: SpanHandle, name: str) -> None:
        """An event on the span."""
        handle.span.add_event(name)

    def end(self, handle: SpanHandle, attributes: Mapping[str, Any], *, error: str | None) -> None:
        """Set `attributes` and end the span (with an error status when `error` says why)."""
        span = handle.span
        if attributes:
            span.set_attributes(attributes)
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end()

    def trace_id(self, handle: SpanHandle) -> str | None:
        """The span's trace id (32 hex digits), for log lines."""
        context = handle.span.get_span_context()
        return format(context.trace_id, "032x") if context.is_valid else None

    # --- synchronous instruments -----------------------------------------------------------------------

    def turn_ended(
        self,
        *,
        adapter: str,
        transport: str | None,
        stop_reason: str | None,
        error_code: int | None,
        duration: float,
        first_update: float | None,
        usage: Usage | None,
    ) -> None:
        """Record a turn's duration, time to first update and tokens."""
        if self._meter_provider is None:
            return
        attributes: dict[str, str] = {"adapter": adapter}
        if transport is not None:
            attributes["transport"] = transport
        self._turn_duration.record(duration, {**attributes, "stop_reason": stop_reason or "error"})
        if first_update is not None:
            self._first_update.record(first_update, attributes)
        if usage is not None:
            self._tokens.add(usage.input_tokens, {**attributes, "type": "input"})
            self._tokens.add(usage.output_tokens, {**attributes, "type": "output"})

    def refused(self, reason: str) -> None:
        """One refusal."""
        if self._meter_provider is not None:
            self._refusals.add(1, {"reason": reason})

    def lease_wait(self, seconds: float) -> None:
        """A wait for a turn lease."""
        if self._meter_provider is not None:
            self._lease_wait.record(seconds)

    def lease_takeover(self) -> None:
        """A lease taken over from a process that died."""
        if self._meter_provider is not None:
            self._takeovers.add(1)

    def store_call(self, operation: str, seconds: float) -> None:
        """One store call."""
        if self._meter_provider is not None:
            self._store.record(seconds, {"operation": operation})

    # --- export -------------------------------------------------------------------------------------------

    def prometheus_text(self) -> bytes | None:
        """The current metrics in the Prometheus text format (`None` with a provider given by the application)."""
        if self._reader is None:
            return None
        data = self._reader.get_metrics_data()
        return render_prometheus(data).encode("utf-8")

    def flush(self) -> None:
        """Export what is waiting."""
        for provider in self._owned():
            provider.force_flush()

    def shutdown(self) -> None:
        """Export what is waiting and stop the providers made here."""
        for provider in self._owned():
            provider.shutdown()

    def _owned(self) -> Sequence[SdkTracerProvider | SdkMeterProvider]:
        return [p for p in (self._own_tracer, self._own_meter) if p is not None]
