"""The editor's MCP servers reaching a graph compiled once, through `AcpMcpMiddleware`."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import ToolCallStart
from acpkit_core.permissions import STANDARD_MODES
from acpkit_core.runner.types import StdioMcpServer
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import AcpMcpMiddleware, AcpModeMiddleware, bind_connection, create_acp_agent
from langchain_acp._mcp import tool_result_content
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from lc_helpers import Call, FakeChatModel, Reply, read_file
from lc_mcp_media_server import PNG
from mcp import types

pytestmark = pytest.mark.timeout(60)

HERE = Path(__file__).parent
NOTES = StdioMcpServer(name="notes", command=sys.executable, args=(str(HERE / "lc_mcp_server.py"),))


def shouting_graph(model: FakeChatModel, *middleware: Any) -> Any:
    return create_agent(model, tools=[read_file], middleware=[AcpMcpMiddleware(), *middleware])


async def test_a_static_graph_gets_each_sessions_mcp_tools_and_runs_them() -> None:
    model = FakeChatModel(
        script=[Reply(calls=[Call("shout", {"text": "hi"}, "m1")]), Reply(text="shouted"), Reply(text="plain")]
    )
    agent = create_acp_agent(shouting_graph(model), store="memory")
    async with AcpTestClient.connect(agent) as c:
        init = await c.initialize()
        with_mcp = await c.new_session(mcp_servers=[NOTES])
        r = await c.prompt("shout hi", session_id=with_mcp)
        without = await c.new_session()
        plain = await c.prompt("hello", session_id=without)
    assert init.agent_capabilities is not None
    mcp = init.agent_capabilities.mcp_capabilities
    assert mcp is not None and mcp.http and mcp.sse  # connected for real (stdio, HTTP and SSE)
    assert model.bound_tools == [["read_file", "shout"], ["read_file", "shout"], ["read_file"]]
    (start,) = [u for u in r.updates if isinstance(u, ToolCallStart)]
    assert (start.tool_call_id, start.title, start.status) == ("m1", "shout", "pending")
    assert r.tool_calls["m1"].statuses == ["pending", "in_progress", "completed"]
    assert [block.content.text for block in r.tool_calls["m1"].content] == ["HI!"]
    (result,) = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert (result.tool_call_id, result.content) == ("m1", "HI!")
    assert r.text == "shouted" and r.stop_reason == "end_turn"
    assert plain.text == "plain"


async def test_the_mode_filters_mcp_tools_like_the_graphs_own() -> None:
    model = FakeChatModel(script=[Reply(text="looked")], repeat_last=True)
    agent = create_acp_agent(shouting_graph(model, AcpModeMiddleware()), store="memory", modes=STANDARD_MODES)
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session(mcp_servers=[NOTES])
        await c.prompt("look", session_id=sid)
        await c.set_mode(sid, "readonly")
        await c.prompt("look again", session_id=sid)
    assert model.bound_tools == [["read_file", "shout"], ["read_file"]]  # `shout` is kind other: not read-only


async def test_a_graph_without_the_middleware_does_not_advertise_mcp_http() -> None:
    agent = create_acp_agent(create_agent(FakeChatModel(), tools=[read_file]), store="memory")
    async with AcpTestClient.connect(agent) as c:
        init = await c.initialize()
    mcp = init.agent_capabilities.mcp_capabilities if init.agent_capabilities else None
    assert mcp is None or not (mcp.http or mcp.sse)


@tool
def whisper(text: str) -> str:
    """Lower-case the text."""
    return text.lower()


class Recorder:
    """Stands in for an ACP client connection."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def test_hand_built_servers_pass_the_sessions_tools_through_bind_connection() -> None:
    model = FakeChatModel(script=[Reply(calls=[Call("whisper", {"text": "HEY"}, "w1")]), Reply(text="ok")])
    graph = create_agent(model, tools=[], middleware=[AcpMcpMiddleware()], checkpointer=InMemorySaver())
    conn = Recorder()
    with bind_connection(conn, "s1", mcp_tools=[whisper]):
        out = await graph.ainvoke({"messages": [HumanMessage(content="go")]}, {"configurable": {"thread_id": "t"}})
    assert model.bound_tools[0] == ["whisper"]
    (result,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert result.content == "hey"
    # Outside any binding the middleware offers only the tools it was given.
    alone = FakeChatModel(script=[Reply(text="x")])
    plain = create_agent(alone, tools=[], middleware=[AcpMcpMiddleware([whisper])])
    await plain.ainvoke({"messages": [HumanMessage(content="go")]})
    assert alone.bound_tools == [["whisper"]]


MEDIA = StdioMcpServer(name="media", command=sys.executable, args=(str(HERE / "lc_mcp_media_server.py"),))


async def test_mcp_images_reach_the_model_and_the_editor_and_errors_fail_the_call() -> None:
    model = FakeChatModel(
        script=[
            Reply(calls=[Call("swatch", {"color": "teal"}, "s1"), Call("broken", {"reason": "disk"}, "b1")]),
            Reply(text="seen"),
        ]
    )
    agent = create_acp_agent(shouting_graph(model), store="memory")
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session(mcp_servers=[MEDIA])
        r = await c.prompt("show me teal", session_id=sid)
    results = {m.tool_call_id: m for m in model.seen[1] if isinstance(m, ToolMessage)}
    png = base64.b64encode(PNG).decode()
    assert results["s1"].content == [
        {"type": "text", "text": "swatch of teal"},
        {"type": "image", "base64": png, "mime_type": "image/png"},
    ]
    swatch = r.tool_calls["s1"]
    assert swatch.statuses == ["pending", "in_progress", "completed"]
    shown = [block.content for block in swatch.content]
    assert [(b.type, getattr(b, "text", None)) for b in shown] == [("text", "swatch of teal"), ("image", None)]
    assert shown[1].data == png and shown[1].mime_type == "image/png"
    assert results["b1"].status == "error" and "broken: disk" in str(results["b1"].content)
    assert r.tool_calls["b1"].statuses == ["pending", "in_progress", "failed"]
    assert r.text == "seen"


def test_mcp_results_become_text_or_content_blocks() -> None:
    def result(*content: object, structured: object = None) -> types.CallToolResult:
        return types.CallToolResult(content=list(content), structured_content=structured)  # type: ignore[arg-type]

    text = types.TextContent(type="text", text="a")
    assert tool_result_content(result(text, types.TextContent(type="text", text="b"))) == "a\nb"
    assert tool_result_content(result(structured={"n": 1})) == '{"n": 1}'
    link = types.ResourceLink(type="resource_link", name="spec", uri="file:///spec.md")
    doc = types.EmbeddedResource(
        type="resource", resource=types.TextResourceContents(uri="file:///a.txt", text="inside")
    )
    assert tool_result_content(result(link, doc)) == "spec: file:///spec.md\ninside"
    blob = types.EmbeddedResource(
        type="resource",
        resource=types.BlobResourceContents(uri="file:///a.pdf", blob="JVBERi0=", mime_type="application/pdf"),
    )
    audio = types.AudioContent(type="audio", data="UklGRg==", mime_type="audio/wav")
    assert tool_result_content(result(text, blob, audio)) == [
        {"type": "text", "text": "a"},
        {"type": "file", "base64": "JVBERi0=", "mime_type": "application/pdf"},
        {"type": "audio", "base64": "UklGRg==", "mime_type": "audio/wav"},
    ]
