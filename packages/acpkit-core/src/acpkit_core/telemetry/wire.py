"""The stdio sender that counts what it writes (used only when telemetry is on)."""

from __future__ import annotations

import asyncio
from typing import Any

from ..server.transport import WRITE_WINDOW_MS, DirectSender, encode_message
from .counts import WireCounts

__all__ = ["MeteredSender"]


class MeteredSender(DirectSender):
    """[`DirectSender`][acpkit_core.server.transport.DirectSender], adding each message's bytes to `counts`.

    Each message is counted when it is sent, one by one, whether it is written at once or shares a
    write with others at the end of the write window.
    """

    def __init__(self, writer: asyncio.StreamWriter, counts: WireCounts, *, window_ms: float = WRITE_WINDOW_MS) -> None:
        super().__init__(writer, window_ms=window_ms)
        self.counts = counts
        """Where the messages, updates, bytes and error answers are counted."""

    async def send(self, payload: dict[str, Any] | list[dict[str, Any]]) -> None:
        """Encode, count and write `payload`; wait only while the peer's buffer is full."""
        if self._closed or self._writer.is_closing():
            raise ConnectionError("Connection closed")
        data = encode_message(payload)
        self.counts.note(payload, len(data))
        if self._put(payload, data):
            await self._writer.drain()
