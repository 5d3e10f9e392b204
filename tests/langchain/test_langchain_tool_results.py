"""`AcpToolMiddleware(emit_tool_results=False)`: the final tool-call update carries the status only."""

from __future__ import annotations

from typing import Any

import pytest
from acp.schema import ToolCallProgress
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import AcpCallbackHandler, AcpToolMiddleware, bind_connection
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from lc_helpers import Call, FakeChatModel, Reply, agent_for

pytestmark = pytest.mark.timeout(30)


@tool
def lookup_secret(name: str) -> str:
    """Returns a secret value."""
    return f"secret value of {name}"


SCRIPT = [Reply(calls=[Call("lookup_secret", {"name": "db"}, "k1")]), Reply(text="I have it.")]


def _final(updates: list[Any], tool_call_id: str) -> ToolCallProgress:
    ends = [
        u
        for u in updates
        if isinstance(u, ToolCallProgress) and u.tool_call_id == tool_call_id and u.status in ("completed", "failed")
    ]
    assert len(ends) == 1
    return ends[0]


@pytest.mark.parametrize("emit", [True, False])
async def test_served_graph_leaves_results_out_when_asked(emit: bool) -> None:
    agent, model = agent_for(list(SCRIPT), [lookup_secret], middleware=[AcpToolMiddleware(emit_tool_results=emit)])
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("get the db secret", session_id=sid)
    assert r.text == "I have it."
    assert r.tool_calls["k1"].statuses == ["pending", "in_progress", "completed"]
    final = _final(r.updates, "k1")
    if emit:
        assert final.raw_output == {"output": "secret value of db"}
        assert final.content is not None and final.content[0].content.text == "secret value of db"  # type: ignore[union-attr]
    else:
        assert (final.content, final.raw_output) == (None, None)
        assert "secret value" not in str([u.model_dump() for u in r.updates])
    # the model still got the result either way
    (result,) = [m for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert result.content == "secret value of db"


class Recorder:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def test_hand_built_with_the_callback_handler_too_leaves_results_out() -> None:
    """The handler reports the same call: it must not send the result the middleware leaves out."""
    graph = create_agent(
        FakeChatModel(script=list(SCRIPT)),
        tools=[lookup_secret],
        middleware=[AcpToolMiddleware(emit_tool_results=False)],
    )
    conn = Recorder()
    async with bind_connection(conn, "s1"):
        await graph.ainvoke({"messages": [HumanMessage(content="go")]}, {"callbacks": AcpCallbackHandler().handlers()})
    final = _final(conn.updates, "k1")
    assert (final.status, final.content, final.raw_output) == ("completed", None, None)
    assert "secret value" not in str([u.model_dump() for u in conn.updates])
