"""The hand-built server of docs/langchain/middleware.md, served as written over real stdio, through a whole session.

The page's steps are concatenated into one script, run with a preamble that makes
`create_agent("openai:gpt-5", ...)` use the scripted model of `lc_walkthrough_model.py`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    Annotations,
    ImageContentBlock,
    McpServerStdio,
    SessionInfoUpdate,
    TextContentBlock,
    ToolCallProgress,
)
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.timeout(120), pytest.mark.e2e]

HERE = Path(__file__).resolve().parent
PAGE = HERE.parents[1] / "docs" / "langchain" / "middleware.md"
SECTION = "## A hand-built server, step by step"
FENCE = re.compile(r"^```python\n(?P<code>.*?)^```$", re.DOTALL | re.MULTILINE)

PREAMBLE = f"""\
import importlib, sys
sys.path.insert(0, {str(HERE)!r})
from lc_walkthrough_model import walkthrough_model
for module in ("langchain.chat_models", "langchain.agents.factory"):
    setattr(importlib.import_module(module), "init_chat_model", walkthrough_model)
"""

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def walkthrough_code() -> str:
    """The walkthrough's steps, in order (up to the next section of the page)."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n### ")]
    blocks = [m.group("code") for m in FENCE.finditer(section)]
    assert len(blocks) >= 4 and "acp.run_agent(NotesAgent()" in blocks[-1]
    return "\n".join(blocks)


def _snapshots(updates: list[Any]) -> list[dict[str, Any]]:
    return [
        u.field_meta["acpkit.snapshot"]
        for u in updates
        if isinstance(u, SessionInfoUpdate) and u.field_meta and "acpkit.snapshot" in u.field_meta
    ]


def _snapshot_labels(updates: list[Any]) -> list[str]:
    return [s["label"] for s in _snapshots(updates)]


def _final(updates: list[Any], tool_call_id: str) -> ToolCallProgress:
    (end,) = [
        u
        for u in updates
        if isinstance(u, ToolCallProgress) and u.tool_call_id == tool_call_id and u.status in ("completed", "failed")
    ]
    return end


async def test_the_walkthrough_server_through_a_session(tmp_path: Path) -> None:
    script = tmp_path / "notes_agent.py"
    script.write_text(PREAMBLE + walkthrough_code(), encoding="utf-8")
    async with AcpTestClient.spawn(sys.executable, str(script), permission_answers=["allow_once"]) as c:
        await c.initialize()
        (c.root / "notes.md").write_text("buy milk", encoding="utf-8")
        (c.root / "old.txt").write_text("old", encoding="utf-8")
        (c.root / "old2.txt").write_text("old", encoding="utf-8")
        sid = await c.new_session()
        assert c.last_session is not None and c.last_session.modes is not None
        assert c.last_session.modes.current_mode_id == "agentic"

        # 1. a prompt with an image: the model sees both blocks; asks before deleting; results stay out
        tidy = await c.prompt(
            [
                TextContentBlock(type="text", text="Tidy up the project", annotations=Annotations(priority=1.0)),
                ImageContentBlock(type="image", data=PNG, mime_type="image/png"),
            ],
            session_id=sid,
        )
        deleted = not (c.root / "old.txt").exists()
        # 2. two reads at once, one of a missing file: the run fails with "resource not found"
        with pytest.raises(RequestError) as failed:
            await c.prompt("Read missing notes", session_id=sid)
        failed_updates = c.updates[sid][len(tidy.updates) :]
        # 3. readonly mode: the delete is refused, the file stays
        await c.set_mode(sid, "readonly")
        refused = await c.prompt("Delete old2.txt", session_id=sid)
        kept = (c.root / "old2.txt").exists()

        # 4. a session with the editor's MCP servers, one of which cannot start
        notes = McpServerStdio(name="notes", command=sys.executable, args=[str(HERE / "lc_mcp_server.py")], env=[])
        ghost = McpServerStdio(name="ghost", command="/nonexistent/mcp-server", args=[], env=[])
        mcp_sid = await c.new_session(mcp_servers=[notes, ghost])
        shout = await c.prompt("Shout hi", session_id=mcp_sid)
        await c.close_session(mcp_sid)

    assert tidy.stop_reason == "end_turn"
    assert tidy.text == "Got annotated text, image. Done."  # the model got both blocks, annotations kept
    assert [p.tool_call.tool_call_id for p in tidy.permission_requests] == ["d1"]
    assert tidy.tool_calls["r1"].statuses == ["pending", "in_progress", "completed"]
    assert tidy.tool_calls["d1"].statuses == ["pending", "in_progress", "completed"]
    assert deleted
    for call in ("r1", "d1"):  # emit_tool_results=False: the status only
        end = _final(tidy.updates, call)
        assert (end.content, end.raw_output) == (None, None)
    assert "buy milk" not in str([u.model_dump() for u in tidy.updates if getattr(u, "tool_call_id", None)])
    assert _snapshot_labels(tidy.updates) == ["initial", "model", "tools", "model", "final"]
    final_state = _snapshots(tidy.updates)[-1]["state"]
    assert (final_state["acp_session_id"], final_state["acp_thread_id"], final_state["acp_turn"]) == (sid, sid, 1)
    assert all(isinstance(u.content, TextContentBlock) for u in tidy.updates if isinstance(u, AgentMessageChunk))

    assert failed.value.code == -32002
    assert str(failed.value).startswith("The agent failed: FileNotFoundError:")
    closed = {
        u.tool_call_id: u.status for u in failed_updates if isinstance(u, ToolCallProgress) and u.status == "failed"
    }
    assert closed.get("r2") == "failed"
    ends = [u for u in failed_updates if isinstance(u, ToolCallProgress) and u.tool_call_id == "r3" and u.status]
    assert ends and ends[-1].status in ("completed", "failed")  # the sibling reached a final status

    assert refused.stop_reason == "end_turn"
    assert refused.tool_calls["d3"].statuses == ["pending", "failed"]
    assert kept
    assert refused.text == "Done."

    first = shout.updates[0]  # the failed server is told before anything else
    assert isinstance(first, AgentMessageChunk) and isinstance(first.content, TextContentBlock)
    assert first.content.text.startswith("MCP server 'ghost' (stdio) failed to start:")
    assert shout.tool_calls["m1"].statuses == ["pending", "in_progress", "completed"]
    assert shout.text.endswith("Done: HI!")
