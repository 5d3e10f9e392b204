"""`/tools` in core: grouping, kinds, statuses (policy, mode, remembered answers, the runner's own rules), notes."""

from __future__ import annotations

from acpkit_core.config import AgentOptions
from acpkit_core.permissions import STANDARD_MODES, PermissionPolicy
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import ToolInfo, ToolListing
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient
from acpkit_core.testing.scripted import ScriptedRunner


class ListingRunner(ScriptedRunner):
    """The scripted runner, listing a fixed set of tools from every source (and failing on demand)."""

    def __init__(self) -> None:
        super().__init__()
        self.broken = False

    async def list_tools(self, turn: Turn) -> ToolListing:
        if self.broken:
            raise RuntimeError("the tool registry is offline")
        return ToolListing(
            tools=[
                ToolInfo(name="zap", description="Zap things.\nMore text.", source="mcp", server="b-server"),
                ToolInfo(name="rm_tree", description="Remove a tree. Carefully."),
                ToolInfo(name="rm_tree", description="A duplicate name is listed once."),
                ToolInfo(name="drop_table", kind="delete", decision="deny"),
                ToolInfo(name="read_file", source="client"),
                ToolInfo(name="shell", kind="execute", source="client", decision="ask"),
                ToolInfo(name="update_plan", source="plan"),
                ToolInfo(name="lookup", source="mcp", server="a-server"),
            ],
            notes=["MCP server `c-server` did not start: no such command"],
        )


async def test_tools_groups_by_source_and_says_what_each_rule_decides() -> None:
    runner = ListingRunner()
    options = AgentOptions(
        store="memory",
        modes=STANDARD_MODES,
        permission_policy=PermissionPolicy(deny=("zap",)),
        tool_kinds={"lookup": "fetch"},
    )
    async with AcpTestClient.connect(AcpAgent(runner, options), permission_answers=["reject_always"]) as c:
        await c.initialize()
        sid = await c.new_session()
        asked = await c.prompt('ask rm_tree {"path": "/tmp/x"}', session_id=sid)
        await c.set_mode(sid, "interactive")
        listed = await c.prompt("/tools", session_id=sid)
        await c.set_mode(sid, "planning")
        planning = await c.prompt("/tools", session_id=sid)
        runner.broken = True
        broken = await c.prompt("/tools", session_id=sid)
    assert len(asked.permission_requests) == 1  # answered "always reject"
    assert listed.text == (
        "Tools the model can call in mode interactive: 7 tools, 4 usable (1 after asking).\n"
        "\n"
        "Agent tools:\n"
        "- `drop_table` (delete) — denied by the agent's permission rules\n"
        "- `rm_tree` (delete) — rejected for this session — Remove a tree.\n"
        "\n"
        "Client tools (the editor's files and terminal):\n"
        "- `read_file` (read) — allowed\n"
        "- `shell` (execute) — asks first\n"
        "\n"
        "Plan tool:\n"
        "- `update_plan` (think) — allowed\n"
        "\n"
        "MCP server `a-server`:\n"
        "- `lookup` (fetch) — allowed\n"
        "\n"
        "MCP server `b-server`:\n"
        "- `zap` (other) — denied by the permission policy — Zap things.\n"
        "\n"
        "Note: MCP server `c-server` did not start: no such command"
    )
    assert [line for line in planning.text.splitlines() if "off in mode" in line] == [
        "- `drop_table` (delete) — off in mode planning",
        "- `rm_tree` (delete) — off in mode planning — Remove a tree.",
        "- `shell` (execute) — off in mode planning",
    ]
    assert broken.stop_reason == "end_turn"
    assert broken.text == "Could not list the tools: the tool registry is offline"


async def test_no_tools_and_no_modes() -> None:
    class Empty(ScriptedRunner):
        async def list_tools(self, turn: Turn) -> list[ToolInfo]:
            return []

    async with AcpTestClient.connect(AcpAgent(Empty(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("/tools", session_id=sid)
    assert r.text == "No tools."
