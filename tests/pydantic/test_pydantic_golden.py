"""The golden prompts of references/ reach the model exactly as `render_prompt` renders them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acpkit_core.testing import AcpTestClient
from pyd_script import Script
from pydantic_acp import create_acp_agent
from pydantic_acp._cli_adapter import render_json
from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, UserPromptPart

pytestmark = pytest.mark.timeout(60)

REFERENCES = Path(__file__).resolve().parents[2] / "references" / "prompts"
CASES = [p for p in sorted(REFERENCES.glob("*.json")) if "error" not in json.loads(p.read_text(encoding="utf-8"))]


def test_there_are_golden_prompts() -> None:
    assert len(CASES) >= 40


async def test_every_golden_prompt_reaches_the_model_as_rendered() -> None:
    script = Script([["ok"]] * len(CASES))
    acp_agent = create_acp_agent(Agent(script.model), store="memory")
    received: list[Any] = []
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        for path in CASES:
            case = json.loads(path.read_text(encoding="utf-8"))
            sid = await c.new_session()
            calls = len(script.requests)
            r = await c.prompt(case["prompt"], session_id=sid)
            assert r.stop_reason == "end_turn", path.name
            if isinstance(case["pydantic"], str) and case["pydantic"].startswith("/tools"):
                # A slash command is served by the server: it never reaches the model.
                assert len(script.requests) == calls
                received.append(case["pydantic"])
                continue
            last = script.requests[-1][-1]
            assert isinstance(last, ModelRequest)
            parts = [p for p in last.parts if isinstance(p, UserPromptPart)]
            assert len(parts) == 1, path.name
            received.append(render_json(parts[0].content))
    expected = [json.loads(p.read_text(encoding="utf-8"))["pydantic"] for p in CASES]
    mismatched = [p.name for p, got, want in zip(CASES, received, expected, strict=True) if got != want]
    assert mismatched == []
