"""A small OTLP/HTTP receiver for tests: what an OpenTelemetry collector would receive from an agent process.

It listens on loopback (port 0), decodes the protobuf `ExportTraceServiceRequest`s POSTed to
`/v1/traces` (gzip or not) into plain `Span` records, and accepts `/v1/metrics` (counted, not
decoded). Point a process at it with `OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint`.
"""

from __future__ import annotations

import gzip
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class Span:
    """One received span."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]
    service: str
    scope: str
    status_code: int
    trace_state: str = ""
    events: list[str] = field(default_factory=list[str])


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    value = getattr(any_value, kind)
    if kind == "array_value":
        return [_value(v) for v in value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.values}
    return value


class OtlpReceiver:
    """`with OtlpReceiver() as receiver:` ... `receiver.spans`."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.metric_posts = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    request = ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    receiver._add(request)
                    answer = ExportTraceServiceResponse().SerializeToString()
                else:
                    with receiver._lock:
                        receiver.metric_posts += 1
                    answer = b""
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        """The base URL for `OTEL_EXPORTER_OTLP_ENDPOINT`."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def env(self, service: str) -> dict[str, str]:
        """The variables that send a process's spans here at once (and its metrics nowhere)."""
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_SERVICE_NAME": service,
            "OTEL_BSP_SCHEDULE_DELAY": "50",
            "OTEL_METRICS_EXPORTER": "none",
        }

    def _add(self, request: Any) -> None:
        found: list[Span] = []
        for resource_spans in request.resource_spans:
            attributes = {kv.key: _value(kv.value) for kv in resource_spans.resource.attributes}
            service = str(attributes.get("service.name", ""))
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append(
                        Span(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            kind=span.kind,
                            attributes={kv.key: _value(kv.value) for kv in span.attributes},
                            service=service,
                            scope=scope_spans.scope.name,
                            status_code=span.status.code,
                            trace_state=span.trace_state,
                            events=[e.name for e in span.events],
                        )
                    )
        with self._lock:
            self.spans.extend(found)

    def named(self, name: str) -> list[Span]:
        """The spans received with this name."""
        with self._lock:
            return [s for s in self.spans if s.name == name]

    def wait_for(self, name: str, count: int = 1, timeout: float = 30.0) -> list[Span]:
        """Wait until `count` spans named `name` arrived (raises `TimeoutError`)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.named(name)
            if len(found) >= count:
                return found
            time.sleep(0.02)
        with self._lock:
            names = sorted({s.name for s in self.spans})
        raise TimeoutError(f"{count} span(s) {name!r} not received in {timeout} s; received: {names}")

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
