"""The frame gate on its own: WebSocket frames admitted or dropped at their header, however they arrive."""

from __future__ import annotations

import json
import os
import struct

from acpkit_core.remote.budget import Account, InflightBudget
from acpkit_core.remote.frames import FrameGate, Refused


def frame(opcode: int, payload: bytes, *, fin: bool = True) -> bytes:
    """A masked client frame."""
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 1 << 16:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def _feed_in_pieces(gate: FrameGate, data: bytes, size: int) -> list[bytes | Refused]:
    out: list[bytes | Refused] = []
    for i in range(0, len(data), size):
        out.extend(gate.feed(data[i : i + size]))
    return out


def _passed(segments: list[bytes | Refused]) -> bytes:
    return b"".join(s for s in segments if isinstance(s, bytes))


def test_admitted_frames_pass_unchanged_whatever_the_pieces() -> None:
    stream = frame(0x1, b"hello") + frame(0x9, b"ping") + frame(0x1, b"x" * 70_000) + frame(0x1, b"")
    for size in (1, 3, 7, 100, 65_536, len(stream)):
        account = Account(InflightBudget(1 << 20))
        gate = FrameGate(limit=100_000, admit=account.reserve)
        assert _passed(_feed_in_pieces(gate, stream, size)) == stream
        assert account.held == 5 + 70_000  # each text frame's bytes taken from the budget once


def test_a_message_over_the_limit_or_the_budget_is_dropped_with_its_id() -> None:
    big = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"pad": "x" * 5000}}).encode()
    small = frame(0x1, b'{"jsonrpc":"2.0","id":8,"method":"x"}')
    account = Account(InflightBudget(4000))
    gate = FrameGate(limit=100_000, admit=account.reserve)  # the budget cannot take the big one
    out = _feed_in_pieces(gate, frame(0x1, big) + small, 1000)
    refused = [s for s in out if isinstance(s, Refused)]
    assert len(refused) == 1 and refused[0].reason == "budget" and refused[0].size == len(big)
    assert refused[0].prefix == big[:4096]  # unmasked, to find the id
    assert _passed(out) == small  # what came after goes on, in order
    gate = FrameGate(limit=1000, admit=Account(InflightBudget(1 << 20)).reserve)
    (only,) = gate.feed(frame(0x1, big))
    assert isinstance(only, Refused) and only.reason == "size"


def test_binary_frames_and_fragmented_messages() -> None:
    account = Account(InflightBudget(1 << 20))
    gate = FrameGate(limit=100, admit=account.reserve)
    binary = frame(0x2, b"\x00" * 1000, fin=False) + frame(0x0, b"\x00" * 1000)
    assert gate.feed(binary) == []  # binary messages are ignored (the RFD), never buffered
    parts = frame(0x1, b"a" * 40, fin=False) + frame(0x9, b"") + frame(0x0, b"b" * 40)
    assert _passed(gate.feed(parts)) == parts  # a fragmented text message within the limit
    dropped = frame(0x1, b"c" * 150, fin=False) + frame(0x0, b"d" * 10)
    (refused,) = gate.feed(dropped)  # over the limit at its first frame: the whole message goes
    assert isinstance(refused, Refused) and refused.size == 160
    assert gate.failure is None
    gate.feed(frame(0x1, b"e" * 60, fin=False) + frame(0x0, b"f" * 60))  # goes over in a continuation
    assert gate.failure is not None and gate.failure[0] == 1009
