"""MCP over ACP where it matters most: a remote agent (`acpkit serve`) reaching an MCP server that
lives with the client, through the one connection it has (WebSocket and Streamable HTTP)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from acp import RequestError
from acpkit_core.remote import RemoteServer, ServeOptions
from acpkit_core.testing import AcpTestClient
from editor_mcp import editor_words
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_a_remote_agent_calls_an_mcp_server_of_the_client(scheme: str, tmp_path: Path) -> None:
    agent = create_acp_agent(Agent(TestModel(), name="remote-mcp"), store=str(tmp_path / "s.sqlite3"))
    async with (
        RemoteServer(agent, ServeOptions(port=0)) as server,
        AcpTestClient.connect_url(server.url.replace("ws://", f"{scheme}://"), unstable=["mcpOverAcp"]) as c,
    ):
        await c.initialize()
        sid = await c.new_session(mcp_servers=[c.serve_mcp(editor_words(), name="words")])
        r = await c.prompt("look something up", session_id=sid)
        await c.close_session(sid)
    assert r.stop_reason == "end_turn"
    assert r.text == '{"lookup_word":"a: a word the editor knows"}'  # TestModel calls the tool with "a"
    (connection,) = c.mcp.connections.values()
    assert "tools/call" in connection.methods and connection.disconnected


async def _offline(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield "offline answer"


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_a_remote_client_cannot_point_the_servers_model_calls_elsewhere(scheme: str, tmp_path: Path) -> None:
    """`providers/set` would let a remote client point the server's calls at any address it reaches: refused."""
    model = FunctionModel(stream_function=_offline, model_name="gpt-4o-mini")
    agent = create_acp_agent(Agent(model, name="remote-endpoint"), store=str(tmp_path / "s.sqlite3"))
    internal = {"providerId": "main", "apiType": "openai", "baseUrl": "http://169.254.169.254/v1", "headers": {}}
    async with (
        RemoteServer(agent, ServeOptions(port=0)) as server,
        AcpTestClient.connect_url(server.url.replace("ws://", f"{scheme}://"), unstable=["providers"]) as c,
    ):
        await c.initialize()
        with pytest.raises(RequestError) as refused:
            await c.providers_set(internal)
        sid = await c.new_session()
        r = await c.prompt("hello", session_id=sid)
        listed = await c.providers_list()
    assert refused.value.code == -32600 and "remote agent" in str(refused.value.data)
    assert r.text == "offline answer"  # the agent's own model, untouched
    assert listed["providers"][0]["current"]["baseUrl"] != internal["baseUrl"]
