"""The offline example graph, over real stdio: plan, read through the client, ask, write."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp.schema import FileEditToolCallContent
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
    # the question shows the write as a diff, as the pydantic example's does
    shown = [
        x
        for u in r.updates
        if getattr(u, "tool_call_id", None) == request.tool_call.tool_call_id
        for x in getattr(u, "content", None) or []
        if isinstance(x, FileEditToolCallContent)
    ]
    diff = shown[0]
    assert (diff.path, diff.old_text, diff.new_text) == (
        str(c.root / "acpkit-notes.md"),
        None,
        "Notes: the README was read by the example agent.\n",
    )
    if answer == "allow_once":
        assert write.status == "completed"
        assert written is not None and written.startswith("Notes:")
    else:
        assert write.status == "failed"
        assert written is None
    expected = (
        "and wrote acpkit-notes.md"
        if answer == "allow_once"
        else "but did not write any notes (The user rejected the call to `write_file`)"
    )
    assert r.text.endswith(f"Done: I read README.md {expected}.")
    plans = [[e.status for e in u.entries] for u in r.updates if u.session_update == "plan"]
    assert plans[-1] == (["completed", "completed"] if answer == "allow_once" else ["completed", "pending"])


async def test_example_reports_a_file_it_cannot_read_as_a_failed_tool_call() -> None:
    async with AcpTestClient.spawn(sys.executable, str(EXAMPLE), permission_answers=["reject_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Write notes about the README.", session_id=sid)
    assert r.stop_reason == "end_turn"
    read = next(t for t in r.tool_calls.values() if t.kind == "read")
    assert read.status == "failed" and "Resource not found" in str(read.content)
    assert r.text.endswith(
        "I could not read README.md (fs/read_text_file: the client answered with an error: Resource not found), "
        "so I wrote no notes."
    )
    assert [t.kind for t in r.tool_calls.values()] == ["think", "read", "think"]  # no write after a failed read


ACPKIT = str(Path(sys.executable).with_name("acpkit"))
OFFLINE = {"ACPKIT_MODEL": ""}


async def test_acpkit_run_serves_the_example_with_its_modes(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Project\n")
    async with AcpTestClient.spawn(ACPKIT, "run", str(EXAMPLE), root=tmp_path, env=OFFLINE) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.set_mode(sid, "readonly")
        listed = await c.prompt("/tools", session_id=sid)
        r = await c.prompt("Write notes about the README.", session_id=sid)
    assert listed.text == (
        "Tools the model can call in mode readonly: 3 tools, 2 usable.\n"
        "\n"
        "Agent tools:\n"
        "- `read_file` (read) — allowed — Read a text file (through the editor, so unsaved changes are seen).\n"
        "- `write_file` (edit) — off in mode readonly — Write a text file through the editor.\n"
        "\n"
        "Plan tool:\n"
        "- `write_todos` (think) — allowed — Use this tool to create and manage a structured task list for "
        "your current work session."
    )
    assert r.stop_reason == "end_turn"
    assert r.permission_requests == []  # read-only: the model is not offered the write
    assert [t.kind for t in r.tool_calls.values()] == ["think", "read", "think"]
    assert not (tmp_path / "acpkit-notes.md").exists()
    assert r.text.endswith("I read README.md; the `readonly` mode does not allow writing files, so I wrote no notes.")


async def test_the_model_picker_switches_to_the_second_offline_model(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# My project\nIt does things.\n")
    async with AcpTestClient.spawn(ACPKIT, "run", str(EXAMPLE), root=tmp_path, env=OFFLINE) as c:
        await c.initialize()
        sid = await c.new_session()
        changed = await c.set_config_option(sid, "model", "offline-summariser")
        r = await c.prompt("Write notes about the README.", session_id=sid)
    (after,) = [o for o in changed.config_options if o.id == "model"]
    assert (after.category, after.current_value) == ("model", "offline-summariser")
    assert r.stop_reason == "end_turn" and r.permission_requests == []
    assert [t.kind for t in r.tool_calls.values()] == ["read"]
    assert r.text == "Summary of README.md: 2 lines, starting with '# My project'."


async def test_a_turn_cancelled_at_the_permission_question_leaves_nothing_for_the_next(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Project\n")
    answers = ["cancel_turn", "allow_once"]  # the user stops the turn at the question (session/cancel)
    async with AcpTestClient.spawn(
        sys.executable, str(EXAMPLE), root=tmp_path, env=OFFLINE, permission_answers=answers
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("Write notes about the README.", session_id=sid)
        second = await c.prompt("Write notes about the README.", session_id=sid)
    assert first.stop_reason == "cancelled"
    assert second.stop_reason == "end_turn"
    assert len(second.permission_requests) == 1
    assert second.text.endswith("Done: I read README.md and wrote acpkit-notes.md.")


GRAPH_MODULE = """
from langchain.agents import create_agent
from fake_model import FakeChatModel

graph = create_agent(FakeChatModel(script=[]), tools=[]{name})
"""


@pytest.mark.parametrize(
    ("name", "announced"), [(', name="release-notes-writer"', "release-notes-writer"), ("", "acpkit-agent")]
)
async def test_a_served_graph_announces_its_own_name(tmp_path: Path, name: str, announced: str) -> None:
    module = tmp_path / "named_graph.py"
    module.write_text(GRAPH_MODULE.format(name=name))
    env = {**OFFLINE, "PYTHONPATH": str(Path(__file__).parent)}
    async with AcpTestClient.spawn(ACPKIT, "run", str(module), root=tmp_path, env=env) as c:
        init = await c.initialize()
    assert init.agent_info is not None and init.agent_info.name == announced
