"""Public API, session middleware, /tools, forks, and a turn after a cancelled approval."""

from __future__ import annotations

from typing import Any

import langchain_acp
import pytest
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_acp import AcpSessionMiddleware, create_acp_agent, stop_reason_from_state, todos_to_plan, validate_state
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from lc_agent_script import recall
from lc_helpers import Call, FakeChatModel, Reply, delete_file, read_file

pytestmark = pytest.mark.timeout(30)


def test_public_api() -> None:
    # constants first, then the rest in order (ruff's isort-style sorting of `__all__`)
    assert sorted(langchain_acp.__all__, key=lambda n: (not n.isupper(), n)) == langchain_acp.__all__
    for name in langchain_acp.__all__:
        assert getattr(langchain_acp, name) is not None
    for name in ("create_acp_agent", "run_acp", "render_prompt", "to_human_message", "AcpCallbackHandler"):
        assert name in langchain_acp.__all__


def test_mappers() -> None:
    assert stop_reason_from_state(
        {"messages": [AIMessage(content="x", response_metadata={"stop_reason": "max_tokens"})]}
    ) == ("max_tokens")
    assert [p.status for p in todos_to_plan([{"content": "a", "status": "done"}, {"title": "b"}])] == [
        "completed",
        "pending",
    ]
    state = langchain_acp.serialize_state({"messages": [HumanMessage(content="hi")], "n": 1})
    assert validate_state(state)["messages"][0].content == "hi"


async def test_session_middleware_puts_the_session_in_state_and_snapshots() -> None:
    snapshots: list[tuple[str, dict[str, Any]]] = []
    seen: list[dict[str, Any]] = []

    def reply(messages: list[BaseMessage]) -> Reply:
        return Reply(text="ok")

    model = FakeChatModel(script=[reply], repeat_last=True)
    middleware = AcpSessionMiddleware(
        snapshots="all", on_snapshot=lambda label, state: snapshots.append((label, state))
    )
    graph = create_agent(model, tools=[], middleware=[middleware])
    async with AcpTestClient.connect(create_acp_agent(graph, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("one", session_id=sid)
        await c.prompt("two", session_id=sid)
        seen.append(snapshots[-1][1])
    assert [label for label, _ in snapshots] == ["initial", "model", "final", "initial", "model", "final"]
    final = seen[0]
    assert final["acp_session_id"] == sid and final["acp_thread_id"] == sid and final["acp_turn"] == 2
    contents = [m["data"]["content"] for m in final["messages"]]
    assert contents == ["one", "ok", "two", "ok"]  # a one-text prompt reaches the graph as a str


async def test_tools_command_lists_the_graph_tools() -> None:
    graph = create_agent(FakeChatModel(), tools=[read_file, delete_file])
    agent = create_acp_agent(graph, store="memory", tool_kinds={"read_file": "search"})
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("/tools", session_id=sid)
    # kinds come from the core classifier, with the developer's overrides
    assert "`read_file` (search)" in r.text and "`delete_file` (delete)" in r.text


async def test_fork_starts_from_the_parent_conversation() -> None:
    agent = create_acp_agent(create_agent(FakeChatModel(script=[recall], repeat_last=True), tools=[]), store="memory")
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("first", session_id=sid)
        child = await c.fork_session(sid)
        r = await c.prompt("second", session_id=child)
        again = await c.prompt("third", session_id=child)
        parent = await c.prompt("other", session_id=sid)
    assert r.text == "turn 2: first | second"
    assert again.text == "turn 3: first | second | third"
    assert parent.text == "turn 2: first | other"


async def test_a_new_prompt_after_a_cancelled_approval_works() -> None:
    model = FakeChatModel(script=[Reply(calls=[Call("delete_file", {"path": "a"}, "d1")]), Reply(text="fresh answer")])
    graph = create_agent(
        model, tools=[delete_file], middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_file": True})]
    )
    async with AcpTestClient.connect(create_acp_agent(graph, store="memory"), permission_answers=["cancelled"]) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("delete", session_id=sid)
        second = await c.prompt("never mind, say hi", session_id=sid)
    assert first.stop_reason == "cancelled"
    assert second.stop_reason == "end_turn"
    assert second.text == "fresh answer"


async def test_graph_factory_gets_the_chosen_model() -> None:
    from acpkit_core.config import ModelOption
    from langchain_acp import SessionContext

    built: list[str | None] = []

    def factory(ctx: SessionContext) -> Any:
        built.append(ctx.model_id)
        return create_agent(FakeChatModel(script=[Reply(text=f"model {ctx.model_id}")], repeat_last=True), tools=[])

    agent = create_acp_agent(
        graph_factory=factory, store="memory", models=[ModelOption(id="fast"), ModelOption(id="smart")]
    )
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("hi", session_id=sid)
        await c.set_config_option(sid, "model", "smart")
        second = await c.prompt("hi", session_id=sid)
    assert (first.text, second.text) == ("model fast", "model smart")
    assert built == ["fast", "smart"]
