"""Graph-state keys as ACP updates (`state_updates`): the example of the docs, over real stdio, and the refusals."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AgentMessageChunk, AgentPlanUpdate, SessionInfoUpdate, ToolCallProgress
from acpkit_core.errors import UserError
from acpkit_core.testing import AcpTestClient
from langchain_acp import StateContext, as_notice, create_acp_agent

pytestmark = [pytest.mark.timeout(90), pytest.mark.e2e]

EXAMPLE = Path(__file__).parents[2] / "examples" / "langgraph_state.py"


def shown(updates: list[Any]) -> list[tuple[str, Any]]:
    """What the user sees, in order: plans, notices, titles, the tool call's content, the answer."""
    out: list[tuple[str, Any]] = []
    for u in updates:
        if isinstance(u, AgentPlanUpdate):
            out.append(("plan", [(e.content, e.status) for e in u.entries]))
        elif isinstance(u, AgentMessageChunk) and u.field_meta:
            notice = u.field_meta["acpkit"]["notice"]
            out.append(("notice", (notice["title"], notice["description"])))
        elif isinstance(u, AgentMessageChunk):
            out.append(("text", u.content.text))
        elif isinstance(u, SessionInfoUpdate):
            out.append(("title", u.title))
        elif isinstance(u, ToolCallProgress) and u.content and not u.status:
            diffs = [(c.path, c.old_text, c.new_text) for c in u.content if c.type == "diff"]
            out.append(("diff", (u.tool_call_id, diffs)))
    return out


async def test_state_keys_become_plan_notice_title_and_tool_call_diffs(tmp_path: Path) -> None:
    async with AcpTestClient.spawn(sys.executable, str(EXAMPLE), root=tmp_path) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("note buy milk", session_id=sid)
        second = await c.prompt("note buy bread", session_id=sid)
        listed = await c.list_sessions()
    writing, done = (
        [("Write the note", "in_progress"), ("Tidy up", "pending")],
        [
            ("Write the note", "completed"),
            ("Tidy up", "completed"),
        ],
    )
    assert shown(first.updates) == [
        ("title", "note buy milk"),  # core's title from the first prompt, then the graph's
        ("plan", writing),
        ("notice", ("Status", "writing /notes/today.md")),
        ("title", "Notes: buy milk"),
        ("diff", ("note-1", [("/notes/today.md", None, "# Today\n- buy milk")])),
        ("text", "Saved to /notes/today.md."),
        ("plan", done),
        ("notice", ("Status", "all saved")),
    ]
    assert shown(second.updates) == [
        ("plan", writing),
        ("notice", ("Status", "writing /notes/today.md")),
        ("title", "Notes: buy bread"),
        ("diff", ("note-5", [("/notes/today.md", "# Today\n- buy milk", "# Today\n- buy bread")])),
        ("text", "Saved to /notes/today.md."),
        ("plan", done),
        ("notice", ("Status", "all saved")),
    ]
    assert second.tool_calls["note-5"].status == "completed"
    assert [s.title for s in listed.sessions if s.session_id == sid] == ["Notes: buy bread"]  # the title is stored

    async with AcpTestClient.spawn(sys.executable, str(EXAMPLE), root=tmp_path) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
    diffs = [c for u in replayed if u.session_update == "tool_call" for c in (u.content or []) if c.type == "diff"]
    assert [d.new_text for d in diffs] == ["# Today\n- buy milk", "# Today\n- buy bread"]  # kept in the transcript
    assert not [u for u in replayed if isinstance(u, AgentMessageChunk) and u.field_meta]  # notices are live only


async def test_a_custom_projection_and_turning_todos_off() -> None:
    sys.path.insert(0, str(EXAMPLE.parent))
    from langgraph_state import graph  # pyright: ignore[reportMissingImports, reportUnknownVariableType]

    seen: list[tuple[str, str, str | None, Any]] = []

    async def record(value: Any, ctx: StateContext) -> None:
        seen.append((ctx.key, ctx.node, ctx.tool_call_id, value))

    acp_agent = create_acp_agent(graph, store="memory", state_updates={"todos": None, "files": record})
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("note tea", session_id=sid)
    assert [k for k, _ in shown(r.updates)] == ["title", "text"]  # no plan: `todos` maps to None
    assert seen == [("files", "tools", "note-1", {"/notes/today.md": {"content": ["# Today", "- tea"]}})]


def test_keys_the_state_does_not_have_are_refused() -> None:
    sys.path.insert(0, str(EXAMPLE.parent))
    from langgraph_state import graph  # pyright: ignore[reportMissingImports, reportUnknownVariableType]

    with pytest.raises(UserError, match="state_updates names state keys the graph does not have: mood"):
        create_acp_agent(graph, store="memory", state_updates={"mood": as_notice(title="Mood")})
    with pytest.raises(UserError, match="expected a projection"):
        create_acp_agent(graph, store="memory", state_updates={"status": "notice"})  # pyright: ignore[reportArgumentType]
