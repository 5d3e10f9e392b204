"""MCP over ACP (unstable) over real stdio, for both adapters: a real MCP server the test client serves
through the ACP connection, connected by each adapter's MCP loader like a stdio server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp import RequestError
from acpkit_core.runner.types import StdioMcpServer
from acpkit_core.testing import AcpTestClient
from editor_mcp import editor_words
from mcp.server import MCPServer

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

AGENTS = Path(__file__).parent / "agents" / "mcp_acp_agents.py"
NOTES_SCRIPT = Path(__file__).parents[1] / "pydantic" / "pyd_mcp_server.py"


def in_process_server() -> MCPServer:
    """A real MCP server living in the test client's process (the editor's own tools)."""
    return editor_words()


@pytest.mark.parametrize("which", ["pydantic", "langchain"])
async def test_the_agent_calls_a_tool_of_an_mcp_server_the_client_serves_over_acp(which: str) -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), which, unstable=["mcpOverAcp"]) as c:
        init = await c.initialize()
        entry = c.serve_mcp(in_process_server(), name="words")
        sid = await c.new_session(mcp_servers=[entry])
        r = await c.prompt("look up ketchup", session_id=sid)
        listed = await c.prompt("/mcp", session_id=sid)
        (connection,) = c.mcp.connections.values()
        open_before_close = [x.connection_id for x in c.mcp.open]
        await c.close_session(sid)
    assert init.agent_capabilities is not None and init.agent_capabilities.mcp_capabilities is not None
    assert init.agent_capabilities.mcp_capabilities.acp is True
    assert r.stop_reason == "end_turn"
    assert r.tool_calls["m1"].statuses == ["pending", "in_progress", "completed"]
    assert r.text == "The MCP server said: ketchup: a word the editor knows"
    assert listed.text == (
        "MCP servers of this session: 1, 1 connected.\n\n"
        f"- `words` (acp: served by the client over ACP, id {entry.server_id}) — connected, 1 tool: `lookup_word`"
    )
    # What crossed the ACP connection: one connection to the server, the MCP handshake and the call.
    assert connection.server_id == entry.server_id
    assert connection.methods[0] == "initialize" or connection.methods[0] == "server/discover"
    assert "tools/call" in connection.methods and "tools/list" in connection.methods
    # The server's log line during the call went the other way: client → agent, as a notification.
    logged = [m for d, m in c.wire if d == "sent" and m.get("method") == "mcp/message"]
    assert [(m["params"]["method"], "id" in m) for m in logged] == [("notifications/message", False)]
    assert logged[0]["params"]["params"]["data"] == "looking up ketchup"
    assert open_before_close == [connection.connection_id]
    assert connection.disconnected  # `session/close` closed the MCP session: `mcp/disconnect` was sent
    sent = [m for d, m in c.wire if d == "received" and m.get("method") == "mcp/connect"]
    assert [m["params"] for m in sent] == [{"serverId": entry.server_id}]
    assert any(
        d == "received"
        and m.get("method") == "mcp/message"
        and m["params"].get("method") == "tools/call"
        and m["params"]["params"]["arguments"] == {"word": "ketchup"}
        for d, m in c.wire
    )


@pytest.mark.parametrize("which", ["pydantic", "langchain"])
async def test_a_subprocess_mcp_server_bridged_by_the_client(which: str) -> None:
    served = StdioMcpServer(name="notes", command=sys.executable, args=(str(NOTES_SCRIPT),))
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), which, unstable=True) as c:
        await c.initialize()
        sid = await c.new_session(mcp_servers=[c.serve_mcp(served)])
        r = await c.prompt("look up ketchup", session_id=sid)
    assert r.text == "The MCP server said: ketchup: a word the MCP server knows"


@pytest.mark.parametrize("which", ["pydantic", "langchain"])
async def test_a_plain_client_is_not_offered_mcp_over_acp_and_its_acp_servers_are_refused(which: str) -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), which) as c:
        init = await c.initialize()
        entry = c.serve_mcp(in_process_server(), name="words")
        with pytest.raises(RequestError) as refused:
            await c.new_session(mcp_servers=[entry])
        with pytest.raises(RequestError) as unknown:
            await c._raw("mcp/message", {"connectionId": "conn-1", "method": "ping"})  # pyright: ignore[reportPrivateUsage]
    assert init.agent_capabilities is not None and init.agent_capabilities.mcp_capabilities is not None
    assert not init.agent_capabilities.mcp_capabilities.acp
    assert refused.value.code == -32602
    assert refused.value.data == {
        "mcpServers[0]": "'words' has type acp (MCP over ACP): this agent accepts it only from a client that "
        "opted into the unstable surface mcpOverAcp (it then answers mcpCapabilities.acp: true)"
    }
    assert unknown.value.code == -32601
    assert c.mcp.connections == {}


@pytest.mark.parametrize("which", ["pydantic", "langchain"])
async def test_a_server_the_client_does_not_serve_fails_like_a_stdio_server_that_did_not_start(which: str) -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), which, unstable=["mcpOverAcp"]) as c:
        await c.initialize()
        entry = c.serve_mcp(in_process_server(), name="words")
        del c.mcp.servers[entry.server_id]  # the editor no longer serves it
        sid = await c.new_session(mcp_servers=[entry])
        listed = await c.prompt("/mcp", session_id=sid)
    head, line = listed.text.split("\n\n")
    assert head == "MCP servers of this session: 1, 0 connected."
    sid_ = entry.server_id
    assert line.startswith(f"- `words` (acp: served by the client over ACP, id {sid_}) — failed. It did not start: ")
    assert line.endswith(
        f"the client refused mcp/connect for '{sid_}': "
        f"Invalid params ({{'serverId': \"no MCP server '{sid_}' is served here\"}})"
    )
