"""examples/pydantic_agent.py works offline, over real stdio, as `acpkit run` would serve it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp.schema import AgentPlanUpdate, FileEditToolCallContent
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "pydantic_agent.py")


@pytest.mark.parametrize(("answer", "written"), [("allow_once", True), ("reject_once", False)])
async def test_example_agent_offline(tmp_path: Path, answer: str, written: bool) -> None:
    (tmp_path / "README.md").write_text("# My project\nIt does things.\n")
    env = {"ACPKIT_MODEL": ""}
    async with AcpTestClient.spawn(sys.executable, EXAMPLE, root=tmp_path, env=env, permission_answers=[answer]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Summarise README.md please", session_id=sid)
    assert r.stop_reason == "end_turn"
    assert "README.md" in r.thoughts
    assert r.tool_calls["read-1"].status == "completed"
    assert r.tool_calls["read-1"].kind == "read"
    assert [p.tool_call.tool_call_id for p in r.permission_requests] == ["write-1"]
    plans = [u for u in r.updates if isinstance(u, AgentPlanUpdate)]
    assert [e.status for e in plans[-1].entries] == ["completed", "completed", "completed"]
    notes = tmp_path / "acpkit-notes.md"
    assert notes.exists() == written
    if written:
        assert notes.read_text() == "# Notes\n\nFirst line of README.md: # My project\n"
        diff = next(x for x in r.tool_calls["write-1"].content if isinstance(x, FileEditToolCallContent))
        assert diff.old_text is None and diff.new_text == notes.read_text()
        assert r.text.endswith("wrote my notes to `acpkit-notes.md`.")
    else:
        assert r.tool_calls["write-1"].status == "failed"
        assert r.text.endswith("did not write any notes (you declined, or it failed).")


async def test_acpkit_run_serves_the_example(tmp_path: Path) -> None:
    acpkit = str(Path(sys.executable).with_name("acpkit"))
    (tmp_path / "README.md").write_text("# Project\n")
    async with AcpTestClient.spawn(
        acpkit, "run", EXAMPLE, root=tmp_path, env={"ACPKIT_MODEL": ""}, permission_answers=["allow_once"]
    ) as c:
        init = await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Look at README.md", session_id=sid)
    assert init.agent_info is not None and init.agent_info.name == "pydantic-example"
    assert r.stop_reason == "end_turn"
    assert (tmp_path / "acpkit-notes.md").read_text() == "# Notes\n\nFirst line of README.md: # Project\n"
