"""The middleware and callback handler in a hand-built ACP server, over real stdio."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.timeout(60), pytest.mark.e2e]

SERVER = Path(__file__).parent / "lc_handbuilt_server.py"


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
async def test_handbuilt_server_streams_asks_and_reports_tools(answer: str) -> None:
    async with AcpTestClient.spawn(sys.executable, str(SERVER), permission_answers=[answer]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("clean up", session_id=sid)
    assert r.stop_reason == "end_turn"
    assert r.thoughts == "Deleting."
    assert r.text == "On it.Done."
    (request,) = r.permission_requests
    assert request.tool_call.tool_call_id == "d1"
    call = r.tool_calls["d1"]
    assert call.kind == "delete"
    if answer == "allow_once":
        assert call.statuses[-2:] == ["in_progress", "completed"]
    else:
        assert call.status == "failed" and "in_progress" not in call.statuses
