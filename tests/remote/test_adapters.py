"""Both adapters behind `acpkit serve`'s server: one agent per connection, sessions shared through the store."""

from __future__ import annotations

import sys
from pathlib import Path

from acpkit_core.remote import RemoteServer, ServeOptions
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import create_acp_agent as langchain_agent
from pydantic_acp import create_acp_agent as pydantic_agent
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "langchain"))
from fake_model import FakeChatModel, Reply  # pyright: ignore[reportMissingImports]


async def _two_connections(agent: AcpAgent, answer: str) -> None:
    """A turn on one connection, then the session loaded and continued on another (WebSocket, then HTTP)."""
    async with RemoteServer(agent, ServeOptions(port=0)) as server:
        async with AcpTestClient.connect_url(server.url) as first:
            await first.initialize()
            sid = await first.new_session()
            result = await first.prompt("hello", session_id=sid)
            assert result.stop_reason == "end_turn" and result.text == answer
        async with AcpTestClient.connect_url(server.url.replace("ws://", "http://")) as second:
            await second.initialize()
            _, replayed = await second.load_session(sid)
            said = [u.content.text for u in replayed if u.session_update == "agent_message_chunk"]
            assert "".join(said) == answer
            again = await second.prompt("again", session_id=sid)
            assert again.stop_reason == "end_turn"


async def test_a_pydantic_ai_agent_served_remotely(tmp_path: Path) -> None:
    agent = pydantic_agent(Agent(TestModel(custom_output_text="pong")), store=str(tmp_path / "s.sqlite3"))
    await _two_connections(agent, "pong")


async def test_a_langgraph_agent_served_remotely(tmp_path: Path) -> None:
    model = FakeChatModel(script=[Reply(text="pong")], repeat_last=True)
    agent = langchain_agent(create_agent(model, tools=[]), store=str(tmp_path / "s.sqlite3"))
    await _two_connections(agent, "pong")
