"""End to end over real stdio: a separate agent process, restarted between sessions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp.schema import AgentMessageChunk, UserMessageChunk
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

APP = str(Path(__file__).with_name("pyd_agent_app.py"))


async def test_prompt_approval_and_restart_with_load_and_resume(tmp_path: Path) -> None:
    async with AcpTestClient.spawn(sys.executable, APP, root=tmp_path, permission_answers=["allow_once"]) as c:
        init = await c.initialize()
        assert init.agent_info is not None and init.agent_info.name == "remembering-agent"
        assert init.agent_capabilities is not None and init.agent_capabilities.load_session
        sid = await c.new_session()
        first = await c.prompt("hello", session_id=sid)
        assert first.text == "I have heard: hello"
        tools = await c.prompt("read notes", session_id=sid)
        assert [p.tool_call.tool_call_id for p in tools.permission_requests] == ["notes-1"]
        assert tools.tool_calls["notes-1"].status == "completed"
        assert tools.text == "Notes read."

    # A new process: load replays the conversation, and the model still has the history.
    async with AcpTestClient.spawn(sys.executable, APP, root=tmp_path) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        said = [u.content.text for u in replayed if isinstance(u, UserMessageChunk)]
        answered = "".join(u.content.text for u in replayed if isinstance(u, AgentMessageChunk))
        assert said == ["hello", "read notes"]
        assert "I have heard: hello" in answered
        again = await c.prompt("still there?", session_id=sid)
        assert again.text == "I have heard: hello | read notes | still there?"

    async with AcpTestClient.spawn(sys.executable, APP, root=tmp_path) as c:
        await c.initialize()
        await c.resume_session(sid)
        resumed = await c.prompt("and now?", session_id=sid)
        assert resumed.text == "I have heard: hello | read notes | still there? | and now?"


async def test_acpkit_run_finds_the_pydantic_agent_in_a_module(tmp_path: Path) -> None:
    acpkit = str(Path(sys.executable).with_name("acpkit"))
    async with AcpTestClient.spawn(acpkit, "run", APP, root=tmp_path) as c:
        init = await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("hi there", session_id=sid)
    assert init.agent_info is not None and init.agent_info.name == "remembering-agent"
    assert r.text == "I have heard: hi there"
