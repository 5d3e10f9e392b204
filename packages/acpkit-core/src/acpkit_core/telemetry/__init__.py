"""Seeing into a served agent: OpenTelemetry traces and metrics, and one log line per connection and per turn.

[`Telemetry`][acpkit_core.telemetry.Telemetry] (`AgentOptions.telemetry`, or `acpkit run/serve
--otel`) turns it on; without it the server does no telemetry work. Traces and metrics need the
`otel` extra (`pip install "acpkit-core[otel]"`); nothing here imports OpenTelemetry until they
are on. See the [Observability](../../observability.md) page.
"""

from __future__ import annotations

from .logs import ACCESS_LOGGER, LOG_FORMATS, JsonFormatter, LogFormat, RedactingFormatter, configure_logging, redact
from .observer import TRACE_META_KEYS, trace_carrier
from .options import Telemetry

__all__ = [
    "ACCESS_LOGGER",
    "LOG_FORMATS",
    "TRACE_META_KEYS",
    "JsonFormatter",
    "LogFormat",
    "RedactingFormatter",
    "Telemetry",
    "configure_logging",
    "redact",
    "trace_carrier",
]
