"""Write coalescing on stdio: fewer writes, the same messages, in the same order, nothing held back too long.

The sender ([`DirectSender`][acpkit_core.server.transport.DirectSender]) is driven over real pipes and
socket pairs; the server over a socket pair with a raw line client; agent processes over real stdio
(their write system calls read from `/proc/PID/io`). Windows are made long (a minute) wherever a test
shows what goes out without waiting for the window, so that no test depends on the machine's speed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import sys
import tempfile
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from acpkit_core.config import AgentOptions
from acpkit_core.server import AcpAgent, serve_streams
from acpkit_core.server.transport import FLUSH_BYTES, DirectSender, encode_message
from acpkit_core.telemetry import ACCESS_LOGGER, Telemetry
from acpkit_core.testing import ScriptedRunner

MINUTE_MS = 60_000.0


def _note(i: int, pad: str = "") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"n": i, "pad": pad}}


@contextlib.asynccontextmanager
async def pipe_sender(window_ms: float) -> AsyncGenerator[tuple[DirectSender, int]]:
    """A sender writing to a real pipe; the pipe's read end (non-blocking) for the test."""
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    pipe = os.fdopen(write_fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    try:
        yield DirectSender(writer, window_ms=window_ms), read_fd
    finally:
        transport.close()
        await asyncio.sleep(0)
        os.close(read_fd)


def _available(fd: int) -> bytes:
    """Everything the pipe holds now (without waiting)."""
    out = b""
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, 1 << 20):
            out += chunk
    return out


async def test_notifications_inside_the_window_wait_and_a_response_takes_them_all_in_order() -> None:
    async with pipe_sender(MINUTE_MS) as (sender, out):
        for i in range(100):
            await sender.send(_note(i))
        # The first went at once (nothing was being written); the other 99 wait for the window.
        assert _available(out) == encode_message(_note(0))
        answer = {"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "end_turn"}}
        await sender.send(answer)
        assert _available(out) == b"".join(encode_message(_note(i)) for i in range(1, 100)) + encode_message(answer)


async def test_a_request_to_the_client_goes_after_everything_sent_before_it() -> None:
    async with pipe_sender(MINUTE_MS) as (sender, out):
        await sender.send(_note(0))
        await sender.send(_note(1))
        await sender.send(_note(2))
        request = {"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": {}}
        await sender.send(request)
        lines = _available(out).splitlines()
        assert [json.loads(line) for line in lines] == [_note(0), _note(1), _note(2), request]


async def test_past_the_size_limit_what_waits_is_written_without_waiting_for_the_window() -> None:
    async with pipe_sender(MINUTE_MS) as (sender, out):
        pad = "x" * 1000
        sent = [_note(0, pad)]  # written at once; then enough to pass the limit with the last one
        waiting = 0
        while waiting < FLUSH_BYTES:
            sent.append(_note(len(sent), pad))
            waiting += len(encode_message(sent[-1]))
        count = len(sent)
        received = b""

        async def read_all() -> None:
            nonlocal received
            while received.count(b"\n") < count:
                received += _available(out)
                await asyncio.sleep(0.001)

        reading = asyncio.ensure_future(read_all())
        for message in sent:
            await sender.send(message)
        await asyncio.wait_for(reading, 10)  # a minute's window: only the size limit can have written them
        assert [json.loads(line) for line in received.splitlines()] == sent


async def test_the_window_ends_with_one_write_of_what_came_during_it() -> None:
    async with pipe_sender(50.0) as (sender, out):
        for i in range(20):
            await sender.send(_note(i))
        assert _available(out) == encode_message(_note(0))
        received = b""
        while received.count(b"\n") < 19:  # the window's end writes the rest (no other message comes)
            await asyncio.sleep(0.01)
            received += _available(out)
        assert received == b"".join(encode_message(_note(i)) for i in range(1, 20))


async def test_closing_writes_what_waits() -> None:
    async with pipe_sender(MINUTE_MS) as (sender, out):
        await sender.send(_note(0))
        await sender.send(_note(1))
        assert _available(out) == encode_message(_note(0))
        await sender.close()
        assert _available(out) == encode_message(_note(1))
        with pytest.raises(ConnectionError):
            await sender.send(_note(2))


async def test_a_zero_window_writes_each_message_as_it_comes() -> None:
    async with pipe_sender(0.0) as (sender, out):
        for i in range(3):
            await sender.send(_note(i))
            assert _available(out) == encode_message(_note(i))


# --- the server ---------------------------------------------------------------------------------------


class RawClient:
    """The client end of a socket pair the server is served on: raw lines, counted."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.received: list[dict[str, Any]] = []
        self.bytes = 0

    async def call(self, request_id: int, method: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Send a request; everything received up to its answer, in order (the agent's requests answered)."""
        self.writer.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode())
        self.writer.write(b"\n")
        got: list[dict[str, Any]] = []
        while True:
            line = await asyncio.wait_for(self.reader.readline(), 30)
            assert line, "the agent closed the connection"
            self.bytes += len(line)
            message = json.loads(line)
            self.received.append(message)
            got.append(message)
            if message.get("id") == request_id and "method" not in message:
                return got
            if "method" in message and "id" in message:  # a permission question: allow
                options = message["params"]["options"]
                allow = next(o["optionId"] for o in options if o["kind"] == "allow_once")
                result = {"outcome": {"outcome": "selected", "optionId": allow}}
                self.writer.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())
                self.writer.write(b"\n")


@contextlib.asynccontextmanager
async def served(agent: AcpAgent) -> AsyncGenerator[RawClient]:
    a, b = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=a, limit=1 << 24)
    reader, writer = await asyncio.open_connection(sock=b, limit=1 << 24)
    server = asyncio.ensure_future(serve_streams(agent, agent_reader, agent_writer))
    client = RawClient(reader, writer)
    try:
        await client.call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        yield client
    finally:
        writer.close()
        await asyncio.wait_for(server, 10)
        agent_writer.close()


def _kinds(messages: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for m in messages:
        if m.get("method") == "session/update":
            update = m["params"]["update"]
            out.append(f"{update['sessionUpdate']}:{update.get('content', {}).get('text', update.get('status', ''))}")
        elif "method" in m:
            out.append(m["method"])
        else:
            out.append(f"answer {m['id']}")
    return out


async def test_a_turn_streams_every_update_in_order_before_its_answer_and_its_question() -> None:
    """A minute's window: the answer and the permission question alone bring the updates out, in order."""
    words = [f"w{i}" for i in range(300)]
    # Every word its own chunk (no merging), so that every message must wait for the window.
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory", write_window_ms=MINUTE_MS, coalesce_ms=0))
    async with served(agent) as client:
        created = await client.call(1, "session/new", {"cwd": tempfile.gettempdir(), "mcpServers": []})
        sid = created[-1]["result"]["sessionId"]
        script = "say " + " ".join(words) + "\nask delete_file\nsay done"
        got = await client.call(2, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": script}]})
    kinds = [k for k in _kinds(got) if not k.startswith(("session_info_update", "available_commands_update"))]
    said = [f"agent_message_chunk:{w} " for w in words[:-1]] + [f"agent_message_chunk:{words[-1]}"]
    assert kinds == [
        *said,
        "tool_call:pending",
        "session/request_permission",
        "tool_call_update:in_progress",
        "tool_call_update:completed",
        "agent_message_chunk:done",
        "answer 2",
    ]


async def test_telemetry_counts_every_message_of_a_coalesced_write(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    options = AgentOptions(store="memory", write_window_ms=MINUTE_MS, telemetry=Telemetry(traces=False, metrics=False))
    async with served(AcpAgent(ScriptedRunner(), options)) as client:
        created = await client.call(1, "session/new", {"cwd": tempfile.gettempdir(), "mcpServers": []})
        sid = created[-1]["result"]["sessionId"]
        text = "say " + " ".join(f"w{i}" for i in range(200))
        await client.call(2, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]})
        await asyncio.sleep(0.05)  # the updates sent after `session/new`'s answer
        received, size = list(client.received), client.bytes
    (connection,) = [r.__dict__["acpkit"] for r in caplog.records if r.__dict__["acpkit"]["event"] == "connection"]
    assert connection["messages"] == len(received)
    assert connection["updates"] == sum(m.get("method") == "session/update" for m in received)
    assert connection["bytes"] == size


# --- agent processes over real stdio ------------------------------------------------------------------

STREAMING_AGENT = """
import sys
from pydantic_ai import Agent
from pydantic_ai.models.function import FunctionModel
from pydantic_acp import run_acp

async def stream(messages, info):
    for i in range(int(messages[-1].parts[-1].content)):
        yield f"t{i} "

# "0": one write per message and every delta its own chunk, as before the write window and merging.
window = {} if sys.argv[1] == "default" else {"write_window_ms": float(sys.argv[1]), "coalesce_ms": 0}
run_acp(Agent(FunctionModel(stream_function=stream, model_name="w")), store="memory", **window)
"""


def _writes(pid: int) -> int:
    line = next(x for x in Path(f"/proc/{pid}/io").read_text().splitlines() if x.startswith("syscw:"))
    return int(line.split()[1])


async def _prompt_writes(window: str, deltas: int) -> tuple[int, str]:
    """Write system calls the agent process made for one prompt of `deltas` streamed deltas; the text."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", STREAMING_AGENT, window,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 24,
    )  # fmt: skip
    client = RawClient(process.stdout, process.stdin)  # type: ignore[arg-type]
    try:
        await client.call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        created = await client.call(1, "session/new", {"cwd": tempfile.gettempdir(), "mcpServers": []})
        sid = created[-1]["result"]["sessionId"]
        await asyncio.sleep(0.2)
        before = _writes(process.pid)
        got = await client.call(
            2, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": str(deltas)}]}
        )
        writes = _writes(process.pid) - before
    finally:
        assert process.stdin is not None
        process.stdin.close()
        await process.wait()
    text = "".join(
        m["params"]["update"]["content"]["text"]
        for m in got
        if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    return writes, text


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts writes in /proc/PID/io (Linux)")
async def test_by_default_a_streamed_answer_takes_far_fewer_writes_than_deltas() -> None:
    deltas = 2000
    expected = "".join(f"t{i} " for i in range(deltas))
    default, text = await _prompt_writes("default", deltas)
    assert text == expected
    one_each, text = await _prompt_writes("0", deltas)
    assert text == expected
    assert one_each >= deltas  # a write per message without the window
    assert default <= deltas / 4, f"{default} writes for {deltas} deltas"
