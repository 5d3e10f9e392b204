"""Fuzzing the wire: a few hundred arbitrary lines into ONE live agent process.

Seeded and bounded (set `ACPKIT_FUZZ_SEED` to explore other seeds). The agent must answer each line
as JSON-RPC 2.0 says (a parse error for what is not JSON, one response per request, nothing for a
notification), write nothing but valid JSON-RPC, never die, and still answer at the end.
"""

# pyright: basic
# (these tests handle arbitrary JSON from the wire: Any, narrowed by isinstance)

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from wire_client import Reply, WireAgent

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

LINES = 400
SEED = int(os.environ.get("ACPKIT_FUZZ_SEED", "20261123"))
METHODS = [
    "initialize",
    "session/new",
    "session/load",
    "session/resume",
    "session/list",
    "session/prompt",
    "session/cancel",
    "session/set_mode",
    "session/set_config_option",
    "session/close",
    "session/fork",
    "session/delete",
    "authenticate",
    "_ext/thing",
    "fs/read_text_file",
    "",
]


def strict_json(line: bytes) -> tuple[bool, Any]:
    """Whether `line` is JSON (UTF-8, no NaN/Infinity, not nested too deep), and its value."""
    try:
        return True, json.loads(line.decode("utf-8"), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    except (ValueError, RecursionError):
        return False, None


class Fuzzer:
    def __init__(self, rng: random.Random, session_id: str, cwd: str) -> None:
        self.rng = rng
        self.sid = session_id
        self.cwd = cwd
        self.n = 0

    def scalar(self) -> Any:
        r = self.rng
        return r.choice(
            [
                None,
                True,
                False,
                r.randint(-(2**63), 2**63),
                r.random() * 1e6,
                "",
                "x" * r.randint(1, 50),
                "".join(chr(r.randint(0, 0x2FFF)) for _ in range(r.randint(1, 20))),
                "\x1b[2J\x00\u202e",
            ]
        )

    def value(self, depth: int = 0) -> Any:
        r = self.rng
        if depth > 4 or r.random() < 0.4:
            return self.scalar()
        if r.random() < 0.5:
            return [self.value(depth + 1) for _ in range(r.randint(0, 4))]
        keys = ["jsonrpc", "id", "method", "params", "result", "error", "sessionId", "prompt", "x"]
        return {r.choice(keys): self.value(depth + 1) for _ in range(r.randint(0, 5))}

    def template(self) -> dict[str, Any]:
        self.n += 1
        text = {"type": "text", "text": "say hi"}
        params: dict[str, Any] = self.rng.choice(
            [
                {"protocolVersion": 1, "clientCapabilities": {}},
                {"cwd": self.cwd, "mcpServers": []},
                {"sessionId": self.sid},
                {"sessionId": self.sid, "prompt": [text]},
                {"sessionId": self.sid, "prompt": [text, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]},
                {"sessionId": self.sid, "modeId": "readonly"},
                {"sessionId": self.sid, "configId": "mode", "value": "agentic"},
                {},
            ]
        )
        return {"jsonrpc": "2.0", "id": f"fz-{self.n}", "method": self.rng.choice(METHODS), "params": params}

    def mutate(self, message: dict[str, Any]) -> Any:
        r = self.rng
        for _ in range(r.randint(1, 3)):
            action = r.randrange(6)
            key = r.choice([*message, "params", "id", "method", "jsonrpc"])
            if action == 0:
                message.pop(key, None)
            elif action == 1:
                message[key] = self.value()
            elif action == 2 and isinstance(message.get("params"), dict) and message["params"]:
                inner = r.choice(list(message["params"]))
                message["params"][inner] = self.value()
            elif action == 3:
                message["result" if r.random() < 0.5 else "error"] = self.value()
            elif action == 4:
                message.pop("id", None)
            else:
                return r.choice([[message], [message, message], self.value()])
        return message

    def line(self) -> bytes:
        r = self.rng
        kind = r.randrange(8)
        if kind == 0:
            return bytes(r.choice([b for b in range(256) if b != 10]) for _ in range(r.randint(1, 120)))
        if kind == 1:
            return json.dumps(self.value()).encode()
        if kind == 2:
            whole = json.dumps(self.template()).encode()
            return whole[: r.randint(1, len(whole) - 1)]
        if kind == 3:
            depth = r.choice([10, 500, 5000, 100_000])
            return (r.choice(["[", '{"a":']) * depth).encode()
        if kind == 4:
            return json.dumps(self.template()).encode()
        return json.dumps(self.mutate(self.template())).encode()


def expected_response(value: Any) -> str | None:
    """The id a response must carry for this message, when it is one of ours that must be answered."""
    if not isinstance(value, dict):
        return None
    message: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
    id_ = message.get("id")
    if not (isinstance(id_, str) and id_.startswith("fz-")):
        return None
    if "method" in message or ("result" not in message and "error" not in message):
        return id_
    return None


def check_wire(reply: Reply) -> None:
    """Each thing the agent writes is a JSON-RPC response or notification (or a batch's answers)."""
    items: list[Any] = reply if isinstance(reply, list) else [reply]
    for item in items:
        assert isinstance(item, dict) and item.get("jsonrpc") == "2.0", item
        if "method" in item:
            assert isinstance(item["method"], str), item
            continue
        assert "id" in item and (("result" in item) != ("error" in item)), item
        if "error" in item:
            assert isinstance(item["error"]["code"], int) and isinstance(item["error"]["message"], str), item


async def test_arbitrary_lines_into_one_live_agent(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    async with await WireAgent.start(sys.executable, str(Path(__file__).parent / "agents" / "scripted_agent.py"),
                                     "--store", "memory", "--modes") as agent:  # fmt: skip
        await agent.request("initialize", {"protocolVersion": 1})
        new = await agent.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        fuzzer = Fuzzer(rng, new["result"]["sessionId"], str(tmp_path))
        unparseable = 0
        must_answer: set[str] = set()
        sent: list[bytes] = []
        for i in range(LINES):
            line = fuzzer.line()
            sent.append(line)
            ok, value = strict_json(line.rstrip(b"\r"))
            if not line.strip(b" \t\r"):
                pass
            elif not ok:
                unparseable += 1
            elif (wanted := expected_response(value)) is not None:
                must_answer.add(wanted)
            await agent.send_line(line)
            if i % 50 == 49:
                await agent.alive()  # still serving mid-way
        await agent.alive()
        answered: dict[str, int] = {}
        for _ in range(200):  # the last async answers (turns) may trail the liveness check
            if must_answer <= set(answered):
                break
            await agent.alive()
            answered = {}
            for reply in agent.received:
                items: list[Any] = reply if isinstance(reply, list) else [reply]
                for item in items:
                    if isinstance(item, dict) and isinstance(item.get("id"), str) and "method" not in item:
                        answered[item["id"]] = answered.get(item["id"], 0) + 1
        code, stderr = await agent.close()
    context = f"(seed {SEED}; set ACPKIT_FUZZ_SEED to replay)"
    for reply in agent.received:
        check_wire(reply)
    parse_errors = [r for r in agent.received if isinstance(r, dict) and r.get("error", {}).get("code") == -32700]
    assert all(r["id"] is None for r in parse_errors), context
    assert len(parse_errors) == unparseable, context
    missing = must_answer - set(answered)
    assert not missing, f"requests never answered: {sorted(missing)[:10]} {context}"
    twice = {k: v for k, v in answered.items() if k in must_answer and v != 1}
    assert not twice, f"requests answered more than once: {twice} {context}"
    assert code == 0, context
    assert "Traceback" not in stderr, stderr[-3000:]
