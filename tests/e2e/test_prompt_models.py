"""A model per prompt and a fallback model, over real stdio, on both adapters.

A prompt picks a model for itself (`_meta.acpkit.model`, or `/model <id> <prompt>`) without
changing the session's; a bad choice is -32602 naming the models; a provider error falls back to
the configured model (pydantic-ai's `ModelFallback`, LangChain's `ModelFallbackMiddleware`) and the
user gets a notice saying so.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import AgentMessageChunk
from acpkit_core.prompt import prompt_meta
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

AGENTS = Path(__file__).parent / "agents" / "model_agents.py"
IDS = {"pydantic": ("function:base", "function:fast"), "langchain": ("base", "fast")}


def notices(updates: list[Any]) -> list[dict[str, Any]]:
    return [
        u.field_meta["acpkit"]["notice"]
        for u in updates
        if isinstance(u, AgentMessageChunk) and u.field_meta and "notice" in u.field_meta.get("acpkit", {})
    ]


@pytest.mark.parametrize("adapter", ["pydantic", "langchain"])
async def test_a_prompt_picks_its_model_without_changing_the_sessions(adapter: str) -> None:
    base, fast = IDS[adapter]
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), adapter) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("hello", session_id=sid)
        picked = await c.prompt("hello", session_id=sid, meta=prompt_meta(model=fast))
        after = await c.prompt("hello again", session_id=sid)
        command = await c.prompt(f"/model {fast} summarise this", session_id=sid)
        still = await c.prompt("and now", session_id=sid)
        switched = await c.prompt(f"/model {fast}", session_id=sid)
        now_fast = await c.prompt("last one", session_id=sid)
        with pytest.raises(RequestError) as unknown:
            await c.prompt("x", session_id=sid, meta=prompt_meta(model="gpt-9"))
        with pytest.raises(RequestError) as wrong_type:
            await c.c.prompt(session_id=sid, prompt=[text_block("x")], acpkit={"model": 7})
    assert first.text == "base: hello"
    assert picked.text == "fast: hello"
    assert after.text == "base: hello again"  # the session's model did not change
    assert command.text == "fast: summarise this"  # `/model <id> <prompt>`: this turn only
    assert still.text == "base: and now"
    assert switched.text == f"Model: {fast}"  # `/model <id>` alone switches the session's model
    assert now_fast.text == "fast: last one"
    assert unknown.value.code == -32602
    assert unknown.value.data == {
        "index": None,
        "field": "_meta.acpkit.model",
        "reason": f"unknown model 'gpt-9'; the models are {base}, {fast}",
    }
    assert wrong_type.value.code == -32602
    assert wrong_type.value.data == {
        "index": None,
        "field": "_meta.acpkit.model",
        "reason": "must be a model id (a string)",
    }


@pytest.mark.parametrize("adapter", ["pydantic", "langchain"])
async def test_a_provider_error_falls_back_and_the_user_is_told(adapter: str) -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), adapter) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("overload please", session_id=sid)
        _, replayed = await c.load_session(sid)
    assert r.stop_reason == "end_turn"
    (notice,) = notices(r.updates)
    assert notice["severity"] == "warning" and notice["title"] == "Model fallback"
    chunks = [u for u in r.updates if isinstance(u, AgentMessageChunk)]
    order = ["notice" if u.field_meta else u.content.text for u in chunks]
    if adapter == "pydantic":  # told once the fallback answered (pydantic-ai records the failed attempts on it)
        assert notice["description"] == (
            "`base` failed (ModelHTTPError: status_code: 503, model_name: base, body: {'error': 'overloaded'}); "
            "`backup` answered instead."
        )
        assert order == ["backup: overload please", "notice"]
    else:  # told when the fallback starts, before its answer
        assert notice["description"] == (
            "`base` failed (RuntimeError: 503 Service Unavailable: overloaded); trying `backup`."
        )
        assert order == ["notice", "backup: overload please"]
    assert chunks[order.index("notice")].content.text == f"> **Model fallback**: {notice['description']}"
    # the notice is shown live, not replayed as part of the conversation
    assert notices(replayed) == []
    assert "backup: overload please" in "".join(u.content.text for u in replayed if isinstance(u, AgentMessageChunk))
