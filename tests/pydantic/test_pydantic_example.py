"""examples/pydantic_agent.py works offline, over real stdio, however it is started."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AgentPlanUpdate, FileEditToolCallContent
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "pydantic_agent.py")
ACPKIT = str(Path(sys.executable).with_name("acpkit"))
OFFLINE = {"ACPKIT_MODEL": ""}


def _plan(r: Any) -> list[str]:
    plans = [u for u in r.updates if isinstance(u, AgentPlanUpdate)]
    return [e.status for e in plans[-1].entries]


@pytest.mark.parametrize(("answer", "written"), [("allow_once", True), ("reject_once", False)])
async def test_example_agent_offline(tmp_path: Path, answer: str, written: bool) -> None:
    (tmp_path / "README.md").write_text("# My project\nIt does things.\n")
    async with AcpTestClient.spawn(
        sys.executable, EXAMPLE, root=tmp_path, env=OFFLINE, permission_answers=[answer]
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Summarise README.md please", session_id=sid)
        reads = [params["path"] for method, params in c.requests if method == "fs/read_text_file"]
    assert r.stop_reason == "end_turn"
    assert "README.md" in r.thoughts
    assert r.tool_calls["read-1"].status == "completed"
    assert r.tool_calls["read-1"].kind == "read"
    assert reads == [str(tmp_path / "README.md")]  # the new notes file is not read first (no failed request)
    assert [p.tool_call.tool_call_id for p in r.permission_requests] == ["write-1"]
    notes = tmp_path / "acpkit-notes.md"
    assert notes.exists() == written
    if written:
        assert _plan(r) == ["completed", "completed", "completed"]
        assert notes.read_text() == "# Notes\n\nFirst line of README.md: # My project\n"
        diff = next(x for x in r.tool_calls["write-1"].content if isinstance(x, FileEditToolCallContent))
        assert diff.old_text is None and diff.new_text == notes.read_text()
        assert r.text.endswith("wrote my notes to `acpkit-notes.md`.")
    else:
        assert _plan(r) == ["completed", "pending", "completed"]  # the refused step is not marked done
        assert r.tool_calls["write-1"].status == "failed"
        assert r.text.endswith("I read `README.md` but did not write any notes (you declined it).")


async def test_a_file_it_cannot_read_is_reported_as_not_read(tmp_path: Path) -> None:
    async with AcpTestClient.spawn(sys.executable, EXAMPLE, root=tmp_path, env=OFFLINE) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Summarise README.md please", session_id=sid)
    assert r.stop_reason == "end_turn"
    assert r.tool_calls["read-1"].status == "failed"
    assert "write-1" not in r.tool_calls and r.permission_requests == []
    assert _plan(r) == ["pending", "pending", "completed"]
    assert r.text.endswith(
        "I could not read `README.md` (fs/read_text_file: the client answered with an error: "
        "Resource not found), so I wrote no notes."
    )
    assert not (tmp_path / "acpkit-notes.md").exists()


async def test_a_turn_cancelled_at_the_permission_question_leaves_nothing_for_the_next(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Project\n")
    answers = ["cancel_turn", "allow_once"]  # the user stops the turn at the question (session/cancel)
    async with AcpTestClient.spawn(
        sys.executable, EXAMPLE, root=tmp_path, env=OFFLINE, permission_answers=answers
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("Summarise README.md please", session_id=sid)
        second = await c.prompt("Summarise README.md please", session_id=sid)
    assert first.stop_reason == "cancelled"
    assert first.tool_calls["write-1"].status == "failed"
    assert not first.text.startswith("Done")
    # The next turn starts over: it reads, asks again, writes, and reports only what it did itself.
    assert second.stop_reason == "end_turn"
    assert list(second.tool_calls) == ["read-1", "write-1"]
    assert [p.tool_call.tool_call_id for p in second.permission_requests] == ["write-1"]
    assert (
        second.text
        == "Let me look at `README.md` first.\nDone: I read `README.md` and wrote my notes to `acpkit-notes.md`."
    )


async def test_the_model_picker_switches_to_the_second_offline_model(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# My project\nIt does things.\n")
    async with AcpTestClient.spawn(sys.executable, EXAMPLE, root=tmp_path, env=OFFLINE) as c:
        await c.initialize()
        sid = await c.new_session()
        assert c.last_session is not None and c.last_session.config_options is not None
        (model,) = [o for o in c.last_session.config_options if o.id == "model"]
        assert model.category == "model" and model.current_value == "offline-planner"
        assert [v.value for v in model.options] == ["offline-planner", "offline-summariser"]
        changed = await c.set_config_option(sid, "model", "offline-summariser")
        r = await c.prompt("Summarise README.md please", session_id=sid)
    (after,) = [o for o in changed.config_options if o.id == "model"]
    assert after.current_value == "offline-summariser"
    assert r.stop_reason == "end_turn" and r.permission_requests == []
    assert list(r.tool_calls) == ["summary-read-1"]
    assert r.text == "Summary of `README.md`: 2 lines, starting with '# My project'."


async def test_acpkit_run_serves_the_example(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Project\n")
    async with AcpTestClient.spawn(
        ACPKIT, "run", EXAMPLE, root=tmp_path, env=OFFLINE, permission_answers=["allow_once"]
    ) as c:
        init = await c.initialize()
        sid = await c.new_session()
        listed = await c.prompt("/tools", session_id=sid)
        r = await c.prompt("Look at README.md", session_id=sid)
    assert init.agent_info is not None and init.agent_info.name == "pydantic-example"
    assert listed.text == (  # the client tools and the plan tool the agent uses, with the example's policy
        "Tools the model can call in mode agentic: 5 tools, 5 usable (2 after asking).\n"
        "\n"
        "Client tools (the editor's files and terminal):\n"
        "- `read_file` (read) — allowed — Read a text file of the project as the editor has it "
        "(unsaved changes included).\n"
        "- `run_command` (execute) — asks first — Run a command in the editor's terminal and return its "
        "output and exit code.\n"
        "- `write_file` (edit) — asks first — Create or overwrite a text file of the project with `content`.\n"
        "\n"
        "Plan tool:\n"
        "- `update_plan` (think) — allowed — Replace the plan shown to the user with these steps "
        "(always send the complete list).\n"
        "- `update_plan_step` (think) — allowed — Mark progress on one step of the plan (`step` counts from 1), "
        "or change its text."
    )
    assert r.stop_reason == "end_turn"
    assert (tmp_path / "acpkit-notes.md").read_text() == "# Notes\n\nFirst line of README.md: # Project\n"
