"""`McpTools`: the public MCP loader, used by hand-built servers and by the runner alike."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer, ToolCallProgress
from acpkit_core.runner.types import StdioMcpServer
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import (
    AcpMcpMiddleware,
    AcpToolMiddleware,
    McpServerError,
    McpServerFailure,
    McpTools,
    bind_connection,
    create_acp_agent,
)
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from lc_helpers import Call, FakeChatModel, Reply, read_file
from lc_mcp_media_server import PDF, PNG, WAV

pytestmark = pytest.mark.timeout(60)

HERE = Path(__file__).parent
MEDIA_SCRIPT = str(HERE / "lc_mcp_media_server.py")
NOTES = StdioMcpServer(name="notes", command=sys.executable, args=(str(HERE / "lc_mcp_server.py"),))
GHOST = StdioMcpServer(name="ghost", command="/nonexistent/mcp-server")
QUITTER = StdioMcpServer(name="quitter", command=sys.executable, args=("-c", "raise SystemExit(3)"))


class Recorder:
    """Stands in for an ACP client connection."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_a_server_that_fails_to_start_raises_an_error_naming_it_and_why() -> None:
    mcp = McpTools([GHOST, QUITTER])
    with pytest.raises(McpServerError) as info:
        await mcp.start()
    ghost, quitter = info.value.failures
    assert (ghost.server, ghost.transport, quitter.server) == ("ghost", "stdio", "quitter")
    assert ghost.reason == "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/mcp-server'"
    assert quitter.reason == "MCPError: Connection closed"
    assert str(info.value) == (
        f"MCP server 'ghost' (stdio) failed to start: {ghost.reason}; "
        "MCP server 'quitter' (stdio) failed to start: MCPError: Connection closed"
    )


async def test_report_mode_keeps_the_other_servers_and_says_what_failed() -> None:
    async with McpTools([GHOST, NOTES, QUITTER], on_error="report") as mcp:
        assert [t.name for t in mcp.tools] == ["shout"]
        assert await mcp.tools[0].ainvoke({"text": "hi"}) == "HI!"
    assert [(f.server, f.transport) for f in mcp.failures] == [("ghost", "stdio"), ("quitter", "stdio")]
    assert mcp.failures[1].reason == "MCPError: Connection closed"
    assert mcp.notice() == (
        f"{mcp.failures[0].message}. Its tools are not available in this session.\n"
        "MCP server 'quitter' (stdio) failed to start: MCPError: Connection closed. "
        "Its tools are not available in this session."
    )
    assert isinstance(mcp.failures[0], McpServerFailure)


@pytest.fixture
async def http_media() -> AsyncIterator[Any]:
    """Start the media server over HTTP or SSE (one process per test) and give a way to describe it."""
    processes: list[asyncio.subprocess.Process] = []

    async def start(transport: str) -> str:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        process = await asyncio.create_subprocess_exec(
            sys.executable, MEDIA_SCRIPT, transport, str(port), stderr=asyncio.subprocess.DEVNULL
        )
        processes.append(process)
        for _ in range(200):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        return f"http://127.0.0.1:{port}"

    yield start
    for process in processes:
        process.terminate()
        await process.wait()


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_streamable_http_and_sse_servers_connect_with_their_headers(transport: str, http_media: Any) -> None:
    base = await http_media(transport)
    headers = [HttpHeader(name="x-test", value="from-acp")]
    server = (
        HttpMcpServer(type="http", name="media", url=f"{base}/mcp", headers=headers)
        if transport == "http"
        else SseMcpServer(type="sse", name="media", url=f"{base}/sse", headers=headers)
    )
    async with McpTools([server]) as mcp:
        tools = {t.name: t for t in mcp.tools}
        assert await tools["header"].ainvoke({}) == "from-acp"
        assert (await tools["swatch"].ainvoke({"color": "red"}))[1]["mime_type"] == "image/png"


async def test_a_hand_built_server_offers_loaded_tools_with_media_and_the_server_ends_with_the_block() -> None:
    model = FakeChatModel(script=[Reply(calls=[Call("swatch", {"color": "teal"}, "s1")]), Reply(text="seen")])
    graph = create_agent(
        model, tools=[], middleware=[AcpMcpMiddleware(), AcpToolMiddleware()], checkpointer=InMemorySaver()
    )
    conn = Recorder()
    # The SDK's own model, exactly as a hand-built server's `new_session` receives it.
    env = [EnvVariable(name="MEDIA_NOTE", value="1")]
    media = McpServerStdio(name="media", command=sys.executable, args=[MEDIA_SCRIPT], env=env)
    async with McpTools([media]) as mcp, bind_connection(conn, "s1", mcp_tools=mcp.tools):
        assert mcp.failures == [] and mcp.notice() is None
        out = await graph.ainvoke({"messages": [HumanMessage(content="go")]}, {"configurable": {"thread_id": "t"}})
        tools = {t.name: t for t in mcp.tools}
        chime = await tools["chime"].ainvoke({})
        manual = await tools["manual"].ainvoke({})
        broken = await tools["broken"].ainvoke({"reason": "disk"})
        pid = int(await tools["pid"].ainvoke({}))
    assert sorted(model.bound_tools[0]) == ["broken", "chime", "header", "manual", "pid", "swatch"]
    (result,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert result.content == [
        {"type": "text", "text": "swatch of teal"},
        {"type": "image", "base64": b64(PNG), "mime_type": "image/png"},
    ]
    (done,) = [u for u in conn.updates if isinstance(u, ToolCallProgress) and u.status == "completed"]
    shown = [c.content for c in done.content or []]
    assert [b.type for b in shown] == ["text", "image"]
    assert shown[1].data == b64(PNG) and shown[1].mime_type == "image/png"
    assert chime == [{"type": "audio", "base64": b64(WAV), "mime_type": "audio/wav"}]
    assert manual == [{"type": "file", "base64": b64(PDF), "mime_type": "application/pdf"}]
    assert broken.endswith("broken: disk")  # an MCP error result is the tool's error, shown to the model
    with pytest.raises(ProcessLookupError):  # leaving the block ended the subprocess
        os.kill(pid, 0)


async def test_served_sessions_use_the_same_loader_and_tell_the_user_which_server_failed() -> None:
    model = FakeChatModel(
        script=[Reply(calls=[Call("shout", {"text": "hi"}, "m1")]), Reply(text="shouted"), Reply(text="again")]
    )
    graph = create_agent(model, tools=[read_file], middleware=[AcpMcpMiddleware()])
    async with AcpTestClient.connect(create_acp_agent(graph, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session(mcp_servers=[GHOST, NOTES])
        first = await c.prompt("shout hi", session_id=sid)
        second = await c.prompt("again", session_id=sid)
    assert model.bound_tools[0] == ["read_file", "shout"]  # the good server's tools are there
    assert first.tool_calls["m1"].statuses == ["pending", "in_progress", "completed"]
    notice = next(u for u in first.updates if u.session_update == "agent_message_chunk")  # before the reply
    assert notice.content.text.startswith(
        "MCP server 'ghost' (stdio) failed to start: FileNotFoundError: [Errno 2] No such file or directory"
    )
    assert notice.content.text.endswith("Its tools are not available in this session.")
    assert first.text == notice.content.text + "shouted"
    assert second.text == "again"  # said once per session
