"""Server-wide and per-principal limits of a real `acpkit serve` process, driven to their bounds.

- The budget of bytes in flight: six clients each send one big message at once; as many as fit
  run, the others are refused before being read (JSON-RPC error over WebSocket, `503` over HTTP),
  and succeed when sent again later.
- The worst-case memory of a replica (the formula in docs/remote.md, "Operating it"): every
  connection taken, most never reading, the budget of bytes in flight spent: peak RSS stays under it.
- Per-principal quotas: connections (`429`), open sessions and running turns (-32600); another
  principal is not affected.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp import RequestError
from acpkit_core.remote import Limits, RemoteError
from acpkit_core.testing import AcpTestClient
from hostile import raise_own_open_files, rss_mib
from replicas import replica
from test_frames import RawFrames

MiB = 1 << 20
KiB = 1 << 10
FLOOD_TARGET = Path(__file__).parent / "agents" / "flood_target.py"
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef"


def _big_prompt(request_id: int, sid: str, size: int, script: str = "sleep 3") -> dict[str, Any]:
    """A prompt whose message is `size` bytes (padding in `_meta`), `id` and `method` first."""
    params = {"sessionId": sid, "prompt": [{"type": "text", "text": script}], "_meta": {"pad": "x" * size}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}


async def _session(ws: RawFrames, cwd: Path) -> str:
    await ws.call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    return (await ws.call(1, "session/new", {"cwd": str(cwd), "mcpServers": []}))[-1]["result"]["sessionId"]


async def _answer(ws: RawFrames, request_id: int) -> dict[str, Any]:
    while True:
        message = await ws.message()
        if message.get("id") == request_id and "method" not in message:
            return message


async def _close(ws: RawFrames) -> None:
    ws.writer.close()
    with contextlib.suppress(OSError):
        await ws.writer.wait_closed()


async def test_messages_past_the_budget_are_refused_unread_then_accepted(tmp_path: Path) -> None:
    args = ["--max-message-bytes", "8MiB", "--max-inflight-bytes", "20MiB"]
    async with replica(str(tmp_path / "s.sqlite3"), args=args) as served:
        clients = [await RawFrames.connect(served.url) for _ in range(6)]
        sids = [await _session(ws, tmp_path) for ws in clients]
        before = rss_mib(served.process.pid)
        for ws, sid in zip(clients, sids, strict=True):
            ws.send(_big_prompt(2, sid, 7 * MiB))  # 6 x 7 MiB at once: two fit in 20 MiB
        await asyncio.sleep(1.0)
        grown = rss_mib(served.process.pid, "VmHWM") - before

        # Over HTTP, meanwhile: the same budget, refused with 503 before the body is read.
        async with httpx.AsyncClient(timeout=30) as http:
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
            conn = {"Acp-Connection-Id": (await http.post(served.http_url, json=init)).headers["Acp-Connection-Id"]}
            big = json.dumps(_big_prompt(3, "s", 7 * MiB))
            headers = {**conn, "Acp-Session-Id": "s", "Content-Type": "application/json"}
            posted = await http.post(served.http_url, content=big, headers=headers)
            assert posted.status_code == 503 and posted.headers["Retry-After"] == "1"
            assert "max_inflight_bytes" in posted.json()["error"]
            await http.delete(served.http_url, headers=conn)

        answers = [await asyncio.wait_for(_answer(ws, 2), 30) for ws in clients]
        done = [a for a in answers if "result" in a]
        refused = [a for a in answers if "error" in a]
        assert len(done) == 2 and all(a["result"]["stopReason"] == "end_turn" for a in done)
        assert len(refused) == 4
        for answer in refused:
            error = answer["error"]
            assert error["code"] == -32600
            assert error["message"].startswith("the server is busy: a message of 7.0 MiB does not fit")
            assert "max_inflight_bytes" in error["message"] and "send it again later" in error["message"]
            assert error["data"]["limit"] == "max_inflight_bytes" and error["data"]["max"] == 20 * MiB
        assert grown < 4 * 20  # the formula's factor: at most 4 bytes of memory per byte in flight

        # The turns are over: the budget is free again, and a refused client's retry goes through.
        index = answers.index(refused[0])
        clients[index].send(_big_prompt(4, sids[index], 7 * MiB, "say retried"))
        retried = await asyncio.wait_for(_answer(clients[index], 4), 30)
        assert retried["result"]["stopReason"] == "end_turn"
        for ws in clients:
            await _close(ws)


async def _never_reading(url: str, cwd: Path) -> RawFrames:
    ws = await RawFrames.connect(url, receive_buffer=4096)
    sid = await _session(ws, cwd)
    ws.send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
             "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "flood 1000000 1"}]}})  # fmt: skip
    return ws


async def test_peak_memory_stays_under_the_documented_formula(tmp_path: Path) -> None:
    raise_own_open_files(1000)
    connections, outbound, inflight = 200, 128 * KiB, 32 * MiB
    args = ["--max-connections", str(connections), "--max-sessions", "1", "--outbound-buffer", "128KiB",
            "--max-message-bytes", "8MiB", "--max-inflight-bytes", "32MiB"]  # fmt: skip
    async with replica(str(tmp_path / "s.sqlite3"), args=args, target=FLOOD_TARGET) as served:
        pid = served.process.pid
        await asyncio.sleep(0.5)
        idle = rss_mib(pid)
        limits = Limits(
            max_message_bytes=8 * MiB,
            max_connections=connections,
            max_sessions_per_connection=1,
            outbound_buffer_bytes=outbound,
            max_inflight_bytes=inflight,
        )
        bound = limits.memory_bound(int(idle * MiB), largest_message=200) / MiB  # the documented formula
        # 195 clients that never read, each asking for a million small chunks (what a turn keeps costs
        # most per byte sent for small chunks): their buffers fill, their turns wait.
        flooders = [await _never_reading(served.url, tmp_path) for _ in range(195)]
        # The budget of bytes in flight spent: four 7.9 MiB prompts held by sleeping turns, a fifth refused.
        holders = [await RawFrames.connect(served.url) for _ in range(5)]
        sids = [await _session(ws, tmp_path) for ws in holders]
        for ws, sid in zip(holders, sids, strict=True):
            ws.send(_big_prompt(2, sid, int(7.9 * MiB)))
        await asyncio.sleep(2.0)
        with pytest.raises(RemoteError, match=r"HTTP 503: .*max_connections"):  # every connection is taken
            async with AcpTestClient.connect_url(served.url):
                pass
        peak = rss_mib(pid, "VmHWM")
        print(f"idle {idle:.0f} MiB, peak {peak:.0f} MiB, formula {bound:.0f} MiB")
        answers = [await asyncio.wait_for(_answer(ws, 2), 30) for ws in holders]
        assert sum("error" in a for a in answers) == 1  # the budget was full
        assert peak <= bound, f"peak RSS {peak:.0f} MiB over the formula's {bound:.0f} MiB (idle {idle:.0f} MiB)"
        assert peak - idle > 0.5 * (bound - idle), f"the load did not come near the bound ({peak:.0f}/{bound:.0f} MiB)"
        for ws in flooders + holders:
            ws.writer.transport.abort()  # pyright: ignore[reportAttributeAccessIssue]


async def test_one_principal_cannot_take_every_slot(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice:{ALICE}\nbob:{BOB}\n")
    args = ["--token-file", str(tokens), "--max-connections-per-principal", "2",
            "--max-sessions-per-principal", "3", "--max-turns-per-principal", "1"]  # fmt: skip
    async with (
        replica(str(tmp_path / "s.sqlite3"), args=args) as served,
        AcpTestClient.connect_url(served.url, token=ALICE) as one,
        AcpTestClient.connect_url(served.http_url, token=ALICE) as two,
    ):
        await one.initialize()
        await two.initialize()
        # A third connection: 429, over both profiles, naming the quota.
        with pytest.raises(RemoteError, match=r"HTTP 429: .*max_connections_per_principal=2"):
            async with AcpTestClient.connect_url(served.url, token=ALICE):
                pass
        async with httpx.AsyncClient(timeout=10, headers={"Authorization": f"Bearer {ALICE}"}) as http:
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
            answer = await http.post(served.http_url, json=init)
        assert answer.status_code == 429 and "principal 'alice'" in answer.json()["error"]

        # Sessions across her connections: the fourth is refused.
        first = await one.new_session()
        await one.new_session()
        third = await two.new_session()
        with pytest.raises(RequestError) as too_many:
            await two.new_session()
        assert too_many.value.code == -32600
        assert "max_sessions_per_principal=3" in str(too_many.value.data)

        # Turns: one at a time across her connections.
        sleeping = asyncio.ensure_future(one.prompt("say started\nsleep 1.5\nsay done", session_id=first))
        while "started" not in str(one.updates.get(first, [])):
            await asyncio.sleep(0.02)
        with pytest.raises(RequestError) as busy:
            await two.prompt("say too", session_id=third)
        assert busy.value.code == -32600 and "max_turns_per_principal=1" in str(busy.value.data)

        # Bob is not affected by any of it.
        async with AcpTestClient.connect_url(served.url, token=BOB) as bob:
            await bob.initialize()
            sid = await bob.new_session()
            assert (await bob.prompt("say bob here", session_id=sid)).text == "bob here"

        assert (await sleeping).text == "starteddone"
        assert (await two.prompt("say after", session_id=third)).text == "after"  # room again
        await one.close_session(first)
        await two.new_session()  # room again
