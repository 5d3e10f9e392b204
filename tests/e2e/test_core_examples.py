"""`examples/echo_runner.py`, the runner example from the docs, as a real agent process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

EXAMPLE = str(Path(__file__).parents[2] / "examples" / "echo_runner.py")


async def test_echo_runner_example(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a\nb\nc\n")
    async with AcpTestClient.spawn(sys.executable, EXAMPLE, root=tmp_path) as c:
        init = await c.initialize()
        assert init.agent_info is not None and init.agent_info.name == "tinybot"
        sid = await c.new_session()
        r = await c.prompt("hello", session_id=sid)
        assert r.text == "You said: hello (message 1) "
        assert r.usage is not None and r.usage.output_tokens == 5
        tool = await c.prompt("count notes.txt", session_id=sid)
        (call,) = tool.tool_calls.values()
        assert (call.kind, call.status, call.raw_output) == ("read", "completed", {"output": "3 lines"})
        assert call.locations == [(str(tmp_path / "notes.txt"), None)]
        assert tool.text == "The file has 3 lines."
        assert tool.permission_requests == []  # a read tool is not asked about in interactive mode
        listed = await c.prompt("/tools", session_id=sid)
        assert listed.text == (
            "Tools the model can call in mode interactive: 1 tool, 1 usable.\n\n"
            "Agent tools:\n- `count_lines` (read) — allowed — Count the lines of a file"
        )
    async with AcpTestClient.spawn(sys.executable, EXAMPLE, root=tmp_path) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        assert "tool_call" in [u.session_update for u in replayed]
        again = await c.prompt("bye", session_id=sid)
        assert again.text == "You said: bye (message 3) "
