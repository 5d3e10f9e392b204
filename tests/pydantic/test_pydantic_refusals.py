"""A refused or cancelled tool call is in the history as not executed: what the model reads next turn."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acpkit_core.permissions import PermissionPolicy
from acpkit_core.testing import AcpTestClient
from pyd_script import Script, call
from pydantic_acp import DECLINED_TEXT, create_acp_agent
from pydantic_acp._history import INTERRUPTED_TOOL_TEXT, NOT_RUN_TOOL_TEXT
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

pytestmark = pytest.mark.timeout(30)


def _seen(messages: list[ModelMessage]) -> list[tuple[str, str]]:
    """What the model was sent, one line per part: role and text (a tool result with its outcome)."""
    out: list[tuple[str, str]] = []
    for m in messages:
        for p in m.parts:
            if isinstance(p, UserPromptPart):
                out.append(("user", str(p.content)))
            elif isinstance(p, ToolReturnPart):
                out.append((f"tool {p.tool_call_id}", f"{p.outcome}: {p.content}"))
            elif isinstance(p, ToolCallPart):
                out.append(("call", p.tool_call_id))
            elif isinstance(p, TextPart):
                out.append(("ai", p.content))
    return out


def _agent(script: Script, ran: list[str]) -> Any:
    agent = Agent(script.model)

    @agent.tool_plain
    def write_notes(path: str) -> str:
        ran.append(path)
        return "written"

    @agent.tool_plain
    async def slow() -> str:
        ran.append("slow")
        await asyncio.sleep(30)
        return "slow done"

    return create_acp_agent(agent, store="memory", permission_policy=PermissionPolicy(ask=("write_notes",)))


async def test_a_refused_call_reads_as_declined() -> None:
    ran: list[str] = []
    script = Script([[call("write_notes", '{"path": "n.txt"}', id="w1")], ["I will not write."], ["second turn"]])
    async with AcpTestClient.connect(_agent(script, ran), permission_answers=["reject_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("write", session_id=sid)
        await c.prompt("next", session_id=sid)
    assert (r.stop_reason, r.tool_calls["w1"].status, r.text, ran) == ("end_turn", "failed", "I will not write.", [])
    assert _seen(script.requests[-1]) == [
        ("user", "write"),
        ("call", "w1"),
        ("tool w1", f"denied: {DECLINED_TEXT}"),
        ("ai", "I will not write."),
        ("user", "next"),
    ]


async def test_a_call_cancelled_at_its_permission_question_reads_as_not_run() -> None:
    ran: list[str] = []
    script = Script([[call("write_notes", '{"path": "n.txt"}', id="w1")], ["second turn"]])
    async with AcpTestClient.connect(_agent(script, ran), permission_answers=["cancel_turn"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("write", session_id=sid)
        second = await c.prompt("next", session_id=sid)
    assert (r.stop_reason, r.tool_calls["w1"].status, ran) == ("cancelled", "failed", [])
    assert second.text == "second turn"
    assert _seen(script.requests[-1]) == [
        ("user", "write"),
        ("call", "w1"),
        ("tool w1", f"denied: {NOT_RUN_TOOL_TEXT}"),
        ("user", "next"),
    ]


async def test_a_call_cancelled_while_it_runs_reads_as_not_finished() -> None:
    ran: list[str] = []
    script = Script([[call("slow", "{}", id="s1")], ["again"]])
    async with AcpTestClient.connect(_agent(script, ran)) as c:
        await c.initialize()
        sid = await c.new_session()
        turn = asyncio.ensure_future(c.prompt("wait", session_id=sid))
        while "in_progress" not in [getattr(u, "status", None) for u in c.updates.get(sid, [])]:
            await asyncio.sleep(0.01)
        await c.cancel(sid)
        r = await turn
        await c.prompt("next", session_id=sid)
    assert (r.stop_reason, r.tool_calls["s1"].status) == ("cancelled", "failed")
    assert _seen(script.requests[-1]) == [
        ("user", "wait"),
        ("call", "s1"),
        ("tool s1", f"interrupted: {INTERRUPTED_TOOL_TEXT}"),
        ("user", "next"),
    ]
