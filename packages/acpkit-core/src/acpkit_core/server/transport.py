"""The agent side's byte transport: newline-delimited JSON written straight to the stream.

The SDK's stdio sender puts every outgoing message on a queue, wakes a writer task and waits
for it, which costs two task switches per message; for a streamed answer that is one message
per token. [`DirectSender`][acpkit_core.server.transport.DirectSender] writes each message
synchronously in call order instead (so ordering is the order of the calls, as before) and
only waits when the peer reads slower than we write. Reading and framing stay the SDK's
(`NdjsonTransport`, reached in `server/_sdk.py`), so the wire format is unchanged.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pydantic_core

__all__ = ["DirectSender", "encode_message"]


def encode_message(payload: dict[str, Any]) -> bytes:
    """One NDJSON line: compact UTF-8 JSON and a newline.

    pydantic-core's encoder is several times faster than `json.dumps`; text it cannot encode as
    UTF-8 (a lone surrogate from a model) falls back to `json.dumps`, which escapes it.
    """
    try:
        return pydantic_core.to_json(payload) + b"\n"
    except pydantic_core.PydanticSerializationError:
        return (json.dumps(payload, separators=(",", ":")) + "\n").encode("utf-8")


class DirectSender:
    """Writes one JSON-RPC message per line to `writer`, at once, in the order `send` is called."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._closed = False

    async def send(self, payload: dict[str, Any]) -> None:
        """Encode and write `payload`; wait only while the peer's buffer is full.

        Raises `ConnectionError` once the stream is closed or the peer has gone.
        """
        if self._closed or self._writer.is_closing():
            raise ConnectionError("Connection closed")
        self._writer.write(encode_message(payload))
        if self._writer.transport.get_write_buffer_size():
            # The kernel did not take it all: the peer reads slower than we write. Wait while
            # the buffer is over its high-water mark (raises if the peer has gone).
            await self._writer.drain()

    async def close(self) -> None:
        """Stop sending (the stream itself belongs to whoever opened it)."""
        self._closed = True
