"""The runner takes a run's messages from its callbacks (`MessageTap`), wherever the run makes them:
in the turn's own task, in a worker thread (a sync node), in an event loop of the run's own
(`asyncio.run` inside a sync node). Every message reaches the client once, in the order made."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict, cast

from acp.schema import AgentMessageChunk
from acpkit_core.testing import AcpTestClient
from fake_model import FakeChatModel, Reply
from langchain_acp import create_acp_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, AnyMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
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


class SlowSyncModel(BaseChatModel):
    """Streams `n` chunks from its sync `_stream`, 20 ms apart (in the sync node's worker thread)."""

    n: int = 60

    @property
    def _llm_type(self) -> str:
        return "slow-sync-test"

    def _generate(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="x" * self.n))])

    def _stream(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        for _ in range(self.n):
            time.sleep(0.02)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content="x"))
            if run_manager is not None:
                run_manager.on_llm_new_token("x", chunk=chunk)
            yield chunk


class CancelAtFirstChunk(AcpTestClient):
    cancelled = False

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        if isinstance(update, AgentMessageChunk) and not self.cancelled:
            self.cancelled = True
            await self.cancel(session_id)


async def test_a_cancelled_turns_sync_node_streams_on_in_its_thread_and_none_of_it_reaches_the_client() -> None:
    model = SlowSyncModel()

    def in_a_thread(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}  # streamed: a handler of the run is a streaming one

    builder = StateGraph(State)
    builder.add_node("thread", in_a_thread)
    builder.add_edge(START, "thread")
    builder.add_edge("thread", END)
    agent = create_acp_agent(builder.compile(), store="memory", coalesce_ms=0)
    async with CancelAtFirstChunk.connect(agent) as client:
        c = cast(CancelAtFirstChunk, client)
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("stream", session_id=sid)
        assert r.stop_reason == "cancelled"
        at_the_answer = len(c.updates[sid])
        await asyncio.sleep(1.5)  # the thread streams its last chunks meanwhile (LangGraph cannot stop it)
        assert len(c.updates[sid]) == at_the_answer
        assert 1 <= r.text.count("x") < model.n
