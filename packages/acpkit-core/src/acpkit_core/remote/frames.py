"""The client's WebSocket frames, admitted or dropped by their header before anything buffers them.

A WebSocket frame says its length before its payload (RFC 6455, section 5.2).
[`FrameGate`][acpkit_core.remote.frames.FrameGate] reads the headers of what a client sends,
ahead of the WebSocket parser, and decides each data frame at its header:

- a text frame over the message size limit, or one whose bytes the server-wide budget
  ([`InflightBudget`][acpkit_core.remote.budget.InflightBudget]) cannot take, is dropped as it
  arrives: only its first 4 KiB are kept (unmasked), to answer its JSON-RPC `id` with an error
  ([`Refused`][acpkit_core.remote.frames.Refused]); the connection goes on;
- a binary frame is dropped (the RFD: binary frames are ignored), so it never fills memory either;
- anything else (admitted text frames, control frames) goes to the parser unchanged.

A fragmented message is decided by its first frame; a continuation that takes it past the limit
or the budget cannot be answered (its `id` went to the parser) and closes the connection
([`FrameGate.failure`][acpkit_core.remote.frames.FrameGate.failure]).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from ..server.transport import PREFIX_BYTES

__all__ = ["FrameGate", "Refused"]

_CONTINUATION: Final = 0x0
_TEXT: Final = 0x1
_BINARY: Final = 0x2
WS_MESSAGE_TOO_BIG: Final = 1009
WS_TRY_AGAIN: Final = 1013


@dataclass(frozen=True, slots=True)
class Refused:
    """A text message dropped at its header: its first bytes, its size, and why."""

    prefix: bytes
    """Its first `PREFIX_BYTES` (unmasked), to find its `id`."""
    size: int
    """Its payload size in bytes."""
    reason: Literal["size", "budget"]
    """Over the message size limit, or over the server's budget of bytes in flight."""


Segment = bytes | Refused
"""What `FrameGate.feed` gives back, in order: bytes for the parser, or a dropped message."""

_Mode = Literal["pass", "size", "budget", "ignore"]


class FrameGate:
    """Reads frame headers from the client's byte stream and admits or drops each data frame."""

    __slots__ = (
        "_admit",
        "_frame_fin",
        "_frame_mode",
        "_head",
        "_limit",
        "_mask",
        "_message",
        "_offset",
        "_prefix",
        "_remaining",
        "_size",
        "failure",
    )

    def __init__(self, *, limit: int, admit: Callable[[int], bool]) -> None:
        self._limit = limit
        self._admit = admit
        self._head = bytearray()
        self._remaining = 0
        self._frame_mode: _Mode = "pass"
        self._frame_fin = True
        self._message: _Mode | None = None
        """The mode of the (fragmented) message under way, `None` between messages."""
        self._size = 0
        self._mask = b""
        self._offset = 0
        self._prefix = bytearray()
        self.failure: tuple[int, str] | None = None
        """Set when the connection must close: (WebSocket close code, reason)."""

    def feed(self, data: bytes) -> list[Segment]:
        """What the parser gets of `data`, and the messages dropped in it, in the order they came."""
        if self.failure is not None:
            return []
        if self._remaining >= len(data) and not self._head and self._frame_mode == "pass":
            self._remaining -= len(data)  # the common case for a big admitted frame: all payload
            if not self._remaining:
                self._frame_done()
            return [data]
        out: list[Segment] = []
        run: list[bytes] = []
        view = memoryview(data)
        pos, end = 0, len(data)
        while pos < end and self.failure is None:
            if self._remaining:
                take = min(self._remaining, end - pos)
                chunk = view[pos : pos + take]
                if self._frame_mode == "pass":
                    run.append(bytes(chunk))
                else:
                    self._keep_prefix(chunk)
                self._remaining -= take
                pos += take
                if not self._remaining:
                    dropped = self._frame_done()
                    if dropped is not None:
                        _flush(run, out)
                        out.append(dropped)
                continue
            pos = self._read_head(view, pos, end)
            if pos < 0:  # the header is not complete yet
                break
            if self._frame_mode == "pass":
                run.append(bytes(self._head))
            self._head.clear()
            if not self._remaining:
                dropped = self._frame_done()
                if dropped is not None:
                    _flush(run, out)
                    out.append(dropped)
        _flush(run, out)
        return out

    def _read_head(self, view: memoryview, pos: int, end: int) -> int:
        """Take header bytes; the position after a complete header (its frame decided), or -1."""
        head = self._head
        while pos < end:
            head.append(view[pos])
            pos += 1
            if len(head) >= 2 and len(head) == _head_length(head):
                self._decide(head)
                return pos
        return -1

    def _decide(self, head: bytearray) -> None:
        fin, opcode = bool(head[0] & 0x80), head[0] & 0x0F
        masked = bool(head[1] & 0x80)
        n = head[1] & 0x7F
        ext = 2 if n == 126 else 8 if n == 127 else 0
        size = int.from_bytes(head[2 : 2 + ext], "big") if ext else n
        self._mask = bytes(head[2 + ext : 6 + ext]) if masked else b""
        self._offset = 0
        self._remaining = size
        self._frame_fin = fin
        mode: _Mode = "pass"
        if opcode >= 0x8 or opcode not in (_CONTINUATION, _TEXT, _BINARY):
            mode = "pass"  # control frames (and what the parser will refuse) go on
        elif opcode == _BINARY:
            mode = "ignore"
        elif opcode == _TEXT:
            self._size = size
            self._prefix.clear()
            if size > self._limit:
                mode = "size"
            elif not self._admit(size):
                mode = "budget"
        elif self._message is not None:  # a continuation
            mode = self._message
            self._size += size
            if mode == "pass":
                if self._size > self._limit:
                    self.failure = (WS_MESSAGE_TOO_BIG, f"a fragmented message went over the {self._limit} bytes limit")
                elif not self._admit(size):
                    self.failure = (WS_TRY_AGAIN, "the server's budget for messages in flight is spent: retry later")
        if opcode in (_TEXT, _BINARY) or (opcode == _CONTINUATION and self._message is not None):
            self._message = None if fin else mode
        self._frame_mode = mode

    def _keep_prefix(self, chunk: memoryview) -> None:
        room = PREFIX_BYTES - len(self._prefix)
        if room > 0 and self._frame_mode in ("size", "budget"):
            piece = bytes(chunk[:room])
            if self._mask:
                mask, start = self._mask, self._offset
                piece = bytes(b ^ mask[(start + i) & 3] for i, b in enumerate(piece))
            self._prefix += piece
        self._offset += len(chunk)

    def _frame_done(self) -> Refused | None:
        """The current frame's payload is complete: a dropped text message that ended here, if any."""
        mode = self._frame_mode
        self._frame_mode = "pass"
        if mode in ("size", "budget") and self._frame_fin:
            return Refused(prefix=bytes(self._prefix), size=self._size, reason=mode)  # pyright: ignore[reportArgumentType]
        return None


def _head_length(head: bytearray) -> int:
    n = head[1] & 0x7F
    return 2 + (2 if n == 126 else 8 if n == 127 else 0) + (4 if head[1] & 0x80 else 0)


def _flush(run: list[bytes], out: list[Segment]) -> None:
    if run:
        out.append(run[0] if len(run) == 1 else b"".join(run))
        run.clear()
