"""The middleware and handler bound to a connection directly (no ACP server): what they send."""

from __future__ import annotations

from typing import Any

import pytest
from acp.schema import AgentMessageChunk, CurrentModeUpdate, ToolCallProgress, ToolCallStart
from langchain.agents import create_agent
from langchain_acp import AcpCallbackHandler, AcpModeMiddleware, AcpToolMiddleware, bind_connection
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from lc_helpers import Call, FakeChatModel, Reply, delete_file

pytestmark = pytest.mark.timeout(30)


class Recorder:
    """Stands in for an ACP client connection: records `session/update` notifications."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))


async def test_bound_middleware_and_handler_report_to_the_connection_and_modes_change() -> None:
    modes = AcpModeMiddleware()
    model = FakeChatModel(
        script=[
            Reply(text="hi", calls=[Call("delete_file", {"path": "x"}, "d1")]),
            Reply(text="bye"),
            Reply(text="again"),
        ]
    )
    graph = create_agent(
        model, tools=[delete_file], middleware=[modes, AcpToolMiddleware()], checkpointer=InMemorySaver()
    )
    conn = Recorder()
    config: Any = {"configurable": {"thread_id": "t"}, "callbacks": [AcpCallbackHandler()]}
    with bind_connection(conn, "s1", cwd="/w"):
        await graph.ainvoke({"messages": [HumanMessage(content="go")]}, config)
        assert model.bound_tools[-1] == ["delete_file"]
        modes.set_mode("t", "readonly")
        await graph.ainvoke({"messages": [HumanMessage(content="again")]}, config)
    updates = [u for sid, u in conn.updates if sid == "s1"]
    assert len(updates) == len(conn.updates)
    text = "".join(u.content.text for u in updates if isinstance(u, AgentMessageChunk))
    assert text == "hibyeagain"
    starts = [u for u in updates if isinstance(u, ToolCallStart)]
    assert [(s.tool_call_id, s.kind) for s in starts] == [("d1", "delete")]
    statuses = [u.status for u in updates if isinstance(u, ToolCallProgress) and u.status]
    assert statuses == ["in_progress", "completed"]
    assert [u.current_mode_id for u in updates if isinstance(u, CurrentModeUpdate)] == ["readonly"]
    assert model.bound_tools[-1] == []  # readonly hides delete_file


async def test_a_bound_connection_presents_tool_calls(tmp_path: Any) -> None:
    from acp.schema import FileEditToolCallContent
    from acpkit_core.runner.tool_presets import TOOL_PRESETS
    from lc_helpers import write_file

    (tmp_path / "a.txt").write_text("old\n")
    model = FakeChatModel(
        script=[Reply(calls=[Call("write_file", {"path": "a.txt", "content": "new\n"}, "w1")]), Reply()]
    )
    graph = create_agent(model, tools=[write_file], middleware=[AcpToolMiddleware()])
    conn = Recorder()
    async with bind_connection(conn, "s1", cwd=str(tmp_path), tool_presentation=TOOL_PRESETS):
        await graph.ainvoke({"messages": [HumanMessage(content="go")]}, {"callbacks": [AcpCallbackHandler()]})
    updates = [u for _, u in conn.updates if isinstance(u, ToolCallStart | ToolCallProgress)]
    diff = FileEditToolCallContent(type="diff", path=str(tmp_path / "a.txt"), old_text="old\n", new_text="new\n")
    shown = next(u for u in updates if u.content)
    assert shown.content == [diff] and shown.status != "in_progress"  # shown before the tool ran
    assert [u.kind for u in updates if u.kind] == ["edit"]


async def test_a_bound_connection_s_kind_overrides_reach_the_mode_filter() -> None:
    from acpkit_core.runner.tool_presentation import ToolPresentation

    modes = AcpModeMiddleware(default_mode="readonly")
    model = FakeChatModel(script=[Reply(text="ok")])
    graph = create_agent(model, tools=[delete_file], middleware=[modes])
    presentation = {"delete_*": ToolPresentation(kind="read")}
    async with bind_connection(Recorder(), "s1", tool_presentation=presentation):
        await graph.ainvoke({"messages": [HumanMessage(content="go")]})
    assert model.bound_tools[-1] == ["delete_file"]  # `read` by its presentation: visible in readonly
