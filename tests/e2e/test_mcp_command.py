"""`/mcp` over real stdio, for both adapters: each MCP server the editor gave, its state, and its tools."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp.schema import McpServerStdio, SseMcpServer
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

AGENTS = Path(__file__).parent / "agents" / "mcp_agents.py"
NOTES_SCRIPT = Path(__file__).parents[1] / "pydantic" / "pyd_mcp_server.py"
NOTES = McpServerStdio(name="notes", command=sys.executable, args=[str(NOTES_SCRIPT)], env=[])
BROKEN = McpServerStdio(name="broken", command=sys.executable, args=["-c", "raise SystemExit(3)"], env=[])
GONE = SseMcpServer(type="sse", name="gone", url="http://127.0.0.1:9/sse", headers=[])


async def mcp_listing(which: str, servers: list[object]) -> str:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), which) as c:
        await c.initialize()
        sid = await c.new_session(mcp_servers=servers)
        commands = [u for u in c.updates[sid] if u.session_update == "available_commands_update"]
        assert "mcp" in [cmd.name for cmd in commands[-1].available_commands]
        return (await c.prompt("/mcp", session_id=sid)).text


@pytest.mark.parametrize("which", ["pydantic", "langchain"])
async def test_mcp_lists_each_server_with_its_state_and_tools(which: str) -> None:
    text = await mcp_listing(which, [NOTES, BROKEN, GONE])
    lines = text.splitlines()
    assert lines[:2] == ["MCP servers of this session: 3, 1 connected.", ""]
    assert lines[2] == f"- `notes` (stdio: {sys.executable} {NOTES_SCRIPT}) — connected, 1 tool: `lookup_word`"
    assert lines[3].startswith(
        f"- `broken` (stdio: {sys.executable} -c raise SystemExit(3)) — failed. It did not start: "
    )
    assert lines[4].startswith("- `gone` (sse: http://127.0.0.1:9/sse) — failed. It did not start: ")
    assert len(lines) == 5


@pytest.mark.parametrize(
    ("which", "why"),
    [
        ("pydantic-off", "The agent runs with connect_mcp_servers=False."),
        ("langchain-plain", "The graph has no AcpMcpMiddleware and is not built by a graph_factory."),
    ],
)
async def test_mcp_says_why_servers_are_not_connected(which: str, why: str) -> None:
    text = await mcp_listing(which, [NOTES])
    assert text == (
        "MCP servers of this session: 1, 0 connected.\n"
        "\n"
        f"- `notes` (stdio: {sys.executable} {NOTES_SCRIPT}) — not connected. {why}"
    )


@pytest.mark.parametrize("which", ["pydantic", "langchain"])
async def test_mcp_without_servers(which: str) -> None:
    text = await mcp_listing(which, [])
    assert text == "This session has no MCP servers (an editor sends them with session/new or session/load)."
