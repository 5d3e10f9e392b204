"""`tool_presentation` and `show_hooks` over real stdio: an agent process, its diff read through the client."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp.schema import FileEditToolCallContent, ToolCallStart
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

AGENT = str(Path(__file__).parent / "agents" / "presented_agent.py")


async def test_a_presented_write_shows_its_diff_before_it_runs_and_an_event_card(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("old\n")
    async with AcpTestClient.spawn(sys.executable, AGENT, root=tmp_path, cwd=tmp_path) as c:
        await c.initialize()
        r = await c.prompt("Write the notes.", session_id=await c.new_session())
        requests = list(c.requests)
    assert r.stop_reason == "end_turn" and r.text == "Written."
    diff = FileEditToolCallContent(type="diff", path=str(notes), old_text="old\n", new_text="new\n")
    call = r.tool_calls["w1"]
    assert (call.title, call.kind, call.status) == ("Write notes.txt", "edit", "completed")
    assert call.content[0] == diff
    # the diff was shown before the tool ran, with the old text as the editor has it
    first_diff = next(i for i, u in enumerate(r.updates) if getattr(u, "content", None) and diff in u.content)
    running = next(i for i, u in enumerate(r.updates) if getattr(u, "status", None) == "in_progress")
    assert first_diff < running
    assert ("fs/read_text_file", {"path": str(notes), "line": None, "limit": None}) in requests
    (card,) = [u for u in r.updates if isinstance(u, ToolCallStart) and u.tool_call_id.startswith("lifecycle-")]
    assert (card.title, card.raw_input) == ("File written (write_file)", {"bytes": 4})
    assert notes.read_text() == "new\n"
