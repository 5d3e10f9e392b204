"""The JSON-RPC line rules and the bounded line reader, without a process (the e2e tests run them live)."""

# pyright: basic
# (these tests handle arbitrary JSON from the wire: Any, narrowed by isinstance)

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from acpkit_core.errors import UserError
from acpkit_core.limits import MAX_MESSAGE_BYTES, MAX_PROMPT_BYTES, format_size, parse_size
from acpkit_core.server.jsonrpc import Inbound, oversized, read_line
from acpkit_core.server.transport import LineReader, Oversized
from hypothesis import given, settings
from hypothesis import strategies as st

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
members = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | json_values,
        "id": st.integers() | st.text(max_size=5) | json_values,
        "method": st.sampled_from(["session/cancel", "$/cancel_request", "session/list", "_x", "nope"]) | json_values,
        "params": st.fixed_dictionaries(
            {}, optional={"sessionId": st.text(max_size=5) | json_values, "requestId": st.integers() | json_values}
        )
        | json_values,
        "result": json_values,
        "error": st.fixed_dictionaries({"code": st.integers(), "message": st.text(max_size=5)}) | json_values,
    },
)


def check(inbound: Any) -> None:
    """Replies are JSON-RPC error/result responses; a message handed on is one the SDK can route."""
    reply: Any
    for reply in inbound.replies:
        items: list[Any] = reply if isinstance(reply, list) else [reply]
        for item in items:
            assert item["jsonrpc"] == "2.0" and "id" in item
            assert ("error" in item) != ("result" in item)
            if "error" in item:
                assert type(item["error"]["code"]) is int and isinstance(item["error"]["message"], str)
        json.dumps(reply)
    message: Any = inbound.message
    if message is not None:
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0"
        if "method" in message:
            assert isinstance(message["method"], str)
            assert message.get("params") is None or isinstance(message["params"], dict | list)
        else:
            assert "id" in message and ("result" in message or isinstance(message["error"], dict))
            if "result" not in message:
                assert type(message["error"]["code"]) is int and isinstance(message["error"]["message"], str)
        hash(message.get("id"))  # the SDK keys its pending requests by id


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_get_a_valid_answer_or_a_routable_message(line: bytes) -> None:
    check(read_line(line))


@settings(max_examples=300, deadline=None)
@given(members | json_values)
def test_any_json_gets_a_valid_answer_or_a_routable_message(value: Any) -> None:
    inbound = read_line(json.dumps(value).encode())
    check(inbound)
    if not isinstance(value, dict | list):
        reply: Any = inbound.replies[0]
        assert inbound.message is None and reply["error"]["code"] == -32600


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.sampled_from([b"", b'{"jsonrpc":"2.0","id":7,', b'{"id":"a","result":']))
def test_any_prefix_of_an_oversized_line_gets_a_valid_answer(tail: bytes, head: bytes) -> None:
    check(oversized(head + tail, "too big", {"size": 1}))


def test_an_oversized_request_is_answered_with_its_id_and_a_response_fails_the_pending_request() -> None:
    request = oversized(
        b'{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"prompt":[{"type":"te', "big", None
    )
    assert request.message is None and request.replies == (
        {"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "big"}},
    )
    late_id = oversized(b'{"jsonrpc":"2.0","method":"session/prompt","params":{"x', "big", {})
    assert late_id.replies[0]["id"] is None  # type: ignore[index]
    response = oversized(b'{"jsonrpc":"2.0","id":3,"result":{"content":"xxxxxxxx', "big", {"size": 9})
    assert response.replies == ()
    assert response.message == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32600, "message": "big", "data": {"size": 9}},
    }


async def lines_of(data: bytes, limit: int, buffer: int = 64) -> list[bytes | Oversized]:
    reader = asyncio.StreamReader(limit=buffer)
    reader.feed_data(data)
    reader.feed_eof()
    lines = LineReader(reader, limit)
    out: list[bytes | Oversized] = []
    while (line := await lines.readline()) is not None:
        out.append(line)
    return out


async def test_line_reader_splits_lines_keeps_the_limit_and_skips_longer_ones() -> None:
    data = b"short\r\n" + b"x" * 100 + b"\n" + b"y" * 101 + b"\nafter\nlast-without-newline"
    got = await lines_of(data, limit=100, buffer=16)
    assert got == [
        b"short",
        b"x" * 100,
        Oversized(prefix=b"y" * 101, size=101),
        b"after",
        b"last-without-newline",
    ]


async def test_line_reader_keeps_only_the_start_of_a_huge_line() -> None:
    got = await lines_of(b"z" * 1_000_000 + b"\nok\n", limit=1000, buffer=4096)
    assert len(got) == 2 and got[1] == b"ok"
    big = got[0]
    assert isinstance(big, Oversized) and big.size == 1_000_000 and big.prefix == b"z" * 4096


async def test_line_reader_reports_an_unterminated_huge_line_at_the_end_of_input() -> None:
    got = await lines_of(b"a\n" + b"b" * 5000, limit=100)
    assert got == [b"a", Oversized(prefix=b"b" * 4096, size=5000)]


def test_cancel_request_is_handed_on_and_a_malformed_one_is_dropped_or_refused() -> None:
    notification = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 4}}
    assert read_line(json.dumps(notification).encode()) == Inbound(message=notification)
    as_request = read_line(json.dumps({**notification, "id": 9}).encode())
    assert as_request.message == notification  # still cancels, and the "request" is answered null
    assert as_request.replies == ({"jsonrpc": "2.0", "id": 9, "result": None},)
    no_id = read_line(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{}}')
    assert no_id.message is None and no_id.replies == ()
    assert no_id.note == "ignored a $/cancel_request notification: requestId: Field required"
    refused = read_line(b'{"jsonrpc":"2.0","id":1,"method":"$/cancel_request","params":{"requestId":[1]}}')
    (reply,) = refused.replies
    assert reply["error"]["code"] == -32602  # type: ignore[index]
    assert str(reply["error"]["message"]).startswith("Invalid params for $/cancel_request: requestId")  # type: ignore[index]


def test_sizes_parse_and_print() -> None:
    assert parse_size("1048576") == 1 << 20
    assert parse_size("512KiB") == 512 << 10
    assert parse_size(" 64mib ") == 64 << 20
    assert parse_size("2G") == 2 << 30
    for bad in ("", "0", "-1", "1.5MiB", "10 parsecs", "MiB"):
        with pytest.raises(ValueError, match="not a size in bytes"):
            parse_size(bad)
    assert format_size(512) == "512 bytes"
    assert format_size(32 << 20) == "32 MiB"
    assert format_size(104_857_714) == "100.0 MiB"


def test_a_limit_comes_from_the_option_then_the_environment_then_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACPKIT_MAX_MESSAGE_BYTES", raising=False)
    assert MAX_MESSAGE_BYTES.value(None) == 32 << 20
    assert MAX_PROMPT_BYTES.value(None) == 16 << 20
    monkeypatch.setenv("ACPKIT_MAX_MESSAGE_BYTES", "8MiB")
    assert MAX_MESSAGE_BYTES.value(None) == 8 << 20
    assert MAX_MESSAGE_BYTES.value(1000) == 1000
    monkeypatch.setenv("ACPKIT_MAX_MESSAGE_BYTES", "huge")
    with pytest.raises(UserError, match="ACPKIT_MAX_MESSAGE_BYTES: not a size in bytes: 'huge'"):
        MAX_MESSAGE_BYTES.value(None)
    with pytest.raises(UserError, match=r"AgentOptions\.max_message_bytes must be a positive number of bytes, got 0"):
        MAX_MESSAGE_BYTES.value(0)


def test_non_json_numbers_are_a_parse_error() -> None:
    """`Infinity` and `NaN` are what Python's json writes for inf and nan, but they are not JSON."""
    for line in (b"Infinity", b"-Infinity", b"NaN", b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":NaN}}'):
        inbound = read_line(line)
        check(inbound)
        assert inbound.message is None and inbound.replies[0]["error"]["code"] == -32700  # type: ignore[index]
