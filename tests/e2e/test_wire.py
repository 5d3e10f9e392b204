"""Any line a client sends gets the JSON-RPC answer it calls for, and the agent process serves on."""

# pyright: basic
# (these tests handle arbitrary JSON from the wire: Any, narrowed by isinstance)

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from wire_client import EXAMPLES, WireAgent, agent_text, errors

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

DEEP = "[" * 100_000
BATCH_NOTE = "Invalid Request: batch requests are not supported by this agent: send one JSON-RPC message per line"

# line -> the (id, code) of each error it must get, in order ([] when nothing may be answered)
BAD_LINES: list[tuple[str | bytes, list[tuple[Any, int]]]] = [
    ("42", [(None, -32600)]),
    ('"hello"', [(None, -32600)]),
    ("null", [(None, -32600)]),
    ("true", [(None, -32600)]),
    ("[]", [(None, -32600)]),
    ("{}", [(None, -32600)]),
    ('{"jsonrpc":"2.0","foo":1}', [(None, -32600)]),
    ('{"jsonrpc":"1.0","id":3,"method":"session/list","params":{}}', [(3, -32600)]),
    ('{"id":4,"method":"session/list","params":{}}', [(4, -32600)]),
    ('{"jsonrpc":"2.0","id":5,"method":7}', [(5, -32600)]),
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"session/list"}', [(None, -32600)]),
    ('{"jsonrpc":"2.0","id":true,"method":"session/list"}', [(None, -32600)]),
    ('{"jsonrpc":"2.0","id":6,"method":"session/list","params":"x"}', [(6, -32600)]),
    ('{"jsonrpc":"2.0","id":7}', [(7, -32600)]),
    ('{"jsonrpc":"2.0","id":8,"method":"session/new","params":[]}', [(8, -32602)]),
    ('{"jsonrpc":"2.0","id":9,"method":"session/new"}', [(9, -32602)]),
    ('{"jsonrpc":"2.0","id":"s","method":"no/such/method","params":{}}', [("s", -32601)]),
    ("not json", [(None, -32700)]),
    ('{"jsonrpc":"2.0","id":1,', [(None, -32700)]),
    ("NaN", [(None, -32700)]),
    ('{"jsonrpc":"2.0","id":Infinity,"method":"x"}', [(None, -32700)]),
    ("1" * 5000, [(None, -32700)]),
    (b"\xff\xfe\x00\x01garbage\x80", [(None, -32700)]),
    (b"\x00\x00\x00", [(None, -32700)]),
    (DEEP, [(None, -32700)]),
    ("{" * 50_000 + "}" * 50_000, [(None, -32700)]),
    # notifications are never answered: a malformed or unknown one is dropped
    ('{"jsonrpc":"2.0","method":"session/cancel"}', []),
    ('{"jsonrpc":"2.0","method":"session/cancel","params":{"x":1}}', []),
    ('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":5}}', []),
    ('{"jsonrpc":"2.0","method":"session/cancel","params":"nope"}', []),
    ('{"jsonrpc":"2.0","method":"no/such/notification","params":{}}', []),
    ('{"jsonrpc":"2.0","method":"_ext/notification","params":{}}', []),
    ('{"jsonrpc":"2.0","id":77,"result":{}}', []),  # a response nobody waits for
    ('{"jsonrpc":"2.0","id":78,"error":"boom"}', []),
    # session/cancel sent as a request: answered (null), or -32602 for bad params
    ('{"jsonrpc":"2.0","id":10,"method":"session/cancel","params":{"sessionId":"none"}}', []),
    ('{"jsonrpc":"2.0","id":11,"method":"session/cancel","params":{}}', [(11, -32602)]),
    ("   ", []),
]


async def test_every_bad_line_is_answered_per_json_rpc_and_the_agent_serves_on() -> None:
    async with await WireAgent.scripted() as agent:
        init = await agent.request("initialize", {"protocolVersion": 1})
        assert init["result"]["protocolVersion"] == 1
        for line, expected in BAD_LINES:
            await agent.send_line(line)
            before = await agent.alive()  # the answers to a bad line come before the next answer
            shown = line[:60] if isinstance(line, str) else line
            assert errors(before) == expected, shown
            assert all("error" in r or r.get("id") == 10 for r in before if isinstance(r, dict)), shown
        code, stderr = await agent.close()
    assert code == 0
    assert "Traceback" not in stderr
    assert "answered -32600: Invalid Request: a JSON-RPC message is an object, not a number" in stderr
    assert "ignored a session/cancel notification: sessionId: Field required" in stderr
    assert "ignored notification 'no/such/notification'" in stderr


async def test_error_messages_say_what_is_wrong() -> None:
    async with await WireAgent.scripted() as agent:
        await agent.send_line("42")
        assert await agent.read() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "Invalid Request: a JSON-RPC message is an object, not a number"},
        }
        await agent.send_line(b"\xff{}")
        assert (await agent.read())["error"]["message"] == "Parse error: not UTF-8 (byte 0xff at offset 0)"
        await agent.send_line(DEEP)
        assert (await agent.read())["error"]["message"] == "Parse error: nested too deeply"
        await agent.send_line('{"jsonrpc":"2.0","id":1,"method":"session/cancel","params":{}}')
        assert (await agent.read())["error"] == {
            "code": -32602,
            "message": "Invalid params for session/cancel: sessionId: Field required",
        }


async def test_a_batch_is_answered_with_one_error_per_request_and_malformed_member() -> None:
    async with await WireAgent.scripted() as agent:
        batch: list[Any] = [
            {"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}},
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}},
            42,
            {"jsonrpc": "2.0", "id": "two", "method": "initialize", "params": {"protocolVersion": 1}},
        ]
        await agent.send(batch)
        reply = await agent.read()
        assert reply == [
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": BATCH_NOTE}},
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": BATCH_NOTE}},
            {"jsonrpc": "2.0", "id": "two", "error": {"code": -32600, "message": BATCH_NOTE}},
        ]
        await agent.send([{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}}])
        assert await agent.alive() == []  # a batch of notifications is answered with nothing


async def test_session_cancel_sent_as_a_request_cancels_the_turn_and_is_answered_null(tmp_path: Path) -> None:
    async with await WireAgent.scripted() as agent:
        await agent.request("initialize", {"protocolVersion": 1})
        sid = (await agent.request("session/new", {"cwd": str(tmp_path), "mcpServers": []}))["result"]["sessionId"]
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "say started\nsleep 30"}]}
        await agent.send({"jsonrpc": "2.0", "id": "turn", "method": "session/prompt", "params": prompt})
        while True:  # wait for the turn to be under way
            update = await agent.read()
            if isinstance(update, dict) and "started" in json.dumps(update):
                break
        await agent.send({"jsonrpc": "2.0", "id": "stop", "method": "session/cancel", "params": {"sessionId": sid}})
        answers: dict[Any, Any] = {}
        while len(answers) < 2:
            reply = await agent.read()
            if isinstance(reply, dict) and reply.get("id") in ("stop", "turn"):
                answers[reply["id"]] = reply
        assert answers["stop"] == {"jsonrpc": "2.0", "id": "stop", "result": None}
        assert answers["turn"]["result"]["stopReason"] == "cancelled"


async def test_the_issue_reproduction_over_acpkit_run_keeps_serving() -> None:
    """`printf init 42 | acpkit run examples/pydantic_agent.py` used to exit 1 with an SDK traceback."""
    async with await WireAgent.start(
        sys.executable, "-m", "acpkit_core.cli", "run", str(EXAMPLES / "pydantic_agent.py")
    ) as agent:
        init = await agent.request("initialize", {"protocolVersion": 1})
        assert init["result"]["agentInfo"]["name"]
        await agent.send_line("42")
        assert await agent.alive() == [
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "Invalid Request: a JSON-RPC message is an object, not a number"},
            }
        ]
        await agent.send_line("null")  # once read as the end of input: a silent exit 0
        assert errors(await agent.alive()) == [(None, -32600)]
        code, stderr = await agent.close()
    assert code == 0 and "Traceback" not in stderr


async def start_a_read(agent: WireAgent, path: Path) -> dict[str, Any]:
    """Start a turn (request id `turn`) that reads `path` through the client; the agent's fs request."""
    caps = {"fs": {"readTextFile": True, "writeTextFile": False}}
    await agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": caps})
    sid = (await agent.request("session/new", {"cwd": str(path.parent), "mcpServers": []}))["result"]["sessionId"]
    prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": f"read {path}"}]}
    await agent.send({"jsonrpc": "2.0", "id": "turn", "method": "session/prompt", "params": prompt})
    while True:
        message = await agent.read()
        if isinstance(message, dict) and message.get("method") == "fs/read_text_file":
            return message


async def test_a_response_to_a_request_the_agent_never_sent_is_ignored_and_a_good_one_still_works(
    tmp_path: Path,
) -> None:
    """The agent's own requests (fs/read_text_file) still get their answers through our transport."""
    (tmp_path / "notes.txt").write_text("hello from the client")
    async with await WireAgent.scripted() as agent:
        message = await start_a_read(agent, tmp_path / "notes.txt")
        await agent.send({"jsonrpc": "2.0", "id": 12345, "result": {"content": "not asked for"}})
        await agent.send({"jsonrpc": "2.0", "id": message["id"], "result": {"content": "hello from the client"}})
        reply, before = await agent.until("turn")
        assert reply["result"]["stopReason"] == "end_turn"
        assert agent_text(before) == "hello from the client"


async def start_and_open(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[WireAgent, str]:
    agent = await WireAgent.scripted(*args, env=env)
    await agent.request("initialize", {"protocolVersion": 1})
    sid = (await agent.request("session/new", {"cwd": str(tmp_path), "mcpServers": []}))["result"]["sessionId"]
    return agent, sid


def _hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads peak memory from /proc")
async def test_a_line_over_the_message_limit_is_refused_without_keeping_it(tmp_path: Path) -> None:
    agent, sid = await start_and_open(tmp_path, env={"ACPKIT_MAX_MESSAGE_BYTES": "1MiB"})
    async with agent:
        await agent.alive()
        peak_before = _hwm_kib(agent.process.pid)
        text = "a" * (64 << 20)
        line = json.dumps(
            {"jsonrpc": "2.0", "id": 41, "method": "session/prompt", "params": {"sessionId": sid, "prompt": []}}
        )
        line = line.replace('"prompt": []', f'"prompt": [{{"type": "text", "text": "{text}"}}]')
        await agent.send_line(line)
        del text
        reply, _ = await agent.until(41, timeout=60)
        assert reply["error"]["code"] == -32600
        message = reply["error"]["message"]
        assert message.startswith("a JSON-RPC message of 64.0 MiB is over the 1 MiB limit;")
        assert "AgentOptions(max_message_bytes=...)" in message and "ACPKIT_MAX_MESSAGE_BYTES" in message
        assert "acpkit run --max-message-bytes" in message
        assert reply["error"]["data"] == {"limit": "max_message_bytes", "max": 1 << 20, "size": len(line)}
        grown_mib = (_hwm_kib(agent.process.pid) - peak_before) / 1024
        assert grown_mib < 16, f"the agent's peak memory grew by {grown_mib:.0f} MiB for a refused 64 MiB line"
        # a line just under the limit is read whole
        ok = await agent.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "say ok"}]})
        assert ok["result"]["stopReason"] == "end_turn"
        code, stderr = await agent.close()
    assert code == 0 and "Traceback" not in stderr


async def test_the_message_limit_counts_bytes_and_takes_a_line_of_exactly_the_limit(tmp_path: Path) -> None:
    agent, _ = await start_and_open(tmp_path, env={"ACPKIT_MAX_MESSAGE_BYTES": "4096"})
    async with agent:
        head = '{"jsonrpc":"2.0","id":"x","method":"session/list","params":{"_meta":{"pad":"'
        tail = '"}}}'
        exact = head + "p" * (4096 - len(head) - len(tail)) + tail
        assert len(exact.encode()) == 4096
        await agent.send_line(exact)
        reply, _ = await agent.until("x")
        assert "result" in reply
        over = exact.replace('"pad":"', '"pad":"q')
        await agent.send_line(over)
        reply, _ = await agent.until("x")
        assert reply["error"]["code"] == -32600 and reply["error"]["data"]["size"] == 4097


async def test_an_oversized_response_from_the_client_fails_the_agents_request_not_the_agent(tmp_path: Path) -> None:
    """The client answers fs/read_text_file with more than the limit: that read fails, the agent serves on."""
    async with await WireAgent.scripted(env={"ACPKIT_MAX_MESSAGE_BYTES": "64KiB"}) as agent:
        message = await start_a_read(agent, tmp_path / "big.log")
        await agent.send({"jsonrpc": "2.0", "id": message["id"], "result": {"content": "x" * (1 << 20)}})
        reply, before = await agent.until("turn")
        shown = json.dumps(reply) + json.dumps(before)
        assert "is over the 64 KiB limit" in shown  # the read failed with the reason, the turn ended
        await agent.alive()


async def test_acpkit_run_takes_the_limits_as_flags(tmp_path: Path) -> None:
    command = (sys.executable, "-m", "acpkit_core.cli", "run", str(EXAMPLES / "echo_runner.py"), "--store", "memory")
    async with await WireAgent.start(*command, "--max-message-bytes", "8KiB", "--max-prompt-bytes", "2KiB") as agent:
        await agent.request("initialize", {"protocolVersion": 1})
        sid = (await agent.request("session/new", {"cwd": str(tmp_path), "mcpServers": []}))["result"]["sessionId"]
        await agent.send_line(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "x", "params": {"p": "y" * 9000}}))
        too_long, _ = await agent.until(5)
        blocks = [{"type": "text", "text": "z" * 3000}]
        too_big = await agent.request("session/prompt", {"sessionId": sid, "prompt": blocks})
    assert too_long["error"]["code"] == -32600
    assert too_long["error"]["message"].startswith("a JSON-RPC message of 8.9 KiB is over the 8 KiB limit; ")
    assert too_big["error"]["code"] == -32602
    assert too_big["error"]["message"].startswith("prompt: 2.9 KiB is over the 2 KiB limit; ")


async def test_acpkit_run_refuses_a_bad_limit_flag() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acpkit_core.cli",
        "run",
        str(EXAMPLES / "echo_runner.py"),
        "--max-message-bytes",
        "lots",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 2 and out == b""
    assert err.decode().strip() == (
        "acpkit run: --max-message-bytes: not a size in bytes: 'lots' (write for example 1048576, 512KiB or 64MiB)"
    )


REFERENCES = Path(__file__).resolve().parents[2] / "references" / "prompts"


async def test_every_bad_prompt_in_the_references_gets_our_precise_error_over_stdio(tmp_path: Path) -> None:
    """Our parser sees the blocks as sent (not the SDK's models): the documented -32602 for each case."""
    cases = sorted(REFERENCES.glob("error-*.json"))
    assert len(cases) >= 7
    agent, sid = await start_and_open(tmp_path)
    async with agent:
        for path in cases:
            case = json.loads(path.read_text())
            reply = await agent.request("session/prompt", {"sessionId": sid, "prompt": case["prompt"]})
            assert reply["error"]["code"] == -32602, path.name
            assert reply["error"]["message"] == case["error"], path.name
        missing = await agent.request("session/prompt", {"sessionId": sid})
        assert missing["error"]["message"] == "prompt: expected a list of content blocks, got null"
        unknown = await agent.request(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "a"}, {"type": "video"}]}
        )
        assert unknown["error"]["message"].startswith("prompt[1] (video): ")
        no_uri = await agent.request(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "resource", "resource": {"text": "x"}}]}
        )
        assert no_uri["error"]["message"] == "prompt[0] (resource): resource.uri: missing required field"
        ok = await agent.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "say ok"}]})
        assert ok["result"]["stopReason"] == "end_turn"
        listed = await agent.request("session/list", {})
        code, stderr = await agent.close()
    assert listed["result"]["sessions"][0]["title"] == "say ok"  # refused prompts were never a turn
    assert code == 0 and "Traceback" not in stderr


async def test_a_prompt_over_the_prompt_limit_is_refused_before_the_turn(tmp_path: Path) -> None:
    agent, sid = await start_and_open(tmp_path, env={"ACPKIT_MAX_PROMPT_BYTES": "1KiB"})
    async with agent:
        blocks = [{"type": "text", "text": "say hi "}, {"type": "text", "text": "é" * 600}]
        reply = await agent.request("session/prompt", {"sessionId": sid, "prompt": blocks})
        assert reply["error"]["code"] == -32602
        assert reply["error"]["message"] == (
            "prompt: 1.2 KiB is over the 1 KiB limit; the agent's developer can raise it with "
            "AgentOptions(max_prompt_bytes=...), the ACPKIT_MAX_PROMPT_BYTES environment variable "
            "or `acpkit run --max-prompt-bytes`"
        )
        ok = await agent.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "say hi"}]})
        assert ok["result"]["stopReason"] == "end_turn"
        load = {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []}
        await agent.send({"jsonrpc": "2.0", "id": "l", "method": "session/load", "params": load})
        loaded, replayed = await agent.until("l")
        assert "result" in loaded, loaded
    user = [
        u["params"]["update"]["content"]["text"]
        for u in replayed
        if u.get("method") == "session/update" and u["params"]["update"]["sessionUpdate"] == "user_message_chunk"
    ]
    assert user == ["say hi"]  # the refused prompt was neither run nor stored


async def test_control_characters_never_reach_a_session_title(tmp_path: Path) -> None:
    agent, sid = await start_and_open(tmp_path)
    async with agent:
        hostile = "\x1b[2J\x1b]0;pwned\x07hello\x00 \u202eworld\x9b31m\x07"
        await agent.send(
            {
                "jsonrpc": "2.0",
                "id": "t",
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": [{"type": "text", "text": hostile}]},
            }
        )
        reply, updates = await agent.until("t")
        listed = await agent.request("session/list", {})
    assert "result" in reply
    titles = [
        u["params"]["update"]["title"]
        for u in updates
        if u.get("method") == "session/update" and u["params"]["update"]["sessionUpdate"] == "session_info_update"
    ]
    assert titles == ["hello world"]
    assert listed["result"]["sessions"][0]["title"] == "hello world"
