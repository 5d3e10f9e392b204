"""Whatever a client answers to `session/request_permission`, over real stdio.

An answer the agent cannot read (a result that is not a permission outcome, a JSON-RPC error) is a
refusal: the tool does not run, the turn goes on and ends normally, and one line on stderr says why.
A client that goes away while a question is open leaves no traceback on stderr.
"""

# pyright: basic
# (these tests handle arbitrary JSON from the wire: Any, narrowed by isinstance)

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from wire_client import EXAMPLES, WireAgent, agent_text

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

FS = {"fs": {"readTextFile": True, "writeTextFile": True}}

# what the client sends back for the permission request (besides `jsonrpc` and `id`)
GARBAGE: dict[str, dict[str, Any]] = {
    "outcome 42": {"result": {"outcome": 42}},
    "empty result": {"result": {}},
    "selected without option": {"result": {"outcome": {"outcome": "selected"}}},
    "unknown outcome": {"result": {"outcome": {"outcome": "maybe"}}},
    "string result": {"result": "allow_once"},
    "null result": {"result": None},
    "json-rpc error": {"error": {"code": -32603, "message": "the editor crashed"}},
    "error without code": {"error": {"message": "no code"}},
    "error that is a string": {"error": "boom"},
}

AGENTS: dict[str, list[str]] = {
    "core": [sys.executable, str(Path(__file__).parent / "agents" / "scripted_agent.py"), "--store", "memory"],
    "pydantic": [sys.executable, str(EXAMPLES / "pydantic_agent.py")],
    "langgraph": [sys.executable, str(EXAMPLES / "langgraph_agent.py")],
}

PROMPTS = {
    "core": "ask delete_file\nsay the turn went on",
    "pydantic": "Write notes about README.md",
    "langgraph": "Write notes about README.md",
}


async def open_session(agent: WireAgent, cwd: Path) -> str:
    await agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": FS})
    return (await agent.request("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"]


async def prompt_until_asked(agent: WireAgent, sid: str, text: str, cwd: Path) -> tuple[dict[str, Any], list[Any]]:
    """Send the prompt, serve file reads, and return the permission request (and what came before it)."""
    await agent.send(
        {
            "jsonrpc": "2.0",
            "id": "turn",
            "method": "session/prompt",
            "params": {"sessionId": sid, "prompt": [{"type": "text", "text": text}]},
        }
    )
    before: list[Any] = []
    while True:
        message = await agent.read()
        method = message.get("method") if isinstance(message, dict) else None
        if method == "fs/read_text_file":
            content = Path(message["params"]["path"]).read_text()
            await agent.send({"jsonrpc": "2.0", "id": message["id"], "result": {"content": content}})
        elif method == "fs/write_text_file":
            raise AssertionError("the tool ran without permission")
        elif method == "session/request_permission":
            return message, before
        before.append(message)


QUESTION = 'question {"text": "Which file?", "choices": ["a.txt", "b.txt"]}\nsay the turn went on'


@pytest.mark.parametrize("answer", ["outcome 42", "string result", "json-rpc error"])
async def test_an_unreadable_answer_to_a_question_is_no_answer_and_the_turn_goes_on(
    answer: str, tmp_path: Path
) -> None:
    """`turn.ask` without elicitation asks through `session/request_permission` too."""
    async with await WireAgent.start(*AGENTS["core"]) as agent:
        sid = await open_session(agent, tmp_path)
        request, _ = await prompt_until_asked(agent, sid, QUESTION, tmp_path)
        await agent.send({"jsonrpc": "2.0", "id": request["id"], **GARBAGE[answer]})
        reply, after = await agent.until("turn")
        code, stderr = await agent.close()
    assert reply.get("result", {}).get("stopReason") == "end_turn", reply
    expected = "unavailable" if answer == "json-rpc error" else "declined"
    assert agent_text(after) == f"answer: {expected}the turn went on"
    assert code == 0 and "Traceback" not in stderr


def tool_updates(replies: list[Any], tool_call_id: str) -> list[dict[str, Any]]:
    return [
        r["params"]["update"]
        for r in replies
        if isinstance(r, dict)
        and r.get("method") == "session/update"
        and r["params"]["update"].get("toolCallId") == tool_call_id
    ]


# the core agent gets every answer; each example the two answers of the issue
CASES = [
    *(("core", answer) for answer in GARBAGE),
    *((example, answer) for example in ("pydantic", "langgraph") for answer in ("outcome 42", "json-rpc error")),
]


@pytest.mark.parametrize(("which", "answer"), CASES)
async def test_an_unreadable_permission_answer_is_a_refusal_and_the_turn_goes_on(
    which: str, answer: str, tmp_path: Path
) -> None:
    (tmp_path / "README.md").write_text("# Project\n")
    argv = AGENTS[which]
    async with await WireAgent.start(*argv, env={"ACPKIT_MODEL": ""}) as agent:
        sid = await open_session(agent, tmp_path)
        request, _ = await prompt_until_asked(agent, sid, PROMPTS[which], tmp_path)
        call_id = request["params"]["toolCall"]["toolCallId"]
        await agent.send({"jsonrpc": "2.0", "id": request["id"], **GARBAGE[answer]})
        reply, after = await agent.until("turn")
        assert await agent.alive() == []
        code, stderr = await agent.close()
    assert reply.get("result", {}).get("stopReason") == "end_turn", reply
    assert tool_updates(after, call_id)[-1]["status"] == "failed"
    assert not (tmp_path / "acpkit-notes.md").exists()
    if which == "core":
        assert agent_text(after) == "the turn went on"
    else:
        assert "did not write any notes" in agent_text(after)
    assert code == 0 and "Traceback" not in stderr
    refusals = [line for line in stderr.splitlines() if "could not be read" in line]
    assert len(refusals) == 1, stderr
    assert "the call is refused" in refusals[0]


@pytest.mark.parametrize("which", [*AGENTS, "core question"])
async def test_no_traceback_when_the_client_goes_away_during_a_question(which: str, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Project\n")
    argv = AGENTS[which.split()[0]]
    prompt = QUESTION if which == "core question" else PROMPTS[which]
    async with await WireAgent.start(*argv, env={"ACPKIT_MODEL": ""}) as agent:
        sid = await open_session(agent, tmp_path)
        await prompt_until_asked(agent, sid, prompt, tmp_path)
        code, stderr = await agent.close()  # stdin closes while the question is open
    assert code == 0
    assert "Traceback" not in stderr
    assert "never retrieved" not in stderr
