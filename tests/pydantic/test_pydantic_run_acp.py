"""`run_acp` keeps the protocol stream clean: a tool's prints go to stderr.

The rest of the process's stdio (a terminal, regular files) is in tests/e2e/test_stdio_process.py.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
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
