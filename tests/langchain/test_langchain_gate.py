"""The permission and mode gate holds for every graph shape, with no ACP middleware in the graph.

Each case runs three real graphs served by `create_acp_agent` over a real ACP connection: a plain
`create_agent` graph, a hand-written `StateGraph` with a `ToolNode`, and a DeepAgents graph. The
tool `delete_file` counts its runs, so "never ran" is checked on the tool itself, next to the
exact tool-call updates and permission requests the client received.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from acpkit_core.permissions import STANDARD_MODES, PermissionPolicy
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient
from deepagents import create_deep_agent
from langchain.agents import create_agent
from langchain_acp import create_acp_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from lc_helpers import Call, FakeChatModel, Reply

pytestmark = pytest.mark.timeout(30)

RUNS: list[str] = []


@tool
def delete_file(path: str) -> str:
    """Delete a file (pretend)."""
    RUNS.append(path)
    return f"deleted {path}"


def plain(model: FakeChatModel, tools: list[BaseTool]) -> Any:
    return create_agent(model, tools=tools)


def hand_written(model: FakeChatModel, tools: list[BaseTool]) -> Any:
    bound = model.bind_tools(tools)

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    builder.add_edge("agent", END)
    return builder.compile()


def deep(model: FakeChatModel, tools: list[BaseTool]) -> Any:
    return create_deep_agent(model=model, tools=tools)


SHAPES: dict[str, Callable[[FakeChatModel, list[BaseTool]], Any]] = {
    "create_agent": plain,
    "StateGraph+ToolNode": hand_written,
    "deepagents": deep,
}


@pytest.fixture(params=list(SHAPES))
def shape(request: pytest.FixtureRequest) -> Callable[[FakeChatModel, list[BaseTool]], Any]:
    RUNS.clear()
    return SHAPES[request.param]


def serve(
    shape: Callable[[FakeChatModel, list[BaseTool]], Any], script: list[Reply], **options: Any
) -> tuple[AcpAgent, FakeChatModel]:
    model = FakeChatModel(script=script)
    options.setdefault("store", "memory")
    return create_acp_agent(shape(model, [delete_file]), **options), model


def delete_then(text: str, call_id: str = "d1") -> list[Reply]:
    return [Reply(calls=[Call("delete_file", {"path": "old.txt"}, call_id)]), Reply(text=text)]


def tool_messages(model: FakeChatModel) -> list[ToolMessage]:
    return [m for m in model.seen[-1] if isinstance(m, ToolMessage)]


ASK = PermissionPolicy(ask=("delete_*",))


async def test_policy_ask_holds_the_call_until_the_user_allows(shape: Any) -> None:
    agent, _ = serve(shape, delete_then("gone"), permission_policy=ASK)
    order: list[str] = []

    def answer(request: Any) -> str:
        order.append(f"asked, runs={len(RUNS)}")
        return "allow_once"

    async with AcpTestClient.connect(agent, permission_answers=answer) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("delete old.txt", session_id=sid)
    assert order == ["asked, runs=0"]
    assert RUNS == ["old.txt"]
    (request,) = r.permission_requests
    assert request.tool_call.tool_call_id == "d1"
    assert request.tool_call.kind == "delete"
    assert r.tool_calls["d1"].statuses == ["pending", "in_progress", "completed"]
    assert r.text == "gone" and r.stop_reason == "end_turn"


async def test_policy_ask_rejected_never_runs(shape: Any) -> None:
    agent, model = serve(shape, delete_then("kept"), permission_policy=ASK)
    async with AcpTestClient.connect(agent, permission_answers=["reject_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("delete old.txt", session_id=sid)
    assert RUNS == []
    assert len(r.permission_requests) == 1
    assert r.tool_calls["d1"].statuses == ["pending", "failed"]
    (message,) = tool_messages(model)
    assert message.status == "error"
    assert message.content == "The user rejected the call to `delete_file`; do not retry it unless asked."
    assert r.text == "kept"


async def test_policy_deny_never_asks_and_never_runs(shape: Any) -> None:
    agent, model = serve(shape, delete_then("refused"), permission_policy=PermissionPolicy(deny=("delete_*",)))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("delete old.txt", session_id=sid)
    assert RUNS == []
    assert r.permission_requests == []
    assert r.tool_calls["d1"].statuses == ["pending", "failed"]
    (message,) = tool_messages(model)
    assert message.content == "The agent's permission policy does not allow `delete_file`; do not retry it."


async def test_readonly_mode_never_runs_a_delete(shape: Any) -> None:
    agent, model = serve(shape, delete_then("read only"), modes=STANDARD_MODES)
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.set_mode(sid, "readonly")
        r = await c.prompt("delete old.txt", session_id=sid)
    assert RUNS == []
    assert r.permission_requests == []
    assert r.tool_calls["d1"].statuses == ["pending", "failed"]
    (message,) = tool_messages(model)  # the refusal names what refused: the mode, not the user or the editor
    assert message.content == (
        "The session's mode `readonly` (Read-only) does not allow `delete_file` (a tool that changes things: "
        "delete); do not retry it unless the user switches to another mode."
    )


@pytest.mark.parametrize("mode", ["interactive", "planning"])
async def test_interactive_asks_and_planning_refuses(shape: Any, mode: str) -> None:
    agent, _ = serve(shape, delete_then("ok"), modes=STANDARD_MODES)
    async with AcpTestClient.connect(agent, permission_answers=["allow_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.set_mode(sid, mode)
        r = await c.prompt("delete old.txt", session_id=sid)
    if mode == "interactive":
        assert [p.tool_call.tool_call_id for p in r.permission_requests] == ["d1"]
        assert RUNS == ["old.txt"]
    else:
        assert r.permission_requests == []
        assert RUNS == []
        assert r.tool_calls["d1"].statuses == ["pending", "failed"]


@pytest.mark.parametrize("answer", ["allow_always", "reject_always"])
async def test_remembered_answers_apply_to_the_next_turns(shape: Any, answer: str) -> None:
    script = [*delete_then("one", "d1"), *delete_then("two", "d2")]
    agent, _ = serve(shape, script, permission_policy=ASK)
    async with AcpTestClient.connect(agent, permission_answers=[answer]) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("delete", session_id=sid)
        second = await c.prompt("delete again", session_id=sid)
    assert len(first.permission_requests) == 1
    assert second.permission_requests == []
    if answer == "allow_always":
        assert RUNS == ["old.txt", "old.txt"]
        assert second.tool_calls["d2"].statuses[-1] == "completed"
    else:
        assert RUNS == []
        assert second.tool_calls["d2"].statuses == ["pending", "failed"]


async def test_cancel_during_the_question_ends_cancelled_and_never_runs(shape: Any) -> None:
    never = asyncio.Event()

    async def wait_forever(_: Any) -> str:
        await never.wait()
        return "allow_once"

    agent, _ = serve(shape, delete_then("late"), permission_policy=ASK)
    async with AcpTestClient.connect(agent, permission_answers=wait_forever) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.create_task(c.prompt("delete", session_id=sid))
        while not c.permission_requests:
            await asyncio.sleep(0.01)
        await c.cancel(sid)
        r = await task
    assert r.stop_reason == "cancelled"
    assert RUNS == []
    assert r.tool_calls["d1"].statuses == ["pending", "failed"]


async def test_edit_hook_replaces_the_arguments_of_an_approved_call(shape: Any) -> None:
    model = FakeChatModel(script=delete_then("edited"))

    def edit(name: str, args: Any, decision: Any) -> dict[str, Any]:
        return {"path": "safe.txt"}

    agent = create_acp_agent(shape(model, [delete_file]), store="memory", permission_policy=ASK, edit_tool_call=edit)
    async with AcpTestClient.connect(agent, permission_answers=["allow_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("delete", session_id=sid)
    assert RUNS == ["safe.txt"]


async def test_a_tool_called_outside_any_tool_node_is_gated_too() -> None:
    """A custom node that calls a tool itself: the callback gate refuses it before its body runs."""
    RUNS.clear()

    async def node(state: MessagesState) -> dict[str, Any]:
        try:
            result = await delete_file.ainvoke(
                {"name": "delete_file", "args": {"path": "x"}, "id": "n1", "type": "tool_call"}
            )
        except Exception as error:
            return {"messages": [AIMessage(content=f"refused: {error}")]}
        return {"messages": [AIMessage(content=str(result.content))]}

    builder = StateGraph(MessagesState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    agent = create_acp_agent(builder.compile(), store="memory", permission_policy=PermissionPolicy(deny=("delete_*",)))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
    assert RUNS == []
    assert r.tool_calls["n1"].statuses == ["pending", "failed"]
