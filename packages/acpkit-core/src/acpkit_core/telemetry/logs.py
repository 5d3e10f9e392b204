"""Log lines: one per connection and per turn (the `acpkit.access` logger), as text or JSON, secrets masked.

The access lines carry ids, a principal's name, counts and durations: never a token, a prompt, a
tool's arguments or an error's message (the error's code only). The formatters here also mask
what looks like a secret in any other log line (`Bearer ...`, a URL's password, `token=...`),
since an exception's message can quote a connection string.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any, Final, Literal, TextIO

__all__ = [
    "ACCESS_LOGGER",
    "LOG_FORMATS",
    "JsonFormatter",
    "LogFormat",
    "RedactingFormatter",
    "access_line",
    "configure_logging",
    "redact",
]

ACCESS_LOGGER: Final = "acpkit.access"
"""The logger of the per-connection and per-turn lines (at INFO)."""

LogFormat = Literal["text", "json"]
LOG_FORMATS: Final[tuple[LogFormat, ...]] = ("text", "json")
"""The formats `--log-format` takes."""

_MASK = "[redacted]"
_SECRETS: Final = (
    (
        re.compile(
            r"(?i)\b(password|passwd|secret|token|api[_-]?key|authorization)(\"?\s*[=:]\s*\"?)"
            r"((?:bearer|basic)\s+)?([^\s\"',;&}]+)"
        ),
        rf"\1\2\3{_MASK}",
    ),
    (re.compile(r"(?i)\b(bearer\s+)[^\s\"',;]+"), rf"\1{_MASK}"),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@\"']*:)[^\s@/\"']+@"), rf"\1{_MASK}@"),
)


_QUOTED = frozenset(' "=\n')


def redact(text: str) -> str:
    """`text` with bearer tokens, URL passwords and `token=` / `password=` / `api_key=` values masked."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


class _Line:
    """An access line, rendered only if a handler formats it: `event key=value ...` (`None`s left out)."""

    __slots__ = ("event", "fields")

    def __init__(self, event: str, fields: dict[str, Any]) -> None:
        self.event = event
        self.fields = fields

    def __str__(self) -> str:
        parts = [self.event]
        for key, value in self.fields.items():
            if value is None:
                continue
            text = str(value)
            quoted = not text or any(c in text for c in _QUOTED)
            parts.append(f"{key}={json.dumps(text) if quoted else text}")
        return " ".join(parts)


def access_line(event: str, fields: dict[str, Any]) -> object:
    """The message of an access line (`connection`, `turn`, `refused`) with its fields."""
    return _Line(event, fields)


class RedactingFormatter(logging.Formatter):
    """A text formatter that masks secrets in what it writes."""

    def format(self, record: logging.LogRecord) -> str:
        """The line, masked."""
        return redact(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: `time`, `level`, `logger`, `message`, the access line's fields, `exception`.

    ```json
    {"time": "2026-01-05T10:00:00.123Z", "level": "INFO", "logger": "acpkit.access", "message": "turn ...",
     "event": "turn", "session_id": "...", "principal": "alice", "stop_reason": "end_turn", ...}
    ```
    """

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON (secrets masked in the message and the traceback)."""
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        out: dict[str, Any] = {
            "time": stamp,
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        fields: Any = getattr(record, "acpkit", None)
        if isinstance(fields, dict):
            out.update({k: v for k, v in fields.items() if v is not None})  # pyright: ignore[reportUnknownVariableType]
        if record.exc_info:
            out["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(out, default=str, ensure_ascii=False)


def configure_logging(
    level: str = "WARNING",
    *,
    fmt: LogFormat = "text",
    access: bool = False,
    text_format: str = "acpkit %(levelname)s %(name)s: %(message)s",
    stream: TextIO | None = None,
) -> None:
    """Log to stderr (`stream`) at `level`, as text or JSON, masking secrets.

    `access` shows the per-connection and per-turn lines (`acpkit.access` at INFO) whatever `level` is.
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else RedactingFormatter(text_format))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(getattr(logging, level.upper(), logging.WARNING))
    if access:
        logging.getLogger(ACCESS_LOGGER).setLevel(logging.INFO)
