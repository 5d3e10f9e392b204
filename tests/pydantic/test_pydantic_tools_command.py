"""`/tools` on pydantic-acp: the agent's tools, client tools, the plan tool and MCP tools, per mode."""
# ruff: noqa: E501  (the expected listings are the exact lines a user sees)

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp.schema import McpServerStdio
from acpkit_core.permissions import STANDARD_MODES, PermissionPolicy
from acpkit_core.testing import AcpTestClient
from pyd_script import Script
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent
from tools_listing import listings_per_mode, usable

pytestmark = pytest.mark.timeout(60)

NOTES_SERVER = McpServerStdio(
    name="notes", command=sys.executable, args=[str(Path(__file__).with_name("pyd_mcp_server.py"))], env=[]
)
BROKEN_SERVER = McpServerStdio(name="broken", command=sys.executable, args=["-c", "raise SystemExit(3)"], env=[])


def tooled_agent(script: Script) -> Agent[None, str]:
    agent = Agent(script.model)

    @agent.tool_plain
    def count_words(text: str) -> int:
        """Count the words of a text. Splits on whitespace."""
        return len(text.split())

    @agent.tool_plain
    def delete_note(name: str) -> str:
        """Delete a note."""
        return f"deleted {name}"

    return agent


AGENTIC = """\
Tools the model can call in mode agentic: 8 tools, 7 usable (1 after asking).

Agent tools:
- `count_words` (other) — allowed — Count the words of a text.
- `delete_note` (delete) — denied by the permission policy — Delete a note.

Client tools (the editor's files and terminal):
- `read_file` (read) — allowed — Read a text file of the project as the editor has it (unsaved changes included).
- `run_command` (execute) — allowed — Run a command in the editor's terminal and return its output and exit code.
- `write_file` (edit) — asks first — Create or overwrite a text file of the project with `content`.

Plan tool:
- `update_plan` (think) — allowed — Replace the plan shown to the user with these steps (always send the complete list).
- `update_plan_step` (think) — allowed — Mark progress on one step of the plan (`step` counts from 1), or change its text.

MCP server `notes`:
- `lookup_word` (search) — allowed — Look a word up in the test dictionary.

Note: MCP server `broken` did not start: """

READONLY = """\
Tools the model can call in mode readonly: 8 tools, 4 usable.

Agent tools:
- `count_words` (other) — off in mode readonly — Count the words of a text.
- `delete_note` (delete) — denied by the permission policy — Delete a note.

Client tools (the editor's files and terminal):
- `read_file` (read) — allowed — Read a text file of the project as the editor has it (unsaved changes included).
- `run_command` (execute) — off in mode readonly — Run a command in the editor's terminal and return its output and exit code.
- `write_file` (edit) — off in mode readonly — Create or overwrite a text file of the project with `content`.

Plan tool:
- `update_plan` (think) — allowed — Replace the plan shown to the user with these steps (always send the complete list).
- `update_plan_step` (think) — allowed — Mark progress on one step of the plan (`step` counts from 1), or change its text.

MCP server `notes`:
- `lookup_word` (search) — allowed — Look a word up in the test dictionary.

Note: MCP server `broken` did not start: """


async def test_tools_lists_every_tool_the_model_is_offered_and_follows_the_mode() -> None:
    script = Script([["hello"], ["hello again"]])
    acp_agent = create_acp_agent(
        tooled_agent(script),
        store="memory",
        client_tools=True,
        plan_tool=True,
        modes=STANDARD_MODES,
        permission_policy=PermissionPolicy(ask=("write_file",), deny=("delete_*",)),
    )
    agentic, readonly = await listings_per_mode(
        acp_agent,
        ["agentic", "readonly"],
        offered=lambda: [t.name for t in script.infos[-1].function_tools],
        model_calls=lambda: len(script.requests),
        mcp_servers=[NOTES_SERVER, BROKEN_SERVER],
    )
    assert agentic.text.startswith(AGENTIC)
    assert readonly.text.startswith(READONLY)
    # the "usable" tools are exactly those the model is then offered (the mode's filter is core's)
    assert usable(agentic.text) == agentic.offered
    assert usable(readonly.text) == readonly.offered == ["lookup_word", "read_file", "update_plan", "update_plan_step"]


async def test_client_tools_follow_what_the_client_supports() -> None:
    script = Script([])
    acp_agent = create_acp_agent(tooled_agent(script), store="memory", client_tools=True)
    async with AcpTestClient.connect(acp_agent, terminal=False) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("/tools", session_id=sid)
    assert r.text.splitlines()[0] == "Tools the model can call: 4 tools, 4 usable."
    assert "`run_command`" not in r.text  # no terminal on this client, so no run_command
    assert "- `write_file` (edit) — allowed — Create or overwrite a text file of the project with `content`." in (
        r.text.splitlines()
    )


async def test_mcp_servers_left_unconnected_are_named() -> None:
    acp_agent = create_acp_agent(Agent(Script([]).model), store="memory", connect_mcp_servers=False)
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session(mcp_servers=[NOTES_SERVER])
        r = await c.prompt("/tools", session_id=sid)
    assert r.text == (
        "No tools.\n\nNote: MCP servers `notes` are not connected: the agent runs with connect_mcp_servers=False."
    )
