"""The middleware and callback handler in a hand-built ACP server, over real stdio."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.timeout(60), pytest.mark.e2e]

SERVER = Path(__file__).parent / "lc_handbuilt_server.py"


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
async def test_handbuilt_server_streams_asks_and_reports_tools(answer: str) -> None:
    async with AcpTestClient.spawn(sys.executable, str(SERVER), permission_answers=[answer]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("clean up", session_id=sid)
    assert r.stop_reason == "end_turn"
    assert r.thoughts == "Deleting."
    assert r.text == "On it.Done."
    (request,) = r.permission_requests
    assert request.tool_call.tool_call_id == "d1"
    call = r.tool_calls["d1"]
    assert call.kind == "delete"
    if answer == "allow_once":
        assert call.statuses[-2:] == ["in_progress", "completed"]
    else:
        assert call.status == "failed" and "in_progress" not in call.statuses


GATE_SERVER = Path(__file__).parent / "lc_handbuilt_gate_server.py"


@pytest.mark.parametrize("answer", ["allow_always", "reject_always"])
async def test_handbuilt_gate_asks_by_policy_and_remembers_always(answer: str, tmp_path: Path) -> None:
    """A plain `create_agent` graph, no ACP middleware: `bind_connection(permission_policy=...)` gates it."""
    runs = tmp_path / "runs"
    async with AcpTestClient.spawn(
        sys.executable, str(GATE_SERVER), env={"RUNS_FILE": str(runs)}, permission_answers=[answer]
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("delete", session_id=sid)
        second = await c.prompt("delete again", session_id=sid)
    assert [p.tool_call.tool_call_id for p in first.permission_requests] == ["d1"]
    assert second.permission_requests == []
    ran = runs.read_text().splitlines() if runs.exists() else []
    if answer == "allow_always":
        assert ran == ["old.txt", "old.txt"]
        assert first.tool_calls["d1"].statuses == ["pending", "in_progress", "completed"]
        assert second.tool_calls["d2"].statuses == ["pending", "in_progress", "completed"]
    else:
        assert ran == []
        assert first.tool_calls["d1"].statuses == ["pending", "failed"]
        assert second.tool_calls["d2"].statuses == ["pending", "failed"]


async def test_handbuilt_gate_cancel_during_the_question(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    never = asyncio.Event()

    async def wait_forever(_: Any) -> str:
        await never.wait()
        return "allow_once"

    async with AcpTestClient.spawn(
        sys.executable, str(GATE_SERVER), env={"RUNS_FILE": str(runs)}, permission_answers=wait_forever
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.create_task(c.prompt("delete", session_id=sid))
        while not c.permission_requests:
            await asyncio.sleep(0.01)
        await c.cancel(sid)
        r = await task
    assert r.stop_reason == "cancelled"
    assert not runs.exists()
    assert r.tool_calls["d1"].statuses == ["pending", "failed"]


async def test_handbuilt_parallel_calls_one_raises_none_left_open(tmp_path: Path) -> None:
    """Two parallel tool calls, one raises: leaving `async with bind_connection(...)` closes the other."""
    async with AcpTestClient.spawn(sys.executable, str(GATE_SERVER), env={"RUNS_FILE": str(tmp_path / "r")}) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("parallel", session_id=sid)
        await asyncio.sleep(0.5)  # the surviving call's own end, if it came late, must not reopen anything
        late = c.updates[sid][len(r.updates) :]
    assert r.stop_reason == "refusal"
    calls = r.tool_calls
    assert set(calls) == {"p1", "p2"}
    assert calls["p2"].statuses == ["pending", "in_progress", "failed"]
    assert calls["p1"].statuses[-1] in ("completed", "failed")
    assert calls["p1"].statuses.count("completed") + calls["p1"].statuses.count("failed") == 1
    assert [u for u in late if getattr(u, "tool_call_id", None)] == []


async def test_handbuilt_cancel_mid_tool_answers_cancelled_at_once(tmp_path: Path) -> None:
    """The hand-built server cancels its run; leaving `bind_connection` closes the running call."""
    async with AcpTestClient.spawn(sys.executable, str(GATE_SERVER), env={"RUNS_FILE": str(tmp_path / "r")}) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.create_task(c.prompt("slow", session_id=sid))
        while not any(getattr(u, "status", None) == "in_progress" for u in c.updates.get(sid, [])):
            await asyncio.sleep(0.01)
        started = time.monotonic()
        await c.cancel(sid)
        r = await asyncio.wait_for(task, 5)
        elapsed = time.monotonic() - started
    assert r.stop_reason == "cancelled"
    assert r.tool_calls["s1"].statuses == ["pending", "in_progress", "failed"]
    assert elapsed < 1.0
