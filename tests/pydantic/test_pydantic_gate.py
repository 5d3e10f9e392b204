"""The same permission and mode gate as for LangChain graphs (tests/langchain/test_langchain_gate.py), on pydantic-ai.

A plain `Agent` with a `delete_file` tool that counts its runs, no `requires_approval`: the
session's `permission_policy` and mode alone decide, as they do for every runner.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acpkit_core.permissions import STANDARD_MODES, PermissionPolicy
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient
from pyd_script import Script, call
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent

pytestmark = pytest.mark.timeout(30)

ASK = PermissionPolicy(ask=("delete_*",))


def serve(turns: list[Any], runs: list[str], **options: Any) -> tuple[AcpAgent, Script]:
    script = Script(turns)
    agent = Agent(script.model)

    @agent.tool_plain
    def delete_file(path: str) -> str:
        """Delete a file (pretend)."""
        runs.append(path)
        return f"deleted {path}"

    options.setdefault("store", "memory")
    return create_acp_agent(agent, **options), script


def delete_then(text: str, call_id: str = "d1") -> list[Any]:
    return [[call("delete_file", '{"path": "old.txt"}', id=call_id)], [text]]


async def test_policy_ask_holds_the_call_until_the_user_allows() -> None:
    runs: list[str] = []
    order: list[str] = []

    def answer(request: Any) -> str:
        order.append(f"asked, runs={len(runs)}")
        return "allow_once"

    agent, _ = serve(delete_then("gone"), runs, permission_policy=ASK)
    async with AcpTestClient.connect(agent, permission_answers=answer) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("delete old.txt", session_id=sid)
    assert order == ["asked, runs=0"]
    assert runs == ["old.txt"]
    assert [p.tool_call.tool_call_id for p in r.permission_requests] == ["d1"]
    assert r.tool_calls["d1"].statuses == ["pending", "in_progress", "completed"]


async def test_policy_deny_never_asks_and_never_runs() -> None:
    runs: list[str] = []
    agent, _ = serve(delete_then("refused"), runs, permission_policy=PermissionPolicy(deny=("delete_*",)))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("delete old.txt", session_id=sid)
    assert runs == []
    assert r.permission_requests == []
    # The tool is hidden from the model; a call it makes anyway never runs.
    assert all(call.status == "failed" for call in r.tool_calls.values())


@pytest.mark.parametrize("mode", ["readonly", "planning"])
async def test_readonly_and_planning_never_run_a_delete(mode: str) -> None:
    runs: list[str] = []
    agent, _ = serve(delete_then("read only"), runs, modes=STANDARD_MODES)
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.set_mode(sid, mode)
        r = await c.prompt("delete old.txt", session_id=sid)
    assert runs == []
    assert r.permission_requests == []
    assert all(call.status == "failed" for call in r.tool_calls.values())


async def test_interactive_asks_first() -> None:
    runs: list[str] = []
    agent, _ = serve(delete_then("ok"), runs, modes=STANDARD_MODES)
    async with AcpTestClient.connect(agent, permission_answers=["allow_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.set_mode(sid, "interactive")
        r = await c.prompt("delete old.txt", session_id=sid)
    assert [p.tool_call.tool_call_id for p in r.permission_requests] == ["d1"]
    assert runs == ["old.txt"]


@pytest.mark.parametrize("answer", ["allow_always", "reject_always"])
async def test_remembered_answers_apply_to_the_next_turns(answer: str) -> None:
    runs: list[str] = []
    agent, _ = serve([*delete_then("one", "d1"), *delete_then("two", "d2")], runs, permission_policy=ASK)
    async with AcpTestClient.connect(agent, permission_answers=[answer]) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("delete", session_id=sid)
        second = await c.prompt("delete again", session_id=sid)
    assert len(first.permission_requests) == 1
    assert second.permission_requests == []
    if answer == "allow_always":
        assert runs == ["old.txt", "old.txt"]
        assert second.tool_calls["d2"].statuses[-1] == "completed"
    else:
        assert runs == []
        assert second.tool_calls["d2"].statuses[-1] == "failed"


async def test_cancel_during_the_question_ends_cancelled_and_never_runs() -> None:
    runs: list[str] = []
    never = asyncio.Event()

    async def wait_forever(_: Any) -> str:
        await never.wait()
        return "allow_once"

    agent, _ = serve(delete_then("late"), runs, permission_policy=ASK)
    async with AcpTestClient.connect(agent, permission_answers=wait_forever) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.create_task(c.prompt("delete", session_id=sid))
        while not c.permission_requests:
            await asyncio.sleep(0.01)
        await c.cancel(sid)
        r = await task
    assert r.stop_reason == "cancelled"
    assert runs == []
    assert r.tool_calls["d1"].statuses == ["pending", "failed"]
