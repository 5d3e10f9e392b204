"""The runner takes a run's messages from its callbacks (`MessageTap`), wherever the run makes them:
in the turn's own task, in a worker thread (a sync node), in an event loop of the run's own
(`asyncio.run` inside a sync node). Every message reaches the client once, in the order made."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, TypedDict

from acp.schema import AgentMessageChunk
from acpkit_core.testing import AcpTestClient
from fake_model import FakeChatModel, Reply
from langchain_acp import create_acp_agent
from langchain_core.messages import AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def three_places_graph() -> Any:
    model = FakeChatModel(script=[Reply(text="one "), Reply(text=["two", " three "]), Reply(text=["four", " five"])])

    def in_a_thread(state: State) -> dict[str, Any]:  # LangGraph runs a sync node in a worker thread
        return {"messages": [model.invoke(state["messages"])]}  # answered in one piece

    def on_a_loop_of_its_own(state: State) -> dict[str, Any]:
        return {"messages": [asyncio.run(model.ainvoke(state["messages"]))]}  # streamed there

    async def on_the_turns_loop(state: State) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("thread", in_a_thread)
    builder.add_node("own_loop", on_a_loop_of_its_own)
    builder.add_node("turn_loop", on_the_turns_loop)
    builder.add_edge(START, "thread")
    builder.add_edge("thread", "own_loop")
    builder.add_edge("own_loop", "turn_loop")
    builder.add_edge("turn_loop", END)
    return builder.compile()


async def test_messages_made_in_a_thread_a_loop_of_the_runs_own_and_the_turns_task_arrive_once_in_order() -> None:
    agent = create_acp_agent(three_places_graph(), store="memory", coalesce_ms=0)
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("count", session_id=sid)
        chunks = [u for u in r.updates if isinstance(u, AgentMessageChunk)]
        assert [getattr(u.content, "text", None) for u in chunks] == ["one ", "two", " three ", "four", " five"]
        assert len({u.message_id for u in chunks}) == 3  # one message per model call
        assert r.stop_reason == "end_turn"
        again = await c.prompt("again", session_id=sid)  # the next turn: nothing left over from this one
        assert again.text == "done" * 3
