"""`run_acp` keeps the protocol stream clean: a tool's prints go to stderr.

The rest of the process's stdio (a terminal, regular files) is in tests/e2e/test_stdio_process.py.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import ToolCallProgress, ToolCallStart, UserMessageChunk
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

APP = str(Path(__file__).with_name("pyd_printing_app.py"))


async def test_prints_from_a_tool_go_to_stderr_not_into_the_protocol() -> None:
    async with AcpTestClient.spawn(sys.executable, APP) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("make some noise", session_id=sid)
        again = await c.prompt("once more", session_id=sid)
        await asyncio.sleep(0.2)
        stderr = c.stderr
    assert r.stop_reason == "end_turn" and r.text == "The tool ran."
    assert r.tool_calls["noisy-1"].status == "completed"
    assert again.text == "The tool ran."
    for noise in ("print() from the tool", "sys.stdout.write from the tool", "a child process of the tool"):
        assert noise in stderr


async def test_a_failing_model_answers_the_prompt_with_a_json_rpc_error_after_recording_the_turn() -> None:
    async with AcpTestClient.spawn(sys.executable, APP) as c:
        await c.initialize()
        sid = await c.new_session()
        with pytest.raises(RequestError) as at_once:
            await c.prompt("fail", session_id=sid)
        seen = len(c.updates[sid])
        with pytest.raises(RequestError) as later:
            await c.prompt("noise, then fail", session_id=sid)
        during = c.updates[sid][seen:]
        ok = await c.prompt("still works", session_id=sid)
        _, replayed = await c.load_session(sid)
        await asyncio.sleep(0.2)
        stderr = c.stderr
    assert (at_once.value.code, str(at_once.value)) == (
        -32603,
        "The agent failed: RuntimeError: the model service is down",
    )
    assert str(later.value) == "The agent failed: RuntimeError: the model service went down"  # one line
    (call,) = [u for u in during if isinstance(u, ToolCallStart)]
    assert [u.status for u in during if isinstance(u, ToolCallProgress) and u.tool_call_id == call.tool_call_id][
        -1
    ] == ("completed")
    assert ok.text == "The tool ran."
    user = [u.content.text for u in replayed if isinstance(u, UserMessageChunk)]  # type: ignore[union-attr]
    assert user == ["fail", "noise, then fail", "still works"]  # the failed turns are recorded
    assert "Traceback" in stderr and "the model service is down" in stderr  # the details go to the log
