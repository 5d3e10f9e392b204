"""The offline example graph, over real stdio: plan, read through the client, ask, write."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.timeout(60), pytest.mark.e2e]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_agent.py"


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
async def test_example_plans_reads_asks_and_writes(answer: str) -> None:
    async with AcpTestClient.spawn(sys.executable, str(EXAMPLE), permission_answers=[answer]) as c:
        init = await c.initialize()
        sid = await c.new_session()
        (c.root / "README.md").write_text("# Project\n")
        r = await c.prompt("Write notes about the README.", session_id=sid)
        notes = c.root / "acpkit-notes.md"
        written = notes.read_text() if notes.exists() else None
    assert init.agent_info is not None and init.agent_info.name == "langgraph-example"
    assert r.stop_reason == "end_turn"
    assert "plan" in r.kinds and r.thoughts
    plan = next(t for t in r.tool_calls.values() if t.title.startswith("Update plan"))
    assert "Updated todo list" in str(plan.content) and "Command(" not in str(plan.content)
    read = next(t for t in r.tool_calls.values() if t.kind == "read")
    assert read.status == "completed" and "# Project" in str(read.content)
    (request,) = r.permission_requests
    write = r.tool_calls[request.tool_call.tool_call_id]
    assert write.kind == "edit"
    if answer == "allow_once":
        assert write.status == "completed"
        assert written is not None and written.startswith("Notes:")
    else:
        assert write.status == "failed"
        assert written is None
    expected = "wrote acpkit-notes.md" if answer == "allow_once" else "did not write any notes"
    assert r.text.endswith(f"I read README.md and {expected}.")


async def test_example_reports_a_file_it_cannot_read_as_a_failed_tool_call() -> None:
    async with AcpTestClient.spawn(sys.executable, str(EXAMPLE), permission_answers=["reject_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Write notes about the README.", session_id=sid)
    assert r.stop_reason == "end_turn"
    read = next(t for t in r.tool_calls.values() if t.kind == "read")
    assert read.status == "failed" and "Resource not found" in str(read.content)
    assert r.text.endswith("I could not read README.md and did not write any notes.")
