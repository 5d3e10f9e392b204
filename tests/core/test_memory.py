"""Memory goes back to the system after a turn that carried a big prompt (the figures are in bench/)."""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import ImageContentBlock
from acpkit_core.config import AgentOptions
from acpkit_core.prompt.text import model_text
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import StopReason
from acpkit_core.server import AcpAgent, memory
from acpkit_core.testing import AcpTestClient, ScriptedRunner

JSONRPC = str(Path("acpkit_core", "server", "jsonrpc.py"))


@pytest.fixture
def releases(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(memory, "release_memory", lambda: calls.append(1))
    monkeypatch.setattr(memory, "RELEASE_AFTER_GROWTH", 1 << 40)  # only the prompt's size decides here
    monkeypatch.setattr(memory, "RELEASE_AFTER_BYTES", 10_000)
    monkeypatch.setattr(memory, "_next_release", 0.0)  # a real release earlier in this process does not delay these
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


async def test_a_slow_release_delays_the_next_one_but_never_drops_it(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []

    def slow_release() -> None:  # as long as a full collection of a big server's heap, scaled down
        calls.append(time.monotonic())
        time.sleep(0.02)

    monkeypatch.setattr(memory, "release_memory", slow_release)
    monkeypatch.setattr(memory, "_next_release", 0.0)
    memory.release_memory_soon()
    await asyncio.sleep(0.3)
    assert len(calls) == 1
    memory.release_memory_soon()  # 0.02 s / RELEASE_TIME_SHARE = 1 s after the first
    await asyncio.sleep(0.3)
    assert len(calls) == 1
    await asyncio.sleep(1.0)
    assert len(calls) == 2
    assert calls[1] - calls[0] >= 0.02 / memory.RELEASE_TIME_SHARE


def _grow(megabytes: int) -> bytearray:
    blob = bytearray(megabytes << 20)
    blob[::4096] = b"x" * len(blob[::4096])  # touch every page: resident now
    return blob


def test_growth_counts_only_for_a_turn_that_ran_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    if memory.resident_bytes() is None:
        pytest.skip("the resident size is only read on Linux")
    monkeypatch.setattr(memory, "RELEASE_AFTER_GROWTH", 8 << 20)
    monkeypatch.setattr(memory, "_running_turns", 0)  # no turn of another test still counted as running
    kept: list[bytearray] = []

    alone = memory.turn_began()
    kept.append(_grow(16))
    assert memory.turn_grew(alone)

    alone = memory.turn_began()
    assert not memory.turn_grew(alone)  # no growth this time

    first = memory.turn_began()
    second = memory.turn_began()  # overlaps the first: neither is the cause of what the process grew by
    kept.append(_grow(16))
    assert not memory.turn_grew(second)
    assert not memory.turn_grew(first)

    alone = memory.turn_began()
    kept.append(_grow(16))
    assert memory.turn_grew(alone)  # alone again
    del kept


def test_release_memory_and_the_allocator_setting_run() -> None:
    memory.limit_retained_memory()
    memory.limit_retained_memory()  # once per process; a second call does nothing
    memory.release_memory()
    size = memory.resident_bytes()
    assert size is None or size > 1_000_000


class SizeRunner:
    """Says how long the prompt was, keeping nothing of it (unlike `ScriptedRunner`'s history)."""

    async def run_turn(self, turn: Turn) -> StopReason:
        await turn.emit.text(f"{len(model_text(turn.prompt)):,} characters")
        return "end_turn"


async def test_a_big_prompt_leaves_memory_when_its_turn_ends(tmp_path: Path) -> None:
    """The SDK's read loop keeps the last message it read until the next one: the server drops a big
    request's params once it is answered, so the prompt's decoded text does not outlive its turn."""
    size = memory.RELEASE_AFTER_BYTES + 1000
    options = AgentOptions(store=str(tmp_path / "sessions.sqlite3"), max_stored_attachment=1000)
    async with AcpTestClient.connect(AcpAgent(SizeRunner(), options)) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("small", session_id=sid)
        tracemalloc.start(25)
        try:
            r = await c.prompt("y" * size, session_id=sid)
            assert r.stop_reason == "end_turn"
            assert r.text == f"{size:,} characters"
            await asyncio.sleep(0.05)
            gc.collect()
            decoded = [
                trace.size
                for trace in tracemalloc.take_snapshot().traces
                if trace.size >= size and any(frame.filename.endswith(JSONRPC) for frame in trace.traceback)
            ]
        finally:
            tracemalloc.stop()
    assert decoded == []


async def test_a_refused_big_prompt_leaves_memory_as_an_accepted_one_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """A prompt over `max_prompt_bytes` is refused -32602; its decoded text, kept alive by the refusal's
    traceback (a reference cycle), goes once the server's release collects it, as after a big turn.

    Automatic collection is off here, so only the server's own release can free it."""
    monkeypatch.setattr(memory, "_next_release", 0.0)  # a release earlier in this process does not delay this one
    size = memory.RELEASE_AFTER_BYTES + 1000
    options = AgentOptions(store="memory", max_prompt_bytes=memory.RELEASE_AFTER_BYTES)
    async with AcpTestClient.connect(AcpAgent(SizeRunner(), options)) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("small", session_id=sid)
        gc.disable()
        tracemalloc.start(25)
        try:
            with pytest.raises(RequestError) as refused:
                await c.prompt("y" * size, session_id=sid)
            await asyncio.sleep(0.3)  # the release runs shortly after the answer
            decoded = [
                trace.size
                for trace in tracemalloc.take_snapshot().traces
                if trace.size >= size and any(frame.filename.endswith(JSONRPC) for frame in trace.traceback)
            ]
        finally:
            tracemalloc.stop()
            gc.enable()
    assert refused.value.code == -32602 and "max_prompt_bytes" in str(refused.value)
    assert decoded == []


async def test_a_refused_big_prompt_asks_for_a_release_and_a_refused_small_one_does_not(releases: list[int]) -> None:
    options = AgentOptions(store="memory", max_prompt_bytes=memory.RELEASE_AFTER_BYTES)
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), options)) as c:
        await c.initialize()
        sid = await c.new_session()
        with pytest.raises(RequestError):
            await c.prompt([ImageContentBlock(type="image", data="not base64!", mime_type="image/png")], session_id=sid)
        await asyncio.sleep(0.3)
        assert releases == []
        with pytest.raises(RequestError):
            await c.prompt("y" * (memory.RELEASE_AFTER_BYTES + 1), session_id=sid)
        await asyncio.sleep(0.3)
        assert releases == [1]
