"""Memory goes back to the system after a turn that carried a big prompt (the figures are in bench/)."""

from __future__ import annotations

import asyncio

import pytest
from acpkit_core.config import AgentOptions
from acpkit_core.server import AcpAgent, memory
from acpkit_core.testing import AcpTestClient, ScriptedRunner


@pytest.fixture
def releases(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(memory, "release_memory", lambda: calls.append(1))
    monkeypatch.setattr(memory, "RELEASE_AFTER_GROWTH", 1 << 40)  # only the prompt's size decides here
    monkeypatch.setattr(memory, "RELEASE_AFTER_BYTES", 10_000)
    return calls


async def test_memory_is_released_after_a_big_prompt_only(releases: list[int]) -> None:
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("small", session_id=sid)
        await asyncio.sleep(0.3)
        assert releases == []
        big = "y" * memory.RELEASE_AFTER_BYTES
        r = await c.prompt(big, session_id=sid)
        assert r.stop_reason == "end_turn"
        assert releases == []  # not before the response: shortly after it
        await asyncio.sleep(0.3)
        assert releases == [1]


async def test_release_requests_before_it_runs_make_one_release(releases: list[int]) -> None:
    memory.release_memory_soon()
    memory.release_memory_soon()
    await asyncio.sleep(0.3)
    memory.release_memory_soon()
    await asyncio.sleep(0.3)
    assert releases == [1, 1]


def test_release_memory_and_the_allocator_setting_run() -> None:
    memory.limit_retained_memory()
    memory.limit_retained_memory()  # once per process; a second call does nothing
    memory.release_memory()
    size = memory.resident_bytes()
    assert size is None or size > 1_000_000
