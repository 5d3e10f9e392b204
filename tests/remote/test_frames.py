"""WebSocket frames on the wire: one JSON-RPC message per text frame, in order, however fast they are sent.

The server writes the frames of one event-loop pass in one socket write (`acpkit_core.remote.wsprotocol`);
these tests read the raw bytes to check that this changes nothing a client can see but the
number of writes.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import socket
import struct
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from acpkit_core.remote.wsprotocol import FLUSH_BYTES, CorkedTransport, text_frame, websocket_protocol
from replicas import replica

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class RawFrames:
    """A WebSocket client on a bare socket: sends masked text frames, reads the server's frames as they are."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(
        cls, url: str, *, receive_buffer: int | None = None, headers: dict[str, str] | None = None
    ) -> RawFrames:
        parts = urlsplit(url)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:  # before connecting: it sets the window the server may fill
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (parts.hostname, parts.port))
        reader, writer = await asyncio.open_connection(sock=sock)
        key = base64.b64encode(os.urandom(16)).decode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        writer.write(
            f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n".encode()
        )
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        assert head.startswith("HTTP/1.1 101 "), head
        accept = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
        assert f"\r\nSec-WebSocket-Accept: {accept}\r\n" in head
        return cls(reader, writer)

    def send(self, message: dict[str, Any]) -> None:
        payload = json.dumps(message).encode()
        mask = os.urandom(4)
        masked = bytes(b ^ m for b, m in zip(payload, mask * (len(payload) // 4 + 1), strict=False))
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        self.writer.write(head + mask + masked)

    async def frame(self) -> tuple[int, bytes]:
        """The next frame: (first header byte, payload); asserts the server did not mask it."""
        b0, b1 = await self.reader.readexactly(2)
        assert not b1 & 0x80, "a server frame must not be masked"
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", await self.reader.readexactly(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", await self.reader.readexactly(8))
        return b0, await self.reader.readexactly(n)

    async def message(self) -> dict[str, Any]:
        """The next frame, which must be one whole text message holding one JSON-RPC object."""
        b0, payload = await self.frame()
        assert b0 == 0x81, f"expected a final text frame, got first byte {b0:#04x}"
        message = json.loads(payload)  # one JSON value: raises on NDJSON or two objects in a frame
        assert isinstance(message, dict) and message["jsonrpc"] == "2.0", message
        return message

    async def call(self, request_id: int, method: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Send a request; every message up to and including its answer, in the order received."""
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        received: list[dict[str, Any]] = []
        while not received or received[-1].get("id") != request_id or "method" in received[-1]:
            received.append(await self.message())
        return received


def _chunks(received: list[dict[str, Any]]) -> list[str]:
    *updates, answer = received
    assert answer["id"] == 2 or answer["id"] == 3
    assert answer["result"]["stopReason"] == "end_turn"
    return [
        u["params"]["update"]["content"]["text"]
        for u in updates
        if u["method"] == "session/update" and u["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]


def _said(words: list[str]) -> list[str]:
    return [w + " " for w in words[:-1]] + [words[-1]]


async def test_a_burst_arrives_one_message_per_text_frame_in_order(tmp_path: Path) -> None:
    # Frame lengths of all three sizes (7-bit, 16-bit, 64-bit), one over the flush size.
    words = ["s" * 300, "L" * (FLUSH_BYTES + 5000)] + [f"w{i}" for i in range(2000)]
    # Then 6 MB of chunks that the client does not read for a while, through a small receive
    # window: the kernel's buffers (up to 4 MB) and the server's fill, it waits (flow control),
    # and nothing is lost, merged or reordered.
    slow = [f"{i:03d}" + "x" * 99_997 for i in range(60)]
    async with replica(str(tmp_path / "frames.sqlite3")) as served:
        ws = await RawFrames.connect(served.url, receive_buffer=8192)
        (init,) = await ws.call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert init["result"]["protocolVersion"] == 1
        created = await ws.call(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        sid = created[-1]["result"]["sessionId"]
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "say " + " ".join(words)}]}
        assert _chunks(await ws.call(2, "session/prompt", prompt)) == _said(words)

        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "say " + " ".join(slow)}]}
        ws.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
        await asyncio.sleep(1.0)
        received: list[dict[str, Any]] = []
        while not received or received[-1].get("id") != 3:
            received.append(await ws.message())
        assert _chunks(received) == _said(slow)
        ws.writer.close()
        with contextlib.suppress(OSError):
            await ws.writer.wait_closed()


async def test_frames_written_in_one_loop_pass_leave_in_one_write() -> None:
    loop = asyncio.get_running_loop()
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)
    transport, _ = await loop.create_connection(asyncio.Protocol, sock=ours)
    corked = CorkedTransport(transport, loop)  # pyright: ignore[reportArgumentType]
    try:
        frames = [text_frame(json.dumps({"jsonrpc": "2.0", "method": "n", "params": i}).encode()) for i in range(100)]
        for frame in frames:
            corked.write(frame)
        with pytest.raises(BlockingIOError):  # nothing written yet: the pass is not over
            theirs.recv(1 << 20)
        assert corked.get_write_buffer_size() == sum(map(len, frames))
        await asyncio.sleep(0)  # the end of the pass
        assert theirs.recv(1 << 20) == b"".join(frames)

        big = text_frame(b"x" * FLUSH_BYTES)  # past FLUSH_BYTES: written at once
        corked.write(big)
        assert corked.get_write_buffer_size() == transport.get_write_buffer_size()
        received = b""
        while len(received) < len(big):
            received += await loop.sock_recv(theirs, 1 << 20)
        assert received == big

        corked.write(frames[0])
        corked.close()  # closing writes what waits first
        received = b""
        while chunk := await loop.sock_recv(theirs, 1 << 20):
            received += chunk
        assert received == frames[0]
    finally:
        transport.close()
        theirs.close()


def test_text_frame_lengths() -> None:
    assert text_frame(b"hi") == b"\x81\x02hi"
    assert text_frame(b"a" * 126)[:4] == b"\x81\x7e\x00\x7e"
    assert text_frame(b"a" * 70000)[:10] == b"\x81\x7f" + (70000).to_bytes(8, "big")


def test_the_installed_uvicorn_gets_the_corked_protocol() -> None:
    # A uvicorn upgrade that removes what the corked protocol relies on falls back to stock uvicorn
    # (still correct, one write per frame); this test says so instead of letting the figure drop.
    protocol = websocket_protocol()
    assert not isinstance(protocol, str), "uvicorn changed: acpkit serve fell back to its stock protocol"
    assert protocol.__name__ == "CorkedWebSocketProtocol"


async def test_a_numbered_update_encoded_once_reads_as_its_json(tmp_path: Path) -> None:
    """A served turn's update is encoded once, for the update log and the frame: the frame is the
    message's JSON (escapes, non-ASCII and a model's lone surrogate included), numbered in order."""
    words = ['quo"te\\back', "ünïcödé", "lone\ud800surrogate", "tab\there", "last"]
    async with replica(str(tmp_path / "frames.sqlite3")) as served:
        ws = await RawFrames.connect(served.url)
        await ws.call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        sid = (await ws.call(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))[-1]["result"]["sessionId"]
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "say " + " ".join(words)}]}
        received = await ws.call(2, "session/prompt", prompt)
        assert _chunks(received) == _said(words)
        updates = [
            m
            for m in received
            if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
        assert all(set(m) == {"jsonrpc", "method", "params"} for m in updates)
        assert all(
            set(m["params"]) == {"sessionId", "update", "_meta"} and m["params"]["sessionId"] == sid for m in updates
        )
        numbers = [m["params"]["_meta"]["acpkit.seq"] for m in updates]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        # Re-attached after the turn's beginning: the log gives back the same messages, numbers included.
        resume = {"acpkit.resume": {"after": numbers[0] - 1}}
        load = {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": [], "_meta": resume}
        ws.send({"jsonrpc": "2.0", "id": 3, "method": "session/load", "params": load})
        replayed: list[dict[str, Any]] = []
        while not replayed or replayed[-1].get("method") != "_acpkit/turn_ended":
            replayed.append(await ws.message())
        assert [m for m in replayed if m in updates] == updates
        ws.writer.close()
        with contextlib.suppress(OSError):
            await ws.writer.wait_closed()
