"""`ScriptedChatModel`, langchain-acp's offline chat model: streamed and invoked, tools bound, in a real graph.

What LangChain's `GenericFakeChatModel` cannot do for an agent: stream tool calls (it drops them, or
fails with "No generations found in stream") and `bind_tools`.
"""

from __future__ import annotations

from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import ScriptedChatModel, ScriptedReply, ScriptedToolCall, create_acp_agent
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _script() -> list[ScriptedReply]:
    return [
        ScriptedReply(
            reasoning=["Add ", "them."], text="Adding.", calls=[ScriptedToolCall("add", {"a": 2, "b": 40}, "c1")]
        ),
        ScriptedReply(text=["The sum ", "is 42."], input_tokens=7, output_tokens=3),
    ]


async def test_it_streams_reasoning_text_and_tool_calls_in_pieces() -> None:
    model = ScriptedChatModel(script=_script())
    chunks = [chunk async for chunk in model.astream([HumanMessage("2 + 40?")])]
    assert [c.content for c in chunks[:2]] == [
        [{"type": "reasoning", "reasoning": "Add "}],
        [{"type": "reasoning", "reasoning": "them."}],
    ]
    assert [c.content for c in chunks if isinstance(c.content, str) and c.content] == ["Adding."]
    names = [c.tool_call_chunks[0]["name"] for c in chunks if c.tool_call_chunks]
    assert names[0] == "add" and len(names) >= 2  # the name first, then the arguments in pieces
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert isinstance(total, AIMessageChunk)
    assert total.tool_calls == [{"name": "add", "args": {"a": 2, "b": 40}, "id": "c1", "type": "tool_call"}]
    assert total.usage_metadata is not None and total.usage_metadata["total_tokens"] == 15
    assert total.response_metadata["finish_reason"] == "stop"


def test_invoke_plays_the_same_script_and_then_the_default_answer() -> None:
    model = ScriptedChatModel(script=_script(), default_text="no more")
    first = model.invoke("2 + 40?")
    assert first.tool_calls == [{"name": "add", "args": {"a": 2, "b": 40}, "id": "c1", "type": "tool_call"}]
    assert model.invoke("go on").content == "The sum is 42."
    assert model.invoke("and?").content == "no more"
    assert [m[-1].content for m in model.seen] == ["2 + 40?", "go on", "and?"]


def test_bind_tools_records_the_tools_and_plays_the_same_script() -> None:
    model = ScriptedChatModel(
        script=[ScriptedReply(text="one"), lambda messages: ScriptedReply(text=f"{len(messages)}")]
    )
    bound = model.bind_tools([add])
    assert bound.invoke("x").content == "one"
    assert model.invoke("y").content == "1"  # a function of the messages it received
    assert model.bound_tools == [["add"], []]


async def test_a_create_agent_graph_on_it_runs_the_tool_over_acp() -> None:
    """The whole turn an editor sees: thoughts, the tool call and its result, the streamed answer, usage."""
    graph = create_agent(ScriptedChatModel(script=_script()), tools=[add], name="adder")
    async with AcpTestClient.connect(create_acp_agent(graph, store="memory")) as client:
        await client.initialize()
        sid = await client.new_session()
        result = await client.prompt("2 + 40?", session_id=sid)
    assert result.stop_reason == "end_turn"
    assert result.thoughts == "Add them."
    assert result.text == "Adding.The sum is 42."
    call = result.tool_calls["c1"]
    assert call.status == "completed" and call.title == "add"
    assert "42" in str(call.raw_output)
    assert result.usage is not None and result.usage.input_tokens == 17
