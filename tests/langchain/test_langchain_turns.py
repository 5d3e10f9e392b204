"""A LangGraph turn over a real ACP connection: streamed kinds, tools, usage, stop reasons, plans."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from acp.schema import ToolCallStart, UsageUpdate
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain.agents.middleware import TodoListMiddleware
from langchain_acp import create_acp_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from lc_helpers import Call, FakeChatModel, Reply, agent_for, boom, read_file

pytestmark = pytest.mark.timeout(30)


async def test_text_reasoning_tool_call_and_usage_stream_in_order() -> None:
    agent, model = agent_for(
        [
            Reply(
                reasoning=["Let me ", "look."],
                text=["Reading ", "it."],
                calls=[Call("read_file", {"path": "notes.txt"}, "c1")],
            ),
            Reply(text=["The note says ", "milk."]),
        ],
        [read_file],
    )
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        (c.root / "notes.txt").write_text("remember the milk\n")
        r = await c.prompt("Read notes.txt", session_id=sid)
    assert r.stop_reason == "end_turn"
    assert r.thoughts == "Let me look."
    assert r.text == "Reading it.The note says milk."
    call = r.tool_calls["c1"]
    assert call.kind == "read"
    assert call.title == "Read notes.txt"
    assert call.statuses == ["pending", "in_progress", "completed"]
    start = next(u for u in r.updates if isinstance(u, ToolCallStart))
    assert start.title == "read_file" and start.status == "pending"  # announced as soon as the name is known
    assert r.kinds.index("agent_thought_chunk") < r.kinds.index("agent_message_chunk") < r.kinds.index("tool_call")
    # the tool output reached the model and the client
    tool_message = model.seen[1][-1]
    assert isinstance(tool_message, ToolMessage) and tool_message.content == "remember the milk\n"
    assert r.usage is not None and r.usage.input_tokens == 20 and r.usage.output_tokens == 10
    # two model responses -> two agent messages with distinct ids
    ids = [u.message_id for u in r.updates if u.session_update == "agent_message_chunk"]
    assert len(set(ids)) == 2


async def test_tool_failure_is_failed_with_the_error_as_content() -> None:
    agent, _ = agent_for([Reply(calls=[Call("boom", {"x": 7}, "b1")]), Reply(text="sorry")], [boom])
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("explode", session_id=sid)
    call = r.tool_calls["b1"]
    assert call.statuses[-1] == "failed"
    assert "boom 7" in str(call.content)
    assert r.text == "sorry"


async def test_missing_file_read_through_the_client_fails() -> None:
    agent, _ = agent_for(
        [Reply(calls=[Call("read_file", {"path": "missing.txt"}, "m1")]), Reply(text="no file")], [read_file]
    )
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("read missing", session_id=sid)
    assert r.tool_calls["m1"].status == "failed"


@pytest.mark.parametrize(
    ("finish", "stop"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "refusal"), ("MAX_TOKENS", "max_tokens")],
)
async def test_finish_reasons_map_to_stop_reasons(finish: str, stop: str) -> None:
    agent, _ = agent_for([Reply(text="partial", finish_reason=finish)])
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
    assert r.stop_reason == stop


async def test_recursion_limit_is_max_turn_requests() -> None:
    model = FakeChatModel(script=[Reply(calls=[Call("boom", {"x": 1}, "loop")])], repeat_last=True)
    graph = create_agent(model, tools=[boom])
    agent = create_acp_agent(graph, store="memory", recursion_limit=6)
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("loop forever", session_id=sid)
    assert r.stop_reason == "max_turn_requests"


async def test_write_todos_becomes_one_plan_per_change() -> None:
    todos = [{"content": "Read the code", "status": "in_progress"}, {"content": "Fix the bug", "status": "pending"}]
    done = [{"content": "Read the code", "status": "completed"}, {"content": "Fix the bug", "status": "pending"}]
    agent, _ = agent_for(
        [
            Reply(calls=[Call("write_todos", {"todos": todos}, "t1")]),
            Reply(calls=[Call("write_todos", {"todos": todos}, "t2")]),
            Reply(calls=[Call("write_todos", {"todos": done}, "t3")]),
            Reply(text="planned"),
        ],
        middleware=[TodoListMiddleware()],
    )
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("plan it", session_id=sid)
    plans = [u for u in r.updates if u.session_update == "plan"]
    assert [[(e.content, e.status) for e in p.entries] for p in plans] == [
        [("Read the code", "in_progress"), ("Fix the bug", "pending")],
        [("Read the code", "completed"), ("Fix the bug", "pending")],
    ]
    assert r.tool_calls["t1"].kind == "think"


async def test_subagent_tool_calls_are_shown_and_marked() -> None:
    inner_model = FakeChatModel(
        script=[Reply(calls=[Call("read_file", {"path": "a.txt"}, "inner1")]), Reply(text="inner answer")]
    )
    inner = create_agent(inner_model, tools=[read_file], name="researcher")

    @tool
    async def task(description: str) -> str:
        """Delegate to the researcher subagent."""
        result = await inner.ainvoke({"messages": [HumanMessage(content=description)]})
        return str(result["messages"][-1].content)

    agent, _ = agent_for(
        [Reply(calls=[Call("task", {"description": "read a.txt"}, "outer1")]), Reply(text="all done")], [task]
    )
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        (c.root / "a.txt").write_text("alpha")
        r = await c.prompt("delegate", session_id=sid)
    assert r.tool_calls["outer1"].status == "completed"
    assert r.tool_calls["inner1"].status == "completed"
    start = next(u for u in r.updates if isinstance(u, ToolCallStart) and u.tool_call_id == "inner1")
    assert start.field_meta is not None and start.field_meta["acpkit"]["subagent"]
    assert r.text == "all done"  # the subagent's own text is not the answer
    assert "inner answer" in r.thoughts


@tool
def stamp(n: int) -> str:
    """A sync tool: LangChain runs it with `invoke` in a worker thread."""
    return f"stamped {n} in {threading.current_thread().name}"


async def test_sync_tools_report_through_the_handlers_loop_not_a_loop_per_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """LangChain would run an async handler's coroutine in a new event loop per event of a sync tool."""
    loops_made: list[int] = []
    real_runner = asyncio.Runner

    class CountingRunner(real_runner):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            loops_made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(asyncio, "Runner", CountingRunner)
    calls = [Call("stamp", {"n": i}, f"s{i}") for i in range(5)]
    agent, _ = agent_for([Reply(calls=calls), Reply(text="stamped")], [stamp])
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("stamp", session_id=sid)
    assert loops_made == []
    for i in range(5):
        tc = r.tool_calls[f"s{i}"]
        assert tc.statuses == ["pending", "in_progress", "completed"]
        out = tc.raw_output["output"]
        assert out.startswith(f"stamped {i} in ") and "MainThread" not in out
    assert r.text == "stamped"


async def test_usage_update_after_each_model_response_with_the_developers_context_window() -> None:
    agent, _ = agent_for(
        [Reply(text="one", calls=[Call("read_file", {"path": "x"}, "c1")]), Reply(text="two")],
        [read_file],
        context_window=128_000,
    )
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        (c.root / "x").write_text("x")
        r = await c.prompt("go", session_id=sid)
    usage = [u for u in r.updates if isinstance(u, UsageUpdate)]
    assert [(u.used, u.size) for u in usage] == [(15, 128_000), (15, 128_000)]
    # each comes after its response's text
    kinds = r.kinds
    first_usage = kinds.index("usage_update")
    assert kinds.index("agent_message_chunk") < first_usage < len(kinds) - 1 - kinds[::-1].index("agent_message_chunk")
