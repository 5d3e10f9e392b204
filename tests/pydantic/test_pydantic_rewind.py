"""Rewind with pydantic-acp over real stdio: the message history cut where the prompt began, the
files written through the client put back (issue 26's "done means", `tests/rewind_scenario.py`)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import UserMessageChunk
from acpkit_core.testing import AcpTestClient
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from rewind_scenario import run_rewind_scenario

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

APP = str(Path(__file__).with_name("pyd_rewind_app.py"))


async def test_rewind_retry_and_fork_over_stdio(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    await run_rewind_scenario([sys.executable, APP], root)


# --- in process -------------------------------------------------------------------------------------


def _seen(messages: list[ModelMessage]) -> str:
    return " | ".join(
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    )


async def _heard(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield "heard: " + _seen(messages)


def _last_four(messages: list[ModelMessage]) -> list[ModelMessage]:
    return messages[-4:]


async def test_the_cut_follows_the_marked_prompt_when_a_history_processor_rewrote_the_history() -> None:
    """A processor keeps the last 4 messages: the stored history is rewritten every turn, so the
    length it had when a prompt arrived says nothing; the prompt's mark does."""
    agent = Agent(FunctionModel(stream_function=_heard), capabilities=[ProcessHistory(_last_four)])
    async with AcpTestClient.connect(
        create_acp_agent(agent, store="memory"), unstable=["sessionCompaction"]
    ) as c:  # the compaction: no text
        await c.initialize()
        sid = await c.new_session()
        for word in ("one", "two", "three", "four"):
            r = await c.prompt(word, session_id=sid)
        assert r.text == "heard: three | four"  # what the processor left (`two`'s request was dropped)
        rewound = await c.prompt("/rewind 4", session_id=sid)
        after = await c.prompt("five", session_id=sid)
    assert rewound.text == 'Rewound to before prompt 4 ("four"): undid prompt.'
    assert after.text == "heard: three | five"


async def test_retry_after_a_failed_turn() -> None:
    failures = ["the provider is down"]

    async def flaky(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        if failures:
            raise RuntimeError(failures.pop())
        yield "heard: " + _seen(messages)

    agent = Agent(FunctionModel(stream_function=flaky))
    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        with pytest.raises(RequestError, match="the provider is down"):
            await c.prompt("hello", session_id=sid)
        retried = await c.prompt("/retry", session_id=sid)
        _, replayed = await c.load_session(sid)
    assert retried.text.endswith("heard: hello")
    said = [u.content.text for u in replayed if isinstance(u, UserMessageChunk)]
    assert said == ["hello"]


async def test_a_history_too_big_to_keep_in_memory_is_cut_from_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner unloads a big history between turns (`HistoryLog.unload`): the rewind reads it back first."""
    monkeypatch.setattr("pydantic_acp._history.KEPT_HISTORY_CHARS", 10)
    agent = Agent(FunctionModel(stream_function=_heard))
    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        for word in ("one", "two", "three"):
            await c.prompt(f"a long enough prompt {word}", session_id=sid)
        rewound = await c.rewind(sid, prompt=3)  # the extension: no turn reads the history back first
        after = await c.prompt("four", session_id=sid)
    assert rewound["message"].startswith("Rewound to before prompt 3")
    assert after.text == "heard: a long enough prompt one | a long enough prompt two | four"
