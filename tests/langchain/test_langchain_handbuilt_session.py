"""`AcpSessionMiddleware` in a hand-built server: `bind_connection` gives the state its session."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_acp import AcpSessionMiddleware, bind_connection
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from lc_helpers import FakeChatModel, Reply


class Recorder:
    """Stands in for an ACP client connection."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def test_bind_connection_puts_the_session_id_in_state_as_when_served() -> None:
    graph = create_agent(
        FakeChatModel(script=[Reply(text="ok")], repeat_last=True),
        tools=[],
        middleware=[AcpSessionMiddleware()],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "thread-7"}}
    async with bind_connection(Recorder(), "sess-42"):
        await graph.ainvoke({"messages": [HumanMessage(content="one")]}, config)
    async with bind_connection(Recorder(), "sess-42"):
        state = await graph.ainvoke({"messages": [HumanMessage(content="two")]}, config)
    assert (state["acp_session_id"], state["acp_thread_id"], state["acp_turn"]) == ("sess-42", "thread-7", 2)
    # Outside any binding the run still counts its turns on the thread, with no session to name.
    alone = await create_agent(
        FakeChatModel(script=[Reply(text="x")]), tools=[], middleware=[AcpSessionMiddleware()]
    ).ainvoke({"messages": [HumanMessage(content="hi")]})
    assert "acp_session_id" not in alone and "acp_turn" not in alone
