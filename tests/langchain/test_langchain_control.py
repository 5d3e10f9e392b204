"""Approvals (both HITL shapes and the ACP permission middleware), cancellation and modes."""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

import pytest
from acpkit_core.permissions import STANDARD_MODES, PermissionPolicy
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_acp import AcpModeMiddleware, AcpPermissionMiddleware, create_acp_agent
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from lc_helpers import Call, FakeChatModel, Reply, agent_for, delete_file, read_file, slow_tool, write_file

pytestmark = pytest.mark.timeout(30)


def hitl_agent(mode: str, model: FakeChatModel, **options: Any) -> Any:
    graph = create_agent(
        model,
        tools=[delete_file, write_file],
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={"delete_file": True, "write_file": True}, interrupt_mode=cast(Any, mode)
            )
        ],  # type: ignore[arg-type]
        checkpointer=InMemorySaver(),
    )
    return create_acp_agent(graph, store="memory", **options)


def two_calls() -> list[Reply]:
    return [
        Reply(
            calls=[
                Call("delete_file", {"path": "a.txt"}, "d1"),
                Call("write_file", {"path": "b.txt", "content": "x"}, "w1"),
            ]
        ),
        Reply(text="finished"),
    ]


@pytest.mark.parametrize("mode", ["batched", "per_call"])
@pytest.mark.parametrize(
    ("answers", "statuses"),
    [
        (["allow_once", "allow_once"], ("completed", "completed")),
        (["reject_once", "allow_always"], ("failed", "completed")),
        (["reject_once", "reject_once"], ("failed", "failed")),
    ],
)
async def test_hitl_interrupts_ask_with_the_tool_call_ids(
    mode: str, answers: list[str], statuses: tuple[str, str]
) -> None:
    model = FakeChatModel(script=two_calls())
    async with AcpTestClient.connect(hitl_agent(mode, model), permission_answers=answers) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("clean up", session_id=sid)
    assert r.stop_reason == "end_turn"
    assert sorted(p.tool_call.tool_call_id for p in r.permission_requests) == ["d1", "w1"]
    assert (r.tool_calls["d1"].status, r.tool_calls["w1"].status) == statuses
    assert r.text == "finished"
    results = {m.tool_call_id: m for m in model.seen[1] if isinstance(m, ToolMessage)}
    for call_id, status in zip(("d1", "w1"), statuses, strict=True):
        assert (results[call_id].status == "error") == (status == "failed")


async def test_hitl_edit_replaces_the_arguments() -> None:
    model = FakeChatModel(script=two_calls())
    agent = hitl_agent(
        "batched",
        model,
        edit_tool_call=lambda name, args, d: {**args, "path": "safe.txt"} if name == "delete_file" else None,
    )
    async with AcpTestClient.connect(agent, permission_answers=["allow_once", "allow_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("clean up", session_id=sid)
    results = {m.tool_call_id: m for m in model.seen[1] if isinstance(m, ToolMessage)}
    assert "deleted safe.txt" in str(results["d1"].content)
    assert r.tool_calls["d1"].status == "completed"


async def test_hitl_cancelled_permission_ends_the_turn_cancelled() -> None:
    model = FakeChatModel(script=two_calls())
    async with AcpTestClient.connect(hitl_agent("per_call", model), permission_answers=["cancelled"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("clean up", session_id=sid)
    assert r.stop_reason == "cancelled"


async def test_other_interrupts_are_explained_and_end_the_turn() -> None:
    from langgraph.graph import MessagesState, StateGraph
    from langgraph.types import interrupt

    def ask(state: MessagesState) -> dict[str, Any]:
        interrupt({"question": "which colour?"})
        return {}

    graph = StateGraph(MessagesState).add_node("ask", ask).add_edge("__start__", "ask").compile()
    agent = create_acp_agent(graph, store="memory")
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("hi", session_id=sid)
    assert r.stop_reason == "end_turn"
    assert "which colour?" in r.text


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
async def test_permission_middleware_asks_by_policy_and_replans_after_reject(answer: str) -> None:
    script = [
        Reply(calls=[Call("read_file", {"path": "n.txt"}, "r1"), Call("delete_file", {"path": "old.txt"}, "d1")]),
        Reply(text="re-planned"),
    ]
    agent, model = agent_for(
        script, [read_file, delete_file], middleware=[AcpPermissionMiddleware(PermissionPolicy(ask=("delete_*",)))]
    )
    async with AcpTestClient.connect(agent, permission_answers=[answer]) as c:
        await c.initialize()
        sid = await c.new_session()
        (c.root / "n.txt").write_text("n")
        r = await c.prompt("tidy", session_id=sid)
    (request,) = r.permission_requests
    assert request.tool_call.tool_call_id == "d1"
    assert r.tool_calls["r1"].status == "completed"
    assert r.tool_calls["d1"].status == ("completed" if answer == "allow_once" else "failed")
    results = {m.tool_call_id: m for m in model.seen[1] if isinstance(m, ToolMessage)}
    if answer == "reject_once":
        assert "rejected" in str(results["d1"].content)
    else:
        assert results["d1"].content == "deleted old.txt"
    assert r.text == "re-planned"


async def test_server_policy_applies_through_the_middleware_and_always_is_remembered() -> None:
    script = [
        Reply(calls=[Call("delete_file", {"path": "a"}, "d1")]),
        Reply(calls=[Call("delete_file", {"path": "b"}, "d2")]),
        Reply(text="ok"),
    ]
    agent, _ = agent_for(
        script,
        [delete_file],
        middleware=[AcpPermissionMiddleware()],
        permission_policy=PermissionPolicy(ask=("delete_*",)),
    )
    async with AcpTestClient.connect(agent, permission_answers=["allow_always"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("delete twice", session_id=sid)
    assert len(r.permission_requests) == 1
    assert r.tool_calls["d1"].status == r.tool_calls["d2"].status == "completed"


async def test_cancel_mid_stream_stops_quickly() -> None:
    agent, _ = agent_for([Reply(text=["a"] * 200, delay=0.05)])
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.create_task(c.prompt("talk", session_id=sid))
        await asyncio.sleep(0.4)
        started = time.monotonic()
        await c.cancel(sid)
        r = await task
        elapsed = time.monotonic() - started
    assert r.stop_reason == "cancelled"
    assert elapsed < 0.5
    assert 0 < len(r.text) < 200


async def test_cancel_mid_tool_closes_the_call() -> None:
    agent, _ = agent_for([Reply(calls=[Call("slow_tool", {}, "s1")])], [slow_tool])
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.create_task(c.prompt("wait", session_id=sid))
        await asyncio.sleep(0.5)
        started = time.monotonic()
        await c.cancel(sid)
        r = await task
    assert time.monotonic() - started < 1.0
    assert r.stop_reason == "cancelled"
    assert r.tool_calls["s1"].statuses[-1] == "failed"


async def test_cancel_during_permission_request() -> None:
    never = asyncio.Event()

    async def wait_forever(_: Any) -> str:
        await never.wait()
        return "allow_once"

    agent, _ = agent_for(
        [Reply(calls=[Call("delete_file", {"path": "x"}, "d1")])],
        [delete_file],
        middleware=[AcpPermissionMiddleware(PermissionPolicy(ask=("delete_*",)))],
    )
    async with AcpTestClient.connect(agent, permission_answers=wait_forever) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.create_task(c.prompt("delete", session_id=sid))
        await asyncio.sleep(0.5)
        await c.cancel(sid)
        r = await task
    assert r.stop_reason == "cancelled"
    assert r.tool_calls["d1"].status == "failed"


async def test_modes_filter_tools_and_ask() -> None:
    model = FakeChatModel(
        script=[
            Reply(text="a"),
            Reply(calls=[Call("write_file", {"path": "f", "content": "c"}, "w1")]),
            Reply(text="b"),
        ]
    )
    agent, _ = agent_for(
        [],
        [read_file, write_file],
        model=model,
        middleware=[AcpModeMiddleware(), AcpPermissionMiddleware()],
        modes=STANDARD_MODES,
    )
    async with AcpTestClient.connect(agent, permission_answers=["reject_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.set_mode(sid, "readonly")
        await c.prompt("look", session_id=sid)
        assert model.bound_tools[-1] == ["read_file"]
        await c.set_mode(sid, "interactive")
        r = await c.prompt("write", session_id=sid)
    assert model.bound_tools[1] == ["read_file", "write_file"]
    (request,) = r.permission_requests
    assert request.tool_call.tool_call_id == "w1"
    assert r.tool_calls["w1"].status == "failed"
