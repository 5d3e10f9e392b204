"""Write coalescing over the remote transports: the same messages, in order, nothing held past an answer or a question.

`acpkit serve` in this process with a minute's write window, so that only the turn's answer, a
request to the client or the size limit can bring the waiting updates out: a WebSocket client on a
bare socket (`RawFrames`) and the SDK's client over Streamable HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from acpkit_core.config import AgentOptions
from acpkit_core.remote import RemoteServer, ServeOptions
from acpkit_core.remote.connection import HELD_MESSAGES
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient, ScriptedRunner
from test_frames import RawFrames

pytestmark = pytest.mark.asyncio(loop_scope="module")

MINUTE_MS = 60_000.0


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncGenerator[RemoteServer]:
    store = str(tmp_path_factory.mktemp("window") / "sessions.sqlite3")
    # Every word its own chunk (no merging): each message must wait for the window.
    options = AgentOptions(name="window", store=store, write_window_ms=MINUTE_MS, coalesce_ms=0)
    agent = AcpAgent(ScriptedRunner(), options)
    async with RemoteServer(agent, ServeOptions(port=0)) as running:
        yield running


async def _close(ws: RawFrames) -> None:
    ws.writer.close()
    with contextlib.suppress(OSError):
        await ws.writer.wait_closed()


def _kind(message: dict[str, Any]) -> str:
    if message.get("method") == "session/update":
        update = message["params"]["update"]
        return f"{update['sessionUpdate']}:{update.get('content', {}).get('text', update.get('status', ''))}"
    return message["method"] if "method" in message else f"answer {message['id']}"


async def test_websocket_updates_come_in_order_before_the_question_and_the_answer(
    server: RemoteServer, tmp_path: Path
) -> None:
    words = [f"w{i}" for i in range(300)]
    ws = await RawFrames.connect(server.url)
    await ws.call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    created = await ws.call(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
    sid = created[-1]["result"]["sessionId"]
    script = "say " + " ".join(words) + "\nask delete_file\nsay done"
    ws.send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [
        {"type": "text", "text": script}]}})  # fmt: skip
    received: list[dict[str, Any]] = []
    while not received or received[-1].get("id") != 2 or "method" in received[-1]:
        message = await asyncio.wait_for(ws.message(), 30)
        received.append(message)
        if message.get("method") == "session/request_permission":
            allow = next(o["optionId"] for o in message["params"]["options"] if o["kind"] == "allow_once")
            ws.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": {"outcome": "selected",
                                                                                    "optionId": allow}}})  # fmt: skip
    await _close(ws)
    kinds = [k for k in map(_kind, received) if not k.startswith(("session_info_update", "available_commands_update"))]
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


async def test_more_updates_than_the_held_limit_go_out_without_waiting_for_the_window(
    server: RemoteServer, tmp_path: Path
) -> None:
    count = HELD_MESSAGES + 10
    ws = await RawFrames.connect(server.url)
    await ws.call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    created = await ws.call(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
    sid = created[-1]["result"]["sessionId"]
    script = "say " + " ".join(f"w{i}" for i in range(count)) + "\nsleep 30"
    ws.send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [
        {"type": "text", "text": script}]}})  # fmt: skip
    chunks: list[str] = []
    # The turn sleeps: only the limit can have sent these (the session's title and its commands may
    # have been held with them).
    while len(chunks) < HELD_MESSAGES - 2:
        message = await asyncio.wait_for(ws.message(), 10)
        if _kind(message).startswith("agent_message_chunk:"):
            chunks.append(message["params"]["update"]["content"]["text"])
    assert chunks == [f"w{i} " for i in range(len(chunks))]
    ws.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
    while (message := await asyncio.wait_for(ws.message(), 10)).get("id") != 2:
        if _kind(message).startswith("agent_message_chunk:"):
            chunks.append(message["params"]["update"]["content"]["text"])
    assert message["result"]["stopReason"] == "cancelled"
    assert chunks == [f"w{i} " for i in range(count - 1)] + [f"w{count - 1}"]
    await _close(ws)


async def test_streamable_http_turn_streams_every_update_before_its_answer(server: RemoteServer) -> None:
    words = [f"w{i}" for i in range(200)]
    async with AcpTestClient.connect_url(server.url.replace("ws://", "http://")) as client:
        await client.initialize()
        sid = await client.new_session()
        result = await client.prompt("say " + " ".join(words) + "\nask delete_file", session_id=sid)
    chunks = [u.content.text for u in result.updates if u.session_update == "agent_message_chunk"]
    assert chunks == [w + " " for w in words[:-1]] + [words[-1]]
    assert [u.status for u in result.updates if u.session_update == "tool_call_update"] == ["in_progress", "completed"]
    assert len(result.permission_requests) == 1
