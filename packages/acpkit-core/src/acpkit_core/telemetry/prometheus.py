"""OpenTelemetry metrics in the Prometheus text exposition format (version 0.0.4), for `/metrics`.

The names follow OpenTelemetry's Prometheus compatibility rules: dots and other characters
become `_`, the unit is appended (`s` -> `_seconds`, `By` -> `_bytes`; annotations in braces
like `{turn}` are dropped), a monotonic sum gets `_total` and is a `counter`, an up-down sum or
a gauge is a `gauge`, a histogram gives cumulative `_bucket{le=...}`, `_sum` and `_count`. The
resource's attributes are the labels of `target_info`.

```text
# HELP acpkit_turn_duration_seconds How long prompt turns took, ...
# TYPE acpkit_turn_duration_seconds histogram
acpkit_turn_duration_seconds_bucket{adapter="pydantic-acp",stop_reason="end_turn",le="0.05"} 3
...
```
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from opentelemetry.sdk.metrics.export import Gauge, Histogram, Metric, MetricsData, Sum

__all__ = ["CONTENT_TYPE", "metric_name", "render_prometheus"]

CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
"""The `Content-Type` of the text format."""

_UNITS: Final = {
    "s": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "ns": "nanoseconds",
    "min": "minutes",
    "h": "hours",
    "d": "days",
    "By": "bytes",
    "KiBy": "kibibytes",
    "MiBy": "mebibytes",
    "KBy": "kilobytes",
    "MBy": "megabytes",
    "%": "percent",
}
_BAD_NAME = re.compile(r"[^a-zA-Z0-9_:]+")
_BAD_LABEL = re.compile(r"[^a-zA-Z0-9_]+")


def _unit(unit: str | None) -> str:
    unit = re.sub(r"\{[^}]*\}", "", unit or "").strip()
    if not unit or unit == "1":
        return ""
    return _UNITS.get(unit, _BAD_NAME.sub("_", unit).strip("_"))


def metric_name(name: str, unit: str | None, *, counter: bool) -> str:
    """The Prometheus name of a metric (`acpkit.turn.duration` in `s`: `acpkit_turn_duration_seconds`)."""
    out = _BAD_NAME.sub("_", name).strip("_")
    out = re.sub(r"__+", "_", out)
    if out and out[0].isdigit():
        out = "_" + out
    suffix = _unit(unit)
    if suffix and not out.endswith("_" + suffix):
        out += "_" + suffix
    if counter and not out.endswith("_total"):
        out += "_total"
    return out


def _label_name(key: str) -> str:
    out = _BAD_LABEL.sub("_", key)
    return "_" + out if out[:1].isdigit() else out


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def _text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "[" + ",".join(_text(v) for v in value) + "]"  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _labels(attributes: Mapping[str, Any] | None, extra: Iterable[tuple[str, str]] = ()) -> str:
    pairs = [(_label_name(k), _escape(_text(v))) for k, v in (attributes or {}).items()]
    pairs += [(k, _escape(v)) for k, v in extra]
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{v}"' for k, v in pairs) + "}"


def _help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _family(metric: Metric) -> tuple[str, str, list[str]] | None:
    """(name, type, sample lines) of one metric; `None` for a kind the text format does not carry."""
    data = metric.data
    if isinstance(data, Sum):
        counter = data.is_monotonic
        name = metric_name(metric.name, metric.unit, counter=counter)
        lines = [f"{name}{_labels(p.attributes)} {_number(p.value)}" for p in data.data_points]
        return name, "counter" if counter else "gauge", lines
    if isinstance(data, Gauge):
        name = metric_name(metric.name, metric.unit, counter=False)
        return name, "gauge", [f"{name}{_labels(p.attributes)} {_number(p.value)}" for p in data.data_points]
    if isinstance(data, Histogram):
        name = metric_name(metric.name, metric.unit, counter=False)
        lines: list[str] = []
        for point in data.data_points:
            running = 0
            for bound, count in zip(point.explicit_bounds, point.bucket_counts, strict=False):
                running += count
                lines.append(f"{name}_bucket{_labels(point.attributes, [('le', _number(float(bound)))])} {running}")
            lines.append(f"{name}_bucket{_labels(point.attributes, [('le', '+Inf')])} {point.count}")
            lines.append(f"{name}_sum{_labels(point.attributes)} {_number(point.sum)}")
            lines.append(f"{name}_count{_labels(point.attributes)} {point.count}")
        return name, "histogram", lines
    return None


def render_prometheus(data: MetricsData | None) -> str:
    """`data` (from a metric reader's collection) as the Prometheus text format."""
    families: dict[str, tuple[str, str, list[str]]] = {}
    target: list[str] = []
    for resource_metrics in data.resource_metrics if data is not None else ():
        attributes = dict(resource_metrics.resource.attributes)
        if attributes and not target:
            target = [
                "# HELP target_info Target metadata",
                "# TYPE target_info gauge",
                f"target_info{_labels(attributes)} 1",
            ]
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                family = _family(metric)
                if family is None:
                    continue
                name, kind, lines = family
                if name in families:
                    families[name][2].extend(lines)
                else:
                    families[name] = (_help(metric.description or metric.name), kind, list(lines))
    out = list(target)
    for name, (help_text, kind, lines) in families.items():
        out.append(f"# HELP {name} {help_text}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(lines)
    return "\n".join(out) + "\n" if out else ""
