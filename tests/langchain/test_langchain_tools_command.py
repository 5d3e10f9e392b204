"""`/tools` on langchain-acp: the graph's tools (create_agent, ToolNode, DeepAgents), the plan tool, MCP tools."""
# ruff: noqa: E501  (the expected listings are the exact lines a user sees)

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from acpkit_core.permissions import STANDARD_MODES, PermissionPolicy
from acpkit_core.runner.types import StdioMcpServer
from acpkit_core.testing import AcpTestClient
from deepagents import create_deep_agent
from langchain.agents import create_agent
from langchain.agents.middleware import TodoListMiddleware
from langchain_acp import AcpMcpMiddleware, AcpModeMiddleware, AcpPermissionMiddleware, create_acp_agent
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from lc_helpers import FakeChatModel, Reply, delete_file, read_file, write_file
from tools_listing import listings_per_mode, usable

pytestmark = pytest.mark.timeout(60)

HERE = Path(__file__).parent
NOTES = StdioMcpServer(name="notes", command=sys.executable, args=(str(HERE / "lc_mcp_server.py"),))
BROKEN = StdioMcpServer(name="broken", command=sys.executable, args=("-c", "raise SystemExit(3)"))

AGENTIC = """\
Tools the model can call in mode agentic: 5 tools, 4 usable (2 after asking).

Agent tools:
- `delete_file` (delete) — denied by the permission policy — Delete a file (pretend).
- `read_file` (read) — allowed — Read a text file through the editor.
- `write_file` (edit) — asks first — Write a file (pretend).

Plan tool:
- `write_todos` (think) — allowed — Use this tool to create and manage a structured task list for your current work session.

MCP server `notes`:
- `shout` (other) — asks first — Upper-case the text.

Note: MCP server `broken` did not start: """

READONLY = """\
Tools the model can call in mode readonly: 5 tools, 2 usable.

Agent tools:
- `delete_file` (delete) — denied by the permission policy — Delete a file (pretend).
- `read_file` (read) — allowed — Read a text file through the editor.
- `write_file` (edit) — off in mode readonly — Write a file (pretend).

Plan tool:
- `write_todos` (think) — allowed — Use this tool to create and manage a structured task list for your current work session.

MCP server `notes`:
- `shout` (other) — off in mode readonly — Upper-case the text.

Note: MCP server `broken` did not start: """


async def test_tools_lists_graph_plan_and_mcp_tools_and_follows_the_mode() -> None:
    model = FakeChatModel(script=[Reply(text="ok")], repeat_last=True)
    # LangChain's overloads type the middleware list by state schema; these are generic over it
    graph: Any = create_agent(  # pyright: ignore[reportCallIssue]
        model,
        tools=[read_file, write_file, delete_file],
        middleware=[  # pyright: ignore[reportArgumentType]
            TodoListMiddleware(),
            AcpMcpMiddleware(),
            AcpModeMiddleware(),
            AcpPermissionMiddleware(PermissionPolicy(ask=("shout",))),  # the graph's own rule counts too
        ],
    )
    agent = create_acp_agent(
        graph,
        store="memory",
        modes=STANDARD_MODES,
        permission_policy=PermissionPolicy(ask=("write_file",), deny=("delete_*",)),
    )
    agentic, readonly = await listings_per_mode(
        agent,
        ["agentic", "readonly"],
        offered=lambda: model.bound_tools[-1],
        model_calls=lambda: len(model.bound_tools),
        mcp_servers=[NOTES, BROKEN],
    )
    assert agentic.text.startswith(AGENTIC)
    assert readonly.text.startswith(READONLY)
    # what the mode leaves usable is what the model is then offered (less what the policy denies)
    assert usable(agentic.text) == sorted(set(agentic.offered) - {"delete_file"})
    assert usable(readonly.text) == sorted(set(readonly.offered) - {"delete_file"}) == ["read_file", "write_todos"]


async def test_a_hand_written_tool_node_and_unused_mcp_servers() -> None:
    model = FakeChatModel(script=[Reply(text="ok")])
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([read_file, delete_file]))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    agent = create_acp_agent(builder.compile(), store="memory")
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session(mcp_servers=[NOTES])  # never started: the graph cannot use it
        r = await c.prompt("/tools", session_id=sid)
    assert model.bound_tools == []
    assert r.text == (
        "Tools the model can call: 2 tools, 2 usable.\n"
        "\n"
        "Agent tools:\n"
        "- `delete_file` (delete) — allowed — Delete a file (pretend).\n"
        "- `read_file` (read) — allowed — Read a text file through the editor.\n"
        "\n"
        "Note: MCP server(s) `notes` are not connected: the graph has no `AcpMcpMiddleware` and is not built "
        "by a `graph_factory`."
    )


async def test_a_deep_agent_lists_its_built_in_tools_and_todo_tool() -> None:
    graph = create_deep_agent(model=FakeChatModel(script=[]), middleware=[TodoListMiddleware()])
    agent = create_acp_agent(graph, store="memory", modes=STANDARD_MODES)
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.set_mode(sid, "readonly")
        r = await c.prompt("/tools", session_id=sid)
    lines = r.text.splitlines()
    tools = {line.split("`")[1]: line for line in lines if line.startswith("- `")}
    assert {"ls", "read_file", "write_file", "edit_file", "glob", "grep", "task", "write_todos"} <= set(tools)
    assert tools["read_file"].startswith("- `read_file` (read) — allowed")
    assert tools["write_file"].startswith("- `write_file` (edit) — off in mode readonly")
    assert lines[lines.index(tools["write_todos"]) - 1] == "Plan tool:"
