"""Both examples answer sensibly whatever the client can do, over real stdio.

Every combination of the client capabilities the examples use (reading files, writing files, a
terminal) gets a short turn that ends `end_turn`: a tool is only called when the editor serves it,
nothing fails for a capability the client lacks, and the answer says what was done and what was
not, once. A client that advertises nothing at all (`clientCapabilities: {}`) gets one answer.
"""

# pyright: basic
# (the raw-wire test handles arbitrary JSON: Any, narrowed by isinstance)

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest
from acpkit_core.testing import AcpTestClient
from wire_client import EXAMPLES, WireAgent, agent_text

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

OFFLINE = {"ACPKIT_MODEL": ""}

# what each example answers, by what the editor lets it do
ANSWERS = {
    "pydantic_agent.py": {
        "no read": (
            "This editor does not share its files with me, so I cannot read `README.md` or write notes about it."
        ),
        "no write": "I read `README.md`; this editor does not let me write files, so I wrote no notes.",
        "both": "Done: I read `README.md` and wrote my notes to `acpkit-notes.md`.",
    },
    "langgraph_agent.py": {
        "no read": "This editor does not share its files with me, so I cannot read README.md.",
        "no write": "Done: I read README.md; this editor does not let me write files, so I wrote no notes.",
        "both": "Done: I read README.md and wrote acpkit-notes.md.",
    },
}

COMBINATIONS = list(itertools.product([True, False], repeat=3))


@pytest.mark.parametrize("example", sorted(ANSWERS))
@pytest.mark.parametrize(
    ("read", "write", "terminal"),
    COMBINATIONS,
    ids=[f"read={r}-write={w}-terminal={t}" for r, w, t in COMBINATIONS],
)
async def test_every_combination_of_client_capabilities_gets_a_sensible_turn(
    example: str, read: bool, write: bool, terminal: bool, tmp_path: Path
) -> None:
    (tmp_path / "README.md").write_text("# Project\nA README.\n")
    async with AcpTestClient.spawn(
        sys.executable,
        str(EXAMPLES / example),
        root=tmp_path,
        env=OFFLINE,
        fs_read=read,
        fs_write=write,
        terminal=terminal,
        permission_answers=["allow_once"],
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Write notes about README.md", session_id=sid)
        methods = [method for method, _ in c.requests]
    expected = ANSWERS[example]["no read" if not read else "no write" if not write else "both"]
    assert r.stop_reason == "end_turn"
    assert r.text.endswith(expected)
    assert r.text.count(expected) == 1
    assert len(r.updates) < 30
    assert all(call.status == "completed" for call in r.tool_calls.values())  # nothing tried that could not work
    kinds = sorted(
        {str(call.kind) for call in r.tool_calls.values()} - {"think"}
    )  # LangGraph's plan is a tool call too
    if not read:
        assert r.tool_calls == {} and methods == []
    elif not write:
        assert kinds == ["read"] and methods == ["fs/read_text_file"]
        assert r.permission_requests == [] and "plan" in r.kinds
    else:
        assert kinds == ["edit", "read"] and "plan" in r.kinds
        assert methods == ["fs/read_text_file", "session/request_permission", "fs/write_text_file"]
    assert (tmp_path / "acpkit-notes.md").exists() == (read and write)


@pytest.mark.parametrize("example", sorted(ANSWERS))
async def test_a_client_that_advertises_nothing_gets_one_answer(example: str, tmp_path: Path) -> None:
    """The issue's report: `clientCapabilities: {}` and a plain hello used to loop to `max_turn_requests`."""
    async with await WireAgent.start(sys.executable, str(EXAMPLES / example), env=OFFLINE) as agent:
        await agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        sid = (await agent.request("session/new", {"cwd": str(tmp_path), "mcpServers": []}))["result"]["sessionId"]
        await agent.send(
            {
                "jsonrpc": "2.0",
                "id": "turn",
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "hello"}]},
            }
        )
        reply, updates = await agent.until("turn")
        code, stderr = await agent.close()
    assert reply["result"]["stopReason"] == "end_turn"
    assert agent_text(updates) == ANSWERS[example]["no read"]
    assert len(updates) < 5
    assert code == 0 and "Traceback" not in stderr
