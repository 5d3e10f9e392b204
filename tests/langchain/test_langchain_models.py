"""The model choice on a graph compiled once (`AcpModelMiddleware`), and fallbacks outside `create_agent`."""

from __future__ import annotations

from typing import Any

import pytest
from acp.schema import AgentMessageChunk
from acpkit_core.config import ModelOption
from acpkit_core.errors import UserError
from acpkit_core.testing import AcpTestClient
from fake_model import FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_acp import create_acp_agent
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.graph import END, START, MessagesState, StateGraph

pytestmark = pytest.mark.timeout(60)


class Named(FakeChatModel):
    model_name: str = "fake"


def test_a_fixed_graph_offered_models_needs_the_model_middleware() -> None:
    graph = create_agent(FakeChatModel(), tools=[])
    with pytest.raises(UserError, match="no AcpModelMiddleware"):
        create_acp_agent(graph, store="memory", models=[ModelOption(id="a"), ModelOption(id="b")])
    create_acp_agent(graph, store="memory")  # no models offered: nothing to honour


async def test_with_fallbacks_in_a_hand_built_graph_is_told_as_a_notice() -> None:
    def broken(messages: list[BaseMessage]) -> Reply:
        raise ConnectionError("the provider hung up")

    primary = Named(model_name="primary", script=[broken])
    backup = Named(model_name="backup", script=[Reply(text="from the backup")])
    model = primary.with_fallbacks([backup])

    async def call(state: MessagesState) -> dict[str, Any]:
        answer = await model.ainvoke(state["messages"])
        return {"messages": [AIMessage(content=answer.text)]}

    builder = StateGraph(MessagesState)
    builder.add_node("call", call)
    builder.add_edge(START, "call")
    builder.add_edge("call", END)
    async with AcpTestClient.connect(create_acp_agent(builder.compile(), store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("hi", session_id=sid)
    (notice,) = [u for u in r.updates if isinstance(u, AgentMessageChunk) and u.field_meta]
    assert notice.field_meta == {
        "acpkit": {
            "notice": {
                "severity": "warning",
                "title": "Model fallback",
                "description": "`primary` failed (ConnectionError: the provider hung up); trying `backup`.",
            }
        }
    }
    assert r.text.endswith("from the backup")
