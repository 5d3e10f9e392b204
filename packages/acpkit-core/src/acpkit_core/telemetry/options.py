"""[`Telemetry`][acpkit_core.telemetry.Telemetry]: what an agent reports about its serving, and where.

One `Telemetry` object is shared by every connection of an agent (it is the same object in each
copy of `AgentOptions`), so its instruments and its counts are process-wide. Nothing here imports
OpenTelemetry: [`observer`][acpkit_core.telemetry.Telemetry.observer] does, the first time it is
called with traces or metrics on.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import UserError

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from .observer import Observer

__all__ = ["OTEL_MODULES", "Telemetry"]

logger = logging.getLogger("acpkit_core.telemetry")

OTEL_MODULES = frozenset({"opentelemetry"})
"""What the `otel` extra brings that ACP Kit imports."""


@dataclass(kw_only=True, eq=False)
class Telemetry:
    """Traces, metrics and log lines of serving an agent (`AgentOptions.telemetry`).

    ```python
    from acpkit_core import AgentOptions, Telemetry

    options = AgentOptions(telemetry=Telemetry())  # OpenTelemetry, configured by the OTEL_* variables
    ```

    Traces and metrics need the `otel` extra (`pip install "acpkit-core[otel]"`); log lines do not
    (`Telemetry(traces=False, metrics=False)` gives the log lines alone). Without a `Telemetry`
    (the default) the server does no telemetry work at all: nothing is counted per update.
    """

    traces: bool = True
    """A span per turn, per tool call and per wait for the user, continuing the client's trace
    (`_meta.traceparent` / `tracestate` of `session/prompt`)."""
    metrics: bool = True
    """Connections, open sessions, running turns, turn durations, time to first update, updates and
    bytes sent, errors by code, refusals, lease waits and takeovers, store latency."""
    logs: bool = True
    """One line per connection and per turn on the `acpkit.access` logger, at INFO (shown when that
    logger is at INFO: `acpkit serve --access-log`)."""
    tracer_provider: TracerProvider | None = None
    """Where spans go. `None`: OpenTelemetry's global provider when something set one up, else a
    provider configured from the standard `OTEL_*` variables (then installed as the global one, so
    pydantic-ai's and LangSmith's spans go to the same place)."""
    meter_provider: MeterProvider | None = None
    """Where metrics go. `None`: a provider of ACP Kit's own, read by `acpkit serve`'s `/metrics`
    and exported as `OTEL_METRICS_EXPORTER` says. A provider given here is used as it is (then
    `/metrics` is not served: add your own reader to it)."""
    _observer: Observer | None = field(default=None, init=False, repr=False)
    _built: bool = field(default=False, init=False, repr=False)

    @property
    def otel_enabled(self) -> bool:
        """True when traces or metrics are on and `OTEL_SDK_DISABLED` is not `true`."""
        return (self.traces or self.metrics) and os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() != "true"

    def observer(self) -> Observer | None:
        """The process-wide recorder behind this object (built once); `None` when everything is off.

        Raises [`UserError`][acpkit_core.errors.UserError] when traces or metrics are on and the
        `otel` extra is not installed, or an `OTEL_*` variable names an exporter that is not.
        """
        if self._built:
            return self._observer
        from .observer import Observer

        backend = None
        if self.otel_enabled:
            try:
                from .otel import OtelBackend
            except ModuleNotFoundError as exc:
                if (exc.name or "").split(".")[0] not in OTEL_MODULES:
                    raise
                raise UserError(
                    "Telemetry(traces=..., metrics=...) needs OpenTelemetry, the `otel` extra of acpkit-core: "
                    'pip install "acpkit-core[otel]" (or turn traces and metrics off for the log lines alone)'
                ) from None
            backend = OtelBackend(self)
        elif self.traces or self.metrics:
            logger.info("OTEL_SDK_DISABLED is true: no traces or metrics")
        if backend is not None or self.logs:
            self._observer = Observer(backend=backend, access=self.logs)
        self._built = True
        return self._observer

    # --- what other parts of the server report ------------------------------------------------

    def record_refusal(self, reason: str) -> None:
        """Count one refused connection or request (`acpkit.refusals{reason=...}`): a bad token,
        a full server, a quota. `reason` is a short fixed word (`unauthorized`, `max_connections`)."""
        observer = self.observer()
        if observer is not None:
            observer.record_refusal(reason)

    def record_lease_wait(self, seconds: float) -> None:
        """Record how long a turn waited for its session's turn lease (`acpkit.lease.wait`)."""
        observer = self.observer()
        if observer is not None:
            observer.record_lease_wait(seconds)

    def record_lease_takeover(self) -> None:
        """Count a turn lease taken over from a process that died mid-turn (`acpkit.lease.takeovers`)."""
        observer = self.observer()
        if observer is not None:
            observer.record_lease_takeover()

    def prometheus_text(self) -> bytes | None:
        """The metrics in the Prometheus text format, `None` when they go to a provider given here
        (or metrics are off)."""
        observer = self.observer()
        if observer is None or observer.backend is None:
            return None
        return observer.backend.prometheus_text()

    def flush(self) -> None:
        """Export what is waiting (spans in a batch, the last metrics), without stopping."""
        if self._observer is not None and self._observer.backend is not None:
            self._observer.backend.flush()

    def shutdown(self) -> None:
        """Export what is waiting and stop the providers this object made itself (not ones given to it)."""
        if self._observer is not None and self._observer.backend is not None:
            self._observer.backend.shutdown()
