"""What a fresh pydantic-acp process builds of the ACP SDK's models to serve its first turn."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

_FIRST_TURN_AGENT = """
import json, sys
import acpkit_core.runner.warmup as warmup
import acp.schema as schema
from pydantic import BaseModel
from acpkit_core.extensions import Extensions
from acpkit_core.server import run_stdio
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent
from pydantic_ai.models.function import FunctionModel

warmup.warm_up = lambda *args, **kwargs: None  # no warm-up: what is built, serving built
import acpkit_core._sdk_schema
acpkit_core._sdk_schema.warm_sdk_models = lambda: None
import acpkit_core.server.agent
acpkit_core.server.agent.warm_sdk_models = lambda: None

extensions = Extensions()

@extensions.method("test/built")
async def built(params: dict) -> dict:
    return {"built": sorted(
        name for name, value in vars(schema).items()
        if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == schema.__name__
        and value.__pydantic_complete__
    )}

async def stream(messages, info):
    yield "hello "
    yield "world"

run_stdio(create_acp_agent(Agent(FunctionModel(stream_function=stream)), store="memory", extensions=extensions))
"""


def test_the_first_turn_models_are_what_a_first_turn_of_text_builds(tmp_path: Path) -> None:
    """`FIRST_TURN_MODELS` (what a first turn waits for the warm-up to build) against what a fresh
    pydantic-acp process, with no warm-up, really builds for `initialize`, `session/new` and a prompt
    of text over stdio: a model missing from the list would be built inside the first turn, one too
    many would delay it."""
    from acpkit_core._sdk_schema import FIRST_TURN_MODELS, INITIALIZE_MODELS

    script = tmp_path / "agent.py"
    script.write_text(_FIRST_TURN_AGENT)
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}},
    ]
    process = subprocess.Popen(
        [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    assert process.stdin is not None and process.stdout is not None

    def call(message: dict[str, Any]) -> dict[str, Any]:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        while line := process.stdout.readline():
            answer = json.loads(line)
            if answer.get("id") == message["id"] and "method" not in answer:
                assert "error" not in answer, answer
                return answer["result"]
        raise AssertionError(f"the agent ended before answering {message['method']}")

    try:
        call(lines[0])
        sid = call(lines[1])["sessionId"]
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "say hello"}]}
        assert (
            call({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})["stopReason"] == "end_turn"
        )
        built = set(call({"jsonrpc": "2.0", "id": 3, "method": "_test/built", "params": {}})["built"])
    finally:
        process.stdin.close()
        process.wait(30)
        process.stdout.close()
    reopening = {"LoadSessionRequest", "LoadSessionResponse", "ResumeSessionRequest"}  # a thread reopened instead
    assert built - set(INITIALIZE_MODELS) == set(FIRST_TURN_MODELS) - reopening
