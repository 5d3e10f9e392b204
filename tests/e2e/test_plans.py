"""Structured plans over real stdio, on both adapters: a plan as the model's answer, shown step by
step; the plan kept with the session and changed one step at a time after a restart; a plan owned
by the host (`PlanProvider`), read when the session opens and around every turn."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

AGENTS = Path(__file__).parent / "agents" / "plan_agents.py"
FULL = [("Read the code", "pending"), ("Write the tests", "pending"), ("Ship it", "pending")]


def plans(updates: list[Any]) -> list[list[tuple[str, str]]]:
    return [[(e.content, e.status) for e in u.entries] for u in updates if u.session_update == "plan"]


@pytest.mark.parametrize("adapter", ["pydantic", "langchain"])
async def test_a_plan_answer_is_shown_step_by_step_and_kept_across_a_restart(adapter: str, tmp_path: Path) -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), adapter, root=tmp_path) as c:
        await c.initialize()
        sid = await c.new_session()
        if adapter == "pydantic":
            await c.set_mode(sid, "planning")  # its answers are plans there (`plan_output=True`)
        planned = await c.prompt("plan the release", session_id=sid)
        if adapter == "pydantic":
            await c.set_mode(sid, "agentic")
    shown = plans(planned.updates)
    assert shown[-1] == FULL
    assert len(shown) >= 2 and all(s == FULL[: len(s)] for s in shown)  # step by step, never a half-written step
    if adapter == "pydantic":
        assert shown == [FULL[:2], FULL]
    assert planned.text == "Three steps, tests first."  # the summary is the answer, not the JSON
    assert planned.tool_calls == {}  # the structured answer is not a tool call

    async with AcpTestClient.spawn(sys.executable, str(AGENTS), adapter, root=tmp_path) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        assert plans(replayed)[-1] == FULL
        stepped = await c.prompt("step 2", session_id=sid)
    assert plans(stepped.updates) == [[FULL[0], ("Write the tests", "completed"), FULL[2]]]


@pytest.mark.parametrize("adapter", ["pydantic", "langchain"])
async def test_a_host_owned_plan_is_read_on_open_and_around_turns_and_takes_the_models_changes(
    adapter: str, tmp_path: Path
) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps([{"content": "Triage", "status": "in_progress"}, {"content": "Fix"}]))
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), adapter, "host", root=tmp_path) as c:
        await c.initialize()
        sid = await c.new_session()
        opened = plans(c.updates[sid])
        plan_file.write_text(json.dumps([{"content": "Triage", "status": "completed"}, {"content": "Fix"}]))
        hello = await c.prompt("hello", session_id=sid)
        stepped = await c.prompt("step 2", session_id=sid)
    assert opened == [[("Triage", "in_progress"), ("Fix", "pending")]]  # get_plan when the session opened
    assert plans(hello.updates) == [[("Triage", "completed"), ("Fix", "pending")]]  # changed outside: shown
    written = json.loads(plan_file.read_text())
    if adapter == "pydantic":  # update_plan_step changed step 2 of the host's plan, through set_plan
        assert plans(stepped.updates) == [[("Triage", "completed"), ("Fix", "completed")]]
        assert written == [{"content": "Triage", "status": "completed"}, {"content": "Fix", "status": "completed"}]
    else:  # write_todos wrote the whole list, through set_plan
        assert plans(stepped.updates) == [[FULL[0], ("Write the tests", "completed"), FULL[2]]]
        assert [e["status"] for e in written] == ["pending", "completed", "pending"]


@pytest.mark.parametrize("adapter", ["pydantic", "langchain"])
async def test_a_read_only_host_plan_is_never_overwritten_by_the_model(adapter: str, tmp_path: Path) -> None:
    original = json.dumps([{"content": "Triage"}])
    (tmp_path / "plan.json").write_text(original)
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), adapter, "host-readonly", root=tmp_path) as c:
        await c.initialize()
        sid = await c.new_session()
        hello = await c.prompt("hello", session_id=sid)
        stepped = await c.prompt("step 2", session_id=sid)
    assert plans(c.updates[sid][: c.updates[sid].index(hello.updates[0])]) == [[("Triage", "pending")]]
    if adapter == "pydantic":
        assert hello.text == "ok"  # no plan tool offered (with one, the model would say "ok (can plan)")
    assert plans(stepped.updates) == []  # the graph's todos do not replace the host's plan
    assert (tmp_path / "plan.json").read_text() == original
