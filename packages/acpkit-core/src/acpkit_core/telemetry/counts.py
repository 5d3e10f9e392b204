"""What a transport sent, counted without OpenTelemetry (read by the metrics' callbacks)."""

from __future__ import annotations

from typing import Any, cast

__all__ = ["WireCounts"]


_UPDATE = "session/update"


class WireCounts:
    """What one connection's transport sent: messages, `session/update`s, bytes, error answers by code."""

    __slots__ = ("bytes", "errors", "messages", "updates")

    def __init__(self) -> None:
        self.messages = 0
        self.updates = 0
        self.bytes = 0
        self.errors: dict[int, int] = {}

    def note(self, payload: dict[str, Any] | list[dict[str, Any]], size: int) -> None:
        """One payload of `size` bytes written (a message, or a batch's answers)."""
        self.bytes += size
        if isinstance(payload, dict):
            self._one(payload)
        else:
            for item in payload:
                self._one(item)

    def _one(self, message: dict[str, Any]) -> None:
        self.messages += 1
        if message.get("method") == _UPDATE:
            self.updates += 1
        elif (error := message.get("error")) is not None:
            code = cast("dict[str, Any]", error).get("code") if isinstance(error, dict) else None
            key = code if isinstance(code, int) else 0
            self.errors[key] = self.errors.get(key, 0) + 1

    def add(self, other: WireCounts) -> None:
        """Add `other`'s counts to these."""
        self.messages += other.messages
        self.updates += other.updates
        self.bytes += other.bytes
        for code, n in list(other.errors.items()):
            self.errors[code] = self.errors.get(code, 0) + n

    def copy(self) -> WireCounts:
        """A snapshot."""
        out = WireCounts()
        out.add(self)
        return out
