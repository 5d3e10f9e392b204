"""Each standard mode does what the editor is told it does, in both examples, over real stdio.

The examples' own permission policy asks before `write_file`; a mode adds to it. `agentic` runs
without asking except where that policy asks (until the user answers "always allow"),
`interactive` asks too, and `readonly` and `planning` never write: the answer then names the mode
that refused, not the editor.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acpkit_core.permissions import STANDARD_MODES
from acpkit_core.testing import AcpTestClient
from wire_client import EXAMPLES

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

OFFLINE = {"ACPKIT_MODEL": ""}
REFUSED = {
    "pydantic_agent.py": "I read `README.md`; the `{mode}` mode does not allow writing files, so I wrote no notes.",
    "langgraph_agent.py": (
        "Done: I read README.md; the `{mode}` mode does not allow writing files, so I wrote no notes."
    ),
}


def test_the_standard_modes_say_what_they_do() -> None:
    described = {m.id: m.description for m in STANDARD_MODES}
    assert described == {
        "agentic": "Runs tools without asking, except those the agent's own permission rules ask about.",
        "interactive": "Also asks before editing, deleting or moving files and before running commands.",
        "readonly": "Offers only tools that read, search, fetch or think: nothing is changed.",
        "planning": "Investigates and writes a plan; runs no tool that changes anything.",
    }


@pytest.mark.parametrize("example", sorted(REFUSED))
@pytest.mark.parametrize("mode", [m.id for m in STANDARD_MODES])
async def test_each_mode_does_what_its_description_says(example: str, mode: str, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Project\n")
    async with AcpTestClient.spawn(
        sys.executable, str(EXAMPLES / example), root=tmp_path, env=OFFLINE, permission_answers=["allow_always"]
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        assert c.last_session is not None and c.last_session.modes is not None
        shown = {m.id: m.description for m in c.last_session.modes.available_modes}
        await c.set_mode(sid, mode)
        first = await c.prompt("Write notes about README.md", session_id=sid)
        written = (tmp_path / "acpkit-notes.md").exists()
        (tmp_path / "acpkit-notes.md").unlink(missing_ok=True)
        second = await c.prompt("Write notes about README.md", session_id=sid)
    assert shown == {m.id: m.description for m in STANDARD_MODES}
    assert first.stop_reason == second.stop_reason == "end_turn"
    if mode in ("agentic", "interactive"):
        # the example's policy asks before write_file in every mode; "always allow" settles it for the session
        assert [p.tool_call.title for p in first.permission_requests] == ["Write acpkit-notes.md"]
        assert second.permission_requests == []
        assert written and (tmp_path / "acpkit-notes.md").exists()
    else:
        assert first.permission_requests == [] and second.permission_requests == []
        assert not written
        assert first.text.endswith(REFUSED[example].format(mode=mode))
        assert "editor" not in first.text  # the mode refused, not the editor
