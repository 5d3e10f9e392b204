"""Over Streamable HTTP, a prompt's result holds every update the turn sent before its answer.

The request's POST returns (`202`) on its own, while the turn's updates and its answer come on the
event stream; when both are read in the same event-loop pass, the SDK client's caller could resume
before the tasks that record the last updates ran, and a turn's text came back empty now and then
(seen in the full suite: about once in a hundred prompts with the machine busy).
`AcpTestClient.prompt` lets those tasks run first. Driven here through `acpkit serve -- CMD` (a
bare-SDK child answering at once), with two busy processes beside it to make the race likely:
before the fix, 300 prompts failed in two runs of three (at prompts 210 and 219), hence 600.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from acpkit_core.testing import AcpTestClient
from replicas import replica

CHILD = Path(__file__).parent / "agents" / "sdk_child_agent.py"

pytestmark = pytest.mark.timeout(180)


async def test_every_prompt_result_has_its_text_over_http(tmp_path: Path) -> None:
    args = ["--", sys.executable, str(CHILD)]
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        async with (
            replica("", target=None, args=args, env={"ACPKIT_STATE_DIR": str(tmp_path / "state")}) as server,
            AcpTestClient.connect_url(server.http_url) as client,
        ):
            await client.initialize()
            sid = await client.new_session()
            for i in range(600):
                result = await asyncio.wait_for(client.prompt(f"hello {i}", session_id=sid), 30)
                assert (result.stop_reason, result.text) == ("end_turn", f"echo: hello {i}"), f"prompt {i}"
    finally:
        for process in busy:
            process.kill()
            process.wait()
