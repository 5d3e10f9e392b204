"""A refused or cancelled tool call is in the thread as not executed: what the model reads next turn."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acpkit_core.permissions import PermissionPolicy
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_acp import AcpPermissionMiddleware, create_acp_agent
from langchain_acp._history import NOT_RUN_TEXT, STOPPED_TEXT
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from lc_helpers import Call, FakeChatModel, Reply, slow_tool, write_file

pytestmark = pytest.mark.timeout(30)


def _graph(model: FakeChatModel, gate: str) -> Any:
    if gate == "hitl":
        middleware: list[Any] = [HumanInTheLoopMiddleware(interrupt_on={"write_file": True})]
    else:
        middleware = [AcpPermissionMiddleware(PermissionPolicy(ask=("write_file",)))]
    return create_agent(model, tools=[write_file, slow_tool], middleware=middleware, checkpointer=InMemorySaver())


def _seen(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    """What the model was sent, one line per message: role and text (a tool result with its status)."""
    out: list[tuple[str, str]] = []
    for m in messages:
        if isinstance(m, ToolMessage):
            out.append((f"tool {m.tool_call_id}", f"{m.status}: {m.content}"))
        elif isinstance(m, AIMessage):
            out.append(("ai", ",".join(c["id"] or "" for c in m.tool_calls) or str(m.content)))
        elif isinstance(m, HumanMessage):
            out.append(("human", m.text))
    return out


WRITE = Reply(calls=[Call("write_file", {"path": "a.txt", "content": "x"}, "w1")])
REFUSED = {
    "hitl": "error: User rejected the tool call for `write_file` with reason: "
    "The user declined this tool call in the editor.",
    "middleware": "error: The user rejected the call to `write_file`; do not retry it unless asked.",
}


@pytest.mark.parametrize("gate", ["hitl", "middleware"])
async def test_a_refused_call_reads_as_refused(gate: str) -> None:
    model = FakeChatModel(script=[WRITE, Reply(text="I will not write."), Reply(text="second turn")])
    async with AcpTestClient.connect(
        create_acp_agent(_graph(model, gate), store="memory"), permission_answers=["reject_once"]
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("write", session_id=sid)
        await c.prompt("next", session_id=sid)
    assert (r.stop_reason, r.tool_calls["w1"].status, r.text) == ("end_turn", "failed", "I will not write.")
    assert _seen(model.seen[-1]) == [
        ("human", "write"),
        ("ai", "w1"),
        ("tool w1", REFUSED[gate]),
        ("ai", "I will not write."),
        ("human", "next"),
    ]


@pytest.mark.parametrize("gate", ["hitl", "middleware"])
async def test_a_call_cancelled_at_its_permission_question_reads_as_not_run(gate: str) -> None:
    model = FakeChatModel(script=[WRITE, Reply(text="second turn")])
    agent = create_acp_agent(_graph(model, gate), store="memory")
    async with AcpTestClient.connect(agent, permission_answers=["cancel_turn"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("write", session_id=sid)
        second = await c.prompt("next", session_id=sid)
    assert (r.stop_reason, r.tool_calls["w1"].status) == ("cancelled", "failed")
    assert second.text == "second turn"
    # The next turn's model reads the call answered as not run, never a call without a result.
    assert _seen(model.seen[-1]) == [
        ("human", "write"),
        ("ai", "w1"),
        ("tool w1", f"error: {NOT_RUN_TEXT}"),
        ("human", "next"),
    ]


async def test_a_call_cancelled_while_it_runs_reads_as_not_finished() -> None:
    model = FakeChatModel(script=[Reply(calls=[Call("slow_tool", {}, "s1")]), Reply(text="never"), Reply(text="again")])
    async with AcpTestClient.connect(create_acp_agent(_graph(model, "middleware"), store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        turn = asyncio.ensure_future(c.prompt("wait", session_id=sid))
        while "in_progress" not in [getattr(u, "status", None) for u in c.updates.get(sid, [])]:
            await asyncio.sleep(0.01)
        await c.cancel(sid)
        r = await turn
        await c.prompt("next", session_id=sid)
    assert (r.stop_reason, r.tool_calls["s1"].status) == ("cancelled", "failed")
    assert _seen(model.seen[-1]) == [
        ("human", "wait"),
        ("ai", "s1"),
        ("tool s1", f"error: {STOPPED_TEXT}"),
        ("human", "next"),
    ]
