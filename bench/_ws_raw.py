"""A raw WebSocket client for the benches: the handshake, masked text frames out, frames in, nothing else.

The stdio bench client only splits lines; this one only splits frames (RFC 6455), so what a chunk
costs the client is about the same work on both transports and the figure is the server's.
Pings are answered; fragmented messages are not expected (the server sends one frame per message)
and are refused.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import os
import socket
import struct
from urllib.parse import urlsplit

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA


def _mask(payload: bytes, key: bytes) -> bytes:
    n = len(payload)
    if not n:
        return payload
    stream = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(stream, "big")).to_bytes(n, "big")


def client_frame(opcode: int, payload: bytes) -> bytes:
    """One masked frame with FIN set (what a client must send)."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    key = os.urandom(4)
    return head + key + _mask(payload, key)


class RawWebSocket:
    """One client connection; `frames()` yields each server frame as (fin, opcode, payload)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, headers: dict[str, str]) -> None:
        self.reader = reader
        self.writer = writer
        self.headers = headers
        """The 101 response's headers (lower-case names)."""
        self._buffer = b""
        self._pos = 0

    @classmethod
    async def connect(
        cls, url: str, headers: dict[str, str] | None = None, *, receive_buffer: int | None = None
    ) -> RawWebSocket:
        """Upgrade to a WebSocket; `receive_buffer`: the socket's receive window (a client that reads slowly)."""
        parts = urlsplit(url)
        if receive_buffer is None:
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port, limit=2**24)
        else:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, (parts.hostname, parts.port))
            # A small reader limit too: asyncio reads ahead into the stream's buffer up to twice it.
            reader, writer = await asyncio.open_connection(sock=sock, limit=receive_buffer)
        key = base64.b64encode(os.urandom(16)).decode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        writer.write(
            f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n".encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        status, *lines = head.decode("latin-1").split("\r\n")
        if " 101 " not in status + " ":
            raise ConnectionError(f"no WebSocket upgrade: {status}")
        answer = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}
        accept = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
        if answer.get("sec-websocket-accept") != accept:
            raise ConnectionError("bad Sec-WebSocket-Accept")
        return cls(reader, writer, answer)

    def send_text(self, text: str | bytes) -> None:
        self.writer.write(client_frame(TEXT, text.encode() if isinstance(text, str) else text))

    async def frame(self) -> tuple[bool, int, bytes]:
        """The next frame from the server (pings answered and returned too)."""
        while True:
            buf, pos = self._buffer, self._pos
            have = len(buf) - pos
            if have >= 2:
                b0, b1 = buf[pos], buf[pos + 1]
                if b1 & 0x80:
                    raise ConnectionError("a server frame is masked")
                n, start = b1 & 0x7F, pos + 2
                if n == 126:
                    n, start = (struct.unpack_from("!H", buf, pos + 2)[0], pos + 4) if have >= 4 else (-1, 0)
                elif n == 127:
                    n, start = (struct.unpack_from("!Q", buf, pos + 2)[0], pos + 10) if have >= 10 else (-1, 0)
                end = start + n
                if n >= 0 and len(buf) >= end:
                    self._pos = end
                    payload = buf[start:end]
                    opcode = b0 & 0x0F
                    if opcode == PING:
                        self.writer.write(client_frame(PONG, payload))
                    return bool(b0 & 0x80), opcode, payload
            data = await self.reader.read(1 << 18)
            if not data:
                raise ConnectionError("the server closed the connection")
            self._buffer, self._pos = buf[pos:] + data, 0

    async def text(self) -> bytes:
        """The next text message (one frame with FIN set; anything else but pings is an error)."""
        while True:
            fin, opcode, payload = await self.frame()
            if opcode == TEXT and fin:
                return payload
            if opcode in (PING, PONG):
                continue
            raise ConnectionError(f"unexpected frame: fin={fin} opcode={opcode:#x}")

    async def close(self) -> None:
        with_close = client_frame(CLOSE, struct.pack("!H", 1000))
        self.writer.write(with_close)
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()
