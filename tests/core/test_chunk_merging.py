"""Chunk merging (`coalesce_ms`): text and thought deltas that come within the window of the last chunk
sent are merged into one chunk, sent at the window's end; the first delta after a pause goes at once.

Windows are long (a second or more) wherever a test shows which deltas merge, and pauses are longer still,
so that no test depends on the machine's speed. Driven through a real ACP connection (in-process pipe).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AgentMessageChunk, AgentThoughtChunk
from acpkit_core.config import AgentOptions
from acpkit_core.runner.emitter import COALESCE_MS, MERGED_CHARS, TurnEmitter
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import StopReason
from acpkit_core.runner.updates import WireUpdate
from acpkit_core.server import AcpAgent, serve_streams
from acpkit_core.testing import AcpTestClient

WINDOW_MS = 1_000.0
PAUSE_S = 2.5


def chunks(updates: list[object]) -> list[tuple[str, str, str]]:
    """(kind, text, messageId) of every message or thought chunk, in order."""
    out: list[tuple[str, str, str]] = []
    for u in updates:
        if isinstance(u, AgentMessageChunk | AgentThoughtChunk):
            text = getattr(u.content, "text", "")
            out.append((u.session_update, text, u.message_id or ""))
    return out


async def run(runner: object, coalesce_ms: float = WINDOW_MS) -> list[tuple[str, str, str]]:
    agent = AcpAgent(runner, AgentOptions(store="memory", coalesce_ms=coalesce_ms))  # type: ignore[arg-type]
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
    assert r.stop_reason == "end_turn"
    return chunks(list(r.updates))


class Burst:
    """A first delta, nine at once, a pause longer than the window, then two more."""

    async def run_turn(self, turn: Turn) -> StopReason:
        for i in range(10):
            await turn.emit.text(f"{i} ")
        await asyncio.sleep(PAUSE_S)
        await turn.emit.text("late ")
        await turn.emit.text("end")
        return "end_turn"


async def test_first_delta_goes_at_once_the_rest_of_its_window_merge() -> None:
    got = await run(Burst())
    texts = [text for _, text, _ in got]
    # "0" opens a window; 1-9 wait for its end; after the pause "late" goes at once, "end" is sent
    # with the answer (the turn's end flushes whatever waits).
    assert texts == ["0 ", "1 2 3 4 5 6 7 8 9 ", "late ", "end"]
    assert len({mid for _, _, mid in got}) == 1  # one message


async def test_window_zero_sends_every_delta() -> None:
    got = await run(Burst(), coalesce_ms=0)
    assert [text for _, text, _ in got] == [f"{i} " for i in range(10)] + ["late ", "end"]


class TwoMessages:
    """Two agent messages back to back, then a thought: nothing merges across them."""

    async def run_turn(self, turn: Turn) -> StopReason:
        await turn.emit.text("a")
        await turn.emit.text("b")
        await turn.emit.text("c")
        turn.emit.new_message()
        await turn.emit.text("d")
        await turn.emit.text("e")
        await turn.emit.thought("t")
        await turn.emit.thought("u")
        await turn.emit.text("f")
        return "end_turn"


async def test_deltas_merge_only_within_one_message_and_one_kind() -> None:
    got = await run(TwoMessages())
    assert [(kind, text) for kind, text, _ in got] == [
        ("agent_message_chunk", "a"),
        ("agent_message_chunk", "bc"),
        ("agent_message_chunk", "de"),
        ("agent_thought_chunk", "tu"),
        ("agent_message_chunk", "f"),
    ]
    first, second = got[0][2], got[2][2]
    assert got[1][2] == first and first != second
    assert got[4][2] == second


class TextThenTool:
    async def run_turn(self, turn: Turn) -> StopReason:
        await turn.emit.text("looking")
        await turn.emit.text(" it up")
        await turn.emit.text("...")
        await turn.tool_calls.start("call-1", "lookup", {"q": "x"})
        await turn.tool_calls.finish("call-1", raw_output="found")
        return "end_turn"


async def test_a_tool_call_sends_what_waits_before_it() -> None:
    agent = AcpAgent(TextThenTool(), AgentOptions(store="memory", coalesce_ms=WINDOW_MS))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
    kinds = [k for k in r.kinds if k in ("agent_message_chunk", "tool_call")]
    assert kinds[:3] == ["agent_message_chunk", "agent_message_chunk", "tool_call"]
    assert [text for _, text, _ in chunks(list(r.updates))] == ["looking", " it up..."]


async def test_a_merged_turn_replays_the_same_message() -> None:
    agent = AcpAgent(Burst(), AgentOptions(store="memory", coalesce_ms=WINDOW_MS))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        live = chunks(list((await c.prompt("go", session_id=sid)).updates))
        _, replayed = await c.load_session(sid)
    # Replay joins a message's chunks in any case: the same text, in one message.
    assert [(kind, text) for kind, text, _ in chunks(list(replayed))] == [
        ("agent_message_chunk", "".join(text for _, text, _ in live))
    ]


async def test_a_failed_window_flush_fails_the_turn_at_its_next_flush() -> None:
    sent: list[WireUpdate] = []

    async def send(update: WireUpdate) -> None:
        if len(sent) == 1:
            raise ValueError("the sender broke")
        sent.append(update)

    emit = TurnEmitter(send, coalesce_ms=20)
    await emit.text("a")  # at once
    await emit.text("b")  # waits for the window's end, whose send fails in the background
    await asyncio.sleep(0.3)
    with pytest.raises(ValueError, match="the sender broke"):
        await emit.flush()
    assert [u["content"]["text"] for u in sent] == ["a"]  # pyright: ignore[reportArgumentType, reportIndexIssue, reportCallIssue]


class Long:
    """Deltas that add up past `MERGED_CHARS` inside one window."""

    async def run_turn(self, turn: Turn) -> StopReason:
        for _ in range(3 * MERGED_CHARS // 1000):
            await turn.emit.text("x" * 1000)
        return "end_turn"


async def test_merged_deltas_go_at_once_past_the_size_bound() -> None:
    got = await run(Long(), coalesce_ms=60_000.0)  # a minute: only the size bound sends them
    sizes = [len(text) for _, text, _ in got]
    assert sum(sizes) == 1000 * (3 * MERGED_CHARS // 1000)
    assert sizes[0] == 1000  # the first delta, at once
    assert all(size == 17_000 for size in sizes[1:-1])  # each merged chunk as soon as it passes the bound
    assert len(sizes) == 4


def test_merging_is_on_by_default() -> None:
    assert AgentOptions().coalesce_ms == COALESCE_MS > 0


class ReadAfterText:
    """Text, then a file read from the client (outside any tool call), then more text."""

    async def run_turn(self, turn: Turn) -> StopReason:
        await turn.emit.text("Reading ")
        await turn.emit.text("the file")
        text = await turn.host.read_text_file(os.path.join(turn.session.cwd, "notes.txt"))
        await turn.emit.text(f": {text}")
        return "end_turn"


async def test_a_file_request_goes_after_the_text_waiting_to_merge(tmp_path: Path) -> None:
    """A raw client over a socket pair sees every message in order: the text streamed before the
    request arrives before the request, though the window (a minute) would hold it."""
    agent = AcpAgent(ReadAfterText(), AgentOptions(store="memory", coalesce_ms=60_000.0))
    a, b = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=a)
    reader, writer = await asyncio.open_connection(sock=b)
    server = asyncio.ensure_future(serve_streams(agent, agent_reader, agent_writer))
    order: list[str] = []

    async def call(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        writer.write(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"
        )
        while True:
            message = json.loads(await asyncio.wait_for(reader.readline(), 30))
            if message.get("method") == "session/update":
                update = message["params"]["update"]
                if update["sessionUpdate"] == "agent_message_chunk":
                    order.append(update["content"]["text"])
            elif message.get("method") == "fs/read_text_file":
                order.append("<read>")
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": "three lines"}}
                writer.write(json.dumps(answer).encode() + b"\n")
            elif message.get("id") == request_id:
                return message["result"]

    try:
        capabilities = {"fs": {"readTextFile": True, "writeTextFile": False}}
        await call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
        sid = (await call(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))["sessionId"]
        result = await call(2, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]})
    finally:
        writer.close()
        await asyncio.wait_for(server, 10)
        agent_writer.close()
    assert result["stopReason"] == "end_turn"
    assert order == ["Reading ", "the file", "<read>", ": three lines"]
