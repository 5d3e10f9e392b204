"""The agent side's byte transport: direct writes, in order, with back-pressure and a clear end."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import socket
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from acp.schema import AgentMessageChunk
from acpkit_core.config import AgentOptions
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import StopReason
from acpkit_core.server import AcpAgent
from acpkit_core.server._sdk import wire_transport
from acpkit_core.server.transport import DirectSender, encode_message
from acpkit_core.testing import AcpTestClient


@asynccontextmanager
async def socket_pair() -> AsyncGenerator[tuple[asyncio.StreamWriter, socket.socket]]:
    """A writer on one end of a socket pair with small kernel buffers; the other end, unread."""
    a, b = socket.socketpair()
    for s in (a, b):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    _, writer = await asyncio.open_connection(sock=a)
    try:
        yield writer, b
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
        b.close()


def test_encode_message_is_one_compact_utf8_line() -> None:
    payload = {"jsonrpc": "2.0", "method": "m", "params": {"text": "é ☃ \n end", "n": [1, None]}}
    line = encode_message(payload)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == payload
    assert b" " not in line.replace(b"\xc3\xa9 \xe2\x98\x83 \\n end", b"")


def test_encode_message_escapes_a_lone_surrogate_instead_of_failing() -> None:
    line = encode_message({"text": "a\ud800b"})
    assert line == b'{"text":"a\\ud800b"}\n'
    assert json.loads(line) == {"text": "a\ud800b"}


async def test_a_slow_reader_gets_every_message_in_order() -> None:
    """Far more than the kernel buffers hold, written while nobody reads: none lost, none reordered."""
    async with socket_pair() as (writer, peer):
        sender = DirectSender(writer)
        blob = "x" * 10_000

        async def send_all() -> None:
            for i in range(300):
                await sender.send({"n": i, "blob": blob})

        sent = asyncio.ensure_future(send_all())
        await asyncio.sleep(0.05)
        assert not sent.done()  # waiting for the reader: back-pressure, not an unbounded buffer
        reader, peer_writer = await asyncio.open_connection(sock=peer, limit=2**24)
        got = [json.loads(await reader.readline())["n"] for _ in range(300)]
        await sent
        peer_writer.close()
    assert got == list(range(300))


async def test_sending_after_the_peer_left_raises_connection_error() -> None:
    async with socket_pair() as (writer, peer):
        sender = DirectSender(writer)
        peer.close()
        with pytest.raises(ConnectionError):
            for i in range(1000):  # the first writes may still land in the kernel buffer
                await sender.send({"n": i, "blob": "x" * 10_000})
                await asyncio.sleep(0)
        await sender.close()
        with pytest.raises(ConnectionError, match="closed"):
            await sender.send({"n": 0})


class Unicode:
    async def run_turn(self, turn: Turn) -> StopReason:
        for piece in ("naïve ", "☃ ", "a\ud800b ", "𝄞"):
            await turn.emit.text(piece)
        return "end_turn"


@pytest.mark.parametrize("merged", [False, True])
async def test_streamed_text_reaches_the_client_exactly_including_odd_unicode(merged: bool) -> None:
    options = AgentOptions(store="memory") if merged else AgentOptions(store="memory", coalesce_ms=0)
    async with AcpTestClient.connect(AcpAgent(Unicode(), options)) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
        _, loaded = await c.load_session(sid)
    chunks = [u.content.text for u in r.updates if isinstance(u, AgentMessageChunk)]  # type: ignore[union-attr]
    if merged:  # the first piece at once, the others (within the window) merged, or not if the machine stalled
        assert chunks[0] == "naïve " and "".join(chunks) == "naïve ☃ a\ud800b 𝄞"
    else:
        assert chunks == ["naïve ", "☃ ", "a\ud800b ", "𝄞"]
    assert r.stop_reason == "end_turn"
    replayed = [u.content.text for u in loaded if isinstance(u, AgentMessageChunk)]  # type: ignore[union-attr]
    assert "".join(replayed) == "naïve ☃ a\ud800b 𝄞"


async def test_without_the_sdks_transport_seam_the_server_falls_back_to_the_sdks_sender(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_import = importlib.import_module

    def no_seam(name: str, package: str | None = None) -> Any:
        if name == "acp._transport":
            raise ImportError("no acp._transport in this SDK")
        return real_import(name, package)

    monkeypatch.setattr(importlib, "import_module", no_seam)
    assert wire_transport(asyncio.StreamReader(), None, max_message_bytes=1) is None  # type: ignore[arg-type]
    async with AcpTestClient.connect(AcpAgent(Unicode(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
    assert r.text == "naïve ☃ a\ud800b 𝄞" and r.stop_reason == "end_turn"
