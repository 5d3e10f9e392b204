"""The start-up warm-up schedule (`acpkit_core.runner.warmup`), with real threads and real event loops."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from acpkit_core.config import AgentOptions
from acpkit_core.runner import warmup
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import Session, StopReason
from acpkit_core.runner.warmup import WarmUp, last_activity, warm_up
from acpkit_core.server import AcpAgent
from acpkit_core.store import MemoryStore
from acpkit_core.store.base import JsonDict
from acpkit_core.testing import AcpTestClient, ScriptedRunner


@pytest.fixture
def thread_errors() -> Iterator[list[threading.ExceptHookArgs]]:
    """Exceptions that escaped a thread while the test ran."""
    seen: list[threading.ExceptHookArgs] = []
    before = threading.excepthook
    threading.excepthook = seen.append
    yield seen
    threading.excepthook = before


def test_first_stage_at_once_throwaway_once_quiet() -> None:
    schedule = WarmUp(quiet_seconds=0.3)
    prepared = threading.Event()
    times: dict[str, float] = {}

    async def throwaway() -> None:
        await asyncio.sleep(0)
        times["throwaway"] = time.monotonic()

    start = time.monotonic()
    thread = schedule.start(
        "t",
        imports=["colorsys"],
        prepare=lambda: (times.setdefault("prepare", time.monotonic()), prepared.set()),
        throwaway=throwaway,
    )
    assert prepared.wait(5)
    assert "colorsys" in sys.modules
    assert "throwaway" not in times  # the first stage does not wait for quiet; the throwaway run does
    time.sleep(0.15)
    schedule.session_opened()  # a session opened: quiet again from now
    opened = time.monotonic()
    thread.join(5)
    assert not thread.is_alive()
    assert times["throwaway"] - opened >= 0.3
    assert times["throwaway"] - start >= 0.45


def test_initialize_answered_starts_the_quiet_clock_again() -> None:
    """A client opens its session right after `initialize`: the throwaway run does not start in between."""
    schedule = WarmUp(quiet_seconds=0.3)
    ran: list[float] = []

    async def throwaway() -> None:
        ran.append(time.monotonic())

    thread = schedule.start("t", throwaway=throwaway)
    time.sleep(0.15)
    schedule.initialized()
    answered = time.monotonic()
    assert schedule.last_activity >= answered - 0.01
    thread.join(5)
    assert not thread.is_alive()
    assert ran and ran[0] - answered >= 0.3


async def test_an_opening_session_is_activity_from_its_arrival() -> None:
    """The server signals a session opening when the request arrives, not only once the session is open:
    a throwaway run does not start beside a `session/new` whose store is slow."""

    class SlowStore(MemoryStore):
        seen: float | None = None

        async def create(
            self, session: Session, *, server: JsonDict | None = None, transcript: Sequence[JsonDict] = ()
        ) -> None:
            SlowStore.seen = last_activity()  # what the warm-ups were last told, while the store works
            await super().create(session, server=server, transcript=transcript)

    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=SlowStore()))) as c:
        await c.initialize()
        await asyncio.sleep(0.1)
        sent = time.monotonic()
        await c.new_session()
    assert SlowStore.seen is not None and SlowStore.seen >= sent


def test_no_throwaway_run_while_a_session_is_opening() -> None:
    """An opening longer than the quiet period (it waits for the interpreter lock beside the first
    stages, or for a slow store) holds the throwaway run until it has ended and quiet has followed."""
    schedule = WarmUp(quiet_seconds=0.1)
    ran: list[float] = []

    async def throwaway() -> None:
        ran.append(time.monotonic())

    with schedule.opening():
        thread = schedule.start("t", throwaway=throwaway)
        time.sleep(0.35)
        assert not ran
    ended = time.monotonic()
    thread.join(5)
    assert not thread.is_alive()
    assert ran and ran[0] - ended >= 0.1


def test_openings_nest_and_an_error_ends_one() -> None:
    schedule = WarmUp(quiet_seconds=0.05)
    ran: list[float] = []

    async def throwaway() -> None:
        ran.append(time.monotonic())

    with schedule.opening():
        thread = schedule.start("t", throwaway=throwaway)
        with pytest.raises(RuntimeError), schedule.opening():
            raise RuntimeError("the store failed")
        time.sleep(0.2)
        assert not ran  # the outer opening still runs
    thread.join(5)
    assert len(ran) == 1


async def test_the_server_holds_the_throwaway_run_for_the_whole_opening(monkeypatch: pytest.MonkeyPatch) -> None:
    """`session/new` is an opening from its arrival to its answer: a store slower than the quiet period
    does not see the throwaway run start beside it."""
    schedule = WarmUp(quiet_seconds=0.2)
    monkeypatch.setattr(warmup, "_process", schedule)
    created: dict[str, float] = {}
    ran: list[float] = []

    class SlowStore(MemoryStore):
        async def create(
            self, session: Session, *, server: JsonDict | None = None, transcript: Sequence[JsonDict] = ()
        ) -> None:
            created["start"] = time.monotonic()
            await asyncio.sleep(0.5)
            await super().create(session, server=server, transcript=transcript)
            created["end"] = time.monotonic()

    async def throwaway() -> None:
        ran.append(time.monotonic())

    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=SlowStore()))) as c:
        await c.initialize()
        thread = warm_up("slow-opening", throwaway=throwaway)
        await c.new_session()
        answered = time.monotonic()
        await asyncio.to_thread(thread.join, 5)
    assert not thread.is_alive()
    assert ran and ran[0] >= created["end"] and ran[0] - answered >= 0.15


def test_a_turn_before_quiet_means_no_throwaway_run() -> None:
    schedule = WarmUp(quiet_seconds=0.2)
    ran: list[str] = []

    async def throwaway() -> None:
        ran.append("throwaway")

    thread = schedule.start("t", prepare=lambda: ran.append("prepare"), throwaway=throwaway)
    schedule.turn_started()
    thread.join(5)
    assert not thread.is_alive()
    assert ran == ["prepare"]


def test_a_turn_that_starts_cancels_the_running_throwaway() -> None:
    schedule = WarmUp(quiet_seconds=0.0)
    started = threading.Event()
    outcome: list[str] = []

    async def throwaway() -> None:
        started.set()
        try:
            await asyncio.Event().wait()  # would never end on its own
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        outcome.append("finished")

    thread = schedule.start("t", throwaway=throwaway)
    assert started.wait(5)
    schedule.turn_started()
    thread.join(5)
    assert not thread.is_alive()
    assert outcome == ["cancelled"]


def test_once_per_name() -> None:
    schedule = WarmUp(quiet_seconds=0.0)
    calls: list[str] = []

    async def throwaway() -> None:
        calls.append("throwaway")

    first = schedule.start("a", prepare=lambda: calls.append("prepare"), throwaway=throwaway)
    again = schedule.start("a", prepare=lambda: calls.append("prepare again"), throwaway=throwaway)
    assert again is first
    first.join(5)
    assert calls == ["prepare", "throwaway"]
    other = schedule.start("b", prepare=lambda: calls.append("b"))
    assert other is not first
    other.join(5)
    assert calls == ["prepare", "throwaway", "b"]


def test_failures_are_swallowed_and_the_rest_still_runs(thread_errors: list[threading.ExceptHookArgs]) -> None:
    schedule = WarmUp(quiet_seconds=0.0)
    ran: list[str] = []

    def prepare() -> None:
        ran.append("prepare")
        raise RuntimeError("boom")

    async def throwaway() -> None:
        ran.append("throwaway")
        raise ValueError("boom")

    thread = schedule.start("t", imports=["acpkit_no_such_module", "colorsys"], prepare=prepare, throwaway=throwaway)
    thread.join(5)
    assert not thread.is_alive()
    assert ran == ["prepare", "throwaway"]
    assert thread_errors == []


async def test_the_server_signals_a_turn_for_every_runner() -> None:
    """A third framework's runner only calls `warm_up`: the server's `session/prompt` stops its throwaway run."""
    started = threading.Event()
    outcome: list[str] = []

    async def throwaway() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise

    class ThirdRunner(ScriptedRunner):
        def __init__(self) -> None:
            super().__init__()
            self.warm = warm_up(f"third-{uuid.uuid4().hex}", throwaway=throwaway)

    runner = ThirdRunner()
    async with AcpTestClient.connect(AcpAgent(runner, AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("hi", session_id=sid)
    assert r.text == "echo: hi"
    await asyncio.to_thread(runner.warm.join, 5)
    assert not runner.warm.is_alive()
    assert outcome == (["cancelled"] if started.is_set() else [])


async def test_first_stage_done_waits_for_the_first_stage_then_returns_at_once() -> None:
    schedule = WarmUp()
    release, prepared = threading.Event(), threading.Event()

    def prepare() -> None:
        release.wait(5)
        prepared.set()

    schedule.start("t", prepare=prepare)
    await schedule.first_stage_done(timeout=0.1)  # bounded: a stuck first stage does not hold a turn for ever
    assert not prepared.is_set()
    threading.Timer(0.1, release.set).start()
    await schedule.first_stage_done()
    assert prepared.is_set()
    await schedule.first_stage_done(timeout=0.0)


async def test_the_server_runs_a_turn_once_the_first_stage_is_done() -> None:
    """What a first stage builds, the first turn finds built: the server waits for it rather than build it twice."""
    release, prepared = threading.Event(), threading.Event()
    seen: list[bool] = []

    def prepare() -> None:
        release.wait(5)
        prepared.set()

    class ThirdRunner(ScriptedRunner):
        def __init__(self) -> None:
            super().__init__()
            warm_up(f"third-{uuid.uuid4().hex}", prepare=prepare)

        async def run_turn(self, turn: Turn) -> StopReason:
            seen.append(prepared.is_set())
            return await super().run_turn(turn)

    async with AcpTestClient.connect(AcpAgent(ThirdRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        threading.Timer(0.2, release.set).start()
        r = await c.prompt("hi", session_id=sid)
    assert r.text == "echo: hi"
    assert seen == [True]


def test_a_held_warm_up_waits_for_initialize_then_starts() -> None:
    schedule = WarmUp(hold_seconds=5)
    prepared = threading.Event()
    schedule.start("t", prepare=prepared.set)
    assert not prepared.wait(0.3)  # held: the client's `initialize` is not answered yet
    schedule.initialized()
    assert prepared.wait(5)


def test_a_held_warm_up_starts_anyway_after_its_hold() -> None:
    """Under a server that never says `initialize` was answered, warming is late, not lost."""
    schedule = WarmUp(hold_seconds=0.3)
    prepared = threading.Event()
    start = time.monotonic()
    schedule.start("t", prepare=prepared.set)
    assert prepared.wait(5)
    assert time.monotonic() - start >= 0.3


async def test_a_turn_waiting_for_the_first_stages_releases_a_held_warm_up() -> None:
    schedule = WarmUp(hold_seconds=60)
    prepared = threading.Event()
    schedule.start("t", prepare=prepared.set)
    await schedule.first_stage_done(timeout=5)
    assert prepared.is_set()


_HELD_AGENT = """
import sys, time
from pathlib import Path
from acpkit_core.config import AgentOptions
from acpkit_core.runner.warmup import warm_up
from acpkit_core.server import AcpAgent, run_stdio
from acpkit_core.testing import ScriptedRunner

marker = Path(sys.argv[1])
written = marker.with_suffix(".tmp")
warm_up("third", prepare=lambda: (written.write_text(str(time.monotonic())), written.replace(marker)))
run_stdio(AcpAgent(ScriptedRunner(), AgentOptions(store="memory")))
"""


def test_the_server_starts_the_warm_ups_once_its_initialize_answer_is_written(tmp_path: Path) -> None:
    """A warm-up registered at start-up does nothing until the client's `initialize` is answered (so
    that it does not slow the answer down), then starts at once."""
    script, marker = tmp_path / "agent.py", tmp_path / "prepared"
    script.write_text(_HELD_AGENT)
    process = subprocess.Popen(
        [sys.executable, str(script), str(marker)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        time.sleep(0.5)  # well started, no client yet
        assert not marker.exists()
        initialize = {"protocolVersion": 1, "clientCapabilities": {}}
        sent = time.monotonic()
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize}))
        process.stdin.write("\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        assert answer["result"]["protocolVersion"] == 1
        deadline = time.monotonic() + 1.2  # well under the 2 s hold: the server's signal started it
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert marker.exists()
        assert float(marker.read_text()) >= sent  # held until the client's `initialize` (one clock: CLOCK_MONOTONIC)
    finally:
        process.stdin.close()
        process.wait(30)
        process.stdout.close()
