"""What survives a crash and what two processes on one database may do (real agent processes over stdio)."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import AgentMessageChunk, ToolCallProgress, ToolCallStart, UserMessageChunk
from acpkit_core.server.recording import INTERRUPTED_TEXT
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

HERE = Path(__file__).parent
PYD_AGENT = str(HERE / "agents" / "memory_pyd_agent.py")
LC_AGENT = str(HERE.parent / "langchain" / "lc_agent_script.py")


async def _until(check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.02)


def _texts(updates: list[Any], kind: type) -> list[str]:
    return [u.content.text for u in updates if isinstance(u, kind) and u.content.type == "text"]


async def _kill(c: AcpTestClient) -> None:
    assert c.process is not None
    c.process.send_signal(signal.SIGKILL)
    await c.process.wait()


async def _kill_mid_turn(c: AcpTestClient, sid: str, prompt: str, seen: Callable[[list[Any]], bool]) -> None:
    running = asyncio.ensure_future(c.prompt(prompt, session_id=sid))
    await _until(lambda: seen(c.updates.get(sid, [])))
    await asyncio.sleep(0.5)  # several transcript flush intervals
    await _kill(c)
    with pytest.raises(Exception):  # noqa: B017 - the connection is gone; any error is fine
        await running


async def test_kill_mid_turn_keeps_the_prompt_and_partial_answer_marked_interrupted() -> None:
    async with AcpTestClient.spawn(sys.executable, PYD_AGENT) as c:
        await c.initialize()
        sid = await c.new_session()
        assert (await c.prompt("first", session_id=sid)).text == "turn 1: first"
        await _kill_mid_turn(
            c, sid, "hang now", lambda ups: "".join(_texts(ups, AgentMessageChunk)).count("part ") == 5
        )
    async with AcpTestClient.spawn(sys.executable, PYD_AGENT) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        assert _texts(replayed, UserMessageChunk) == ["first", "hang now"]
        agent = _texts(replayed, AgentMessageChunk)
        assert agent[0] == "turn 1: first"
        assert "".join(agent[1:-1]) == "part 0 part 1 part 2 part 3 part 4 "
        assert agent[-1] == INTERRUPTED_TEXT
        # The model's history holds every completed turn and nothing of the interrupted one.
        assert (await c.prompt("after", session_id=sid)).text == "turn 2: first | after"
    async with AcpTestClient.spawn(sys.executable, PYD_AGENT) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        # The interruption is recorded once, not again on every load.
        assert _texts(replayed, AgentMessageChunk).count(INTERRUPTED_TEXT) == 1
        assert _texts(replayed, UserMessageChunk) == ["first", "hang now", "after"]


async def test_updates_still_waiting_for_the_write_window_are_stored_all_the_same() -> None:
    """The transcript is flushed from the turn, not from the wire: a write window does not delay it."""
    minute = {"MEMORY_AGENT_WRITE_WINDOW_MS": "60000"}
    async with AcpTestClient.spawn(sys.executable, PYD_AGENT, env=minute) as c:
        await c.initialize()
        sid = await c.new_session()
        assert (await c.prompt("first", session_id=sid)).text == "turn 1: first"  # the answer flushes the window
        # The turn's first update goes at once; the next ones wait for the window's end (a minute).
        seen = len(c.updates[sid])
        await _kill_mid_turn(c, sid, "hang now", lambda ups: len(ups) > seen)
        assert not any(t.startswith("part 4") for t in _texts(c.updates[sid], AgentMessageChunk))
    async with AcpTestClient.spawn(sys.executable, PYD_AGENT) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        agent = _texts(replayed, AgentMessageChunk)
        assert "".join(agent[1:-1]) == "part 0 part 1 part 2 part 3 part 4 "
        assert agent[-1] == INTERRUPTED_TEXT


async def test_kill_while_a_tool_runs_leaves_the_tool_call_failed_and_no_dangling_call() -> None:
    async with AcpTestClient.spawn(sys.executable, PYD_AGENT) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("first", session_id=sid)
        await _kill_mid_turn(c, sid, "tool-hang", lambda ups: any(isinstance(u, ToolCallStart) for u in ups))
    async with AcpTestClient.spawn(sys.executable, PYD_AGENT) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        (tool,) = [u for u in replayed if isinstance(u, ToolCallStart | ToolCallProgress)]
        assert isinstance(tool, ToolCallStart)
        assert (tool.title, tool.status) == ("wait_forever", "failed")
        assert _texts(replayed, AgentMessageChunk)[-1] == INTERRUPTED_TEXT
        r = await c.prompt("after", session_id=sid)
        assert r.stop_reason == "end_turn"
        assert r.text == "turn 2: first | after"


@pytest.mark.parametrize("script", [PYD_AGENT, LC_AGENT], ids=["pydantic", "langchain"])
async def test_kill_between_turns_replays_every_completed_turn(script: str) -> None:
    async with AcpTestClient.spawn(sys.executable, script) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("alpha", session_id=sid)
        assert (await c.prompt("beta", session_id=sid)).text == "turn 2: alpha | beta"
        await _kill(c)
    async with AcpTestClient.spawn(sys.executable, script) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        assert _texts(replayed, UserMessageChunk) == ["alpha", "beta"]
        assert INTERRUPTED_TEXT not in _texts(replayed, AgentMessageChunk)
        assert (await c.prompt("gamma", session_id=sid)).text == "turn 3: alpha | beta | gamma"


@pytest.mark.parametrize("script", [PYD_AGENT, LC_AGENT], ids=["pydantic", "langchain"])
async def test_two_windows_on_one_session_lose_no_turn(script: str) -> None:
    async with AcpTestClient.spawn(sys.executable, script) as a, AcpTestClient.spawn(sys.executable, script) as b:
        await a.initialize()
        await b.initialize()
        sid = await a.new_session()
        await b.load_session(sid)
        assert (await a.prompt("alpha", session_id=sid)).text == "turn 1: alpha"
        assert (await b.prompt("beta", session_id=sid)).text == "turn 2: alpha | beta"
        assert (await a.prompt("gamma", session_id=sid)).text == "turn 3: alpha | beta | gamma"
    async with AcpTestClient.spawn(sys.executable, script) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        assert _texts(replayed, UserMessageChunk) == ["alpha", "beta", "gamma"]
        assert (await c.prompt("delta", session_id=sid)).text == "turn 4: alpha | beta | gamma | delta"


async def test_second_window_is_told_busy_until_the_first_process_dies() -> None:
    async with AcpTestClient.spawn(sys.executable, PYD_AGENT) as a, AcpTestClient.spawn(sys.executable, PYD_AGENT) as b:
        await a.initialize()
        await b.initialize()
        sid = await a.new_session()
        await a.prompt("first", session_id=sid)
        running = asyncio.ensure_future(a.prompt("hang", session_id=sid))
        await _until(lambda: any("part 4" in t for t in _texts(a.updates.get(sid, []), AgentMessageChunk)))
        _, replayed = await b.load_session(sid)  # loading is fine; the running turn is not marked interrupted
        assert INTERRUPTED_TEXT not in _texts(replayed, AgentMessageChunk)
        with pytest.raises(RequestError) as busy:
            await b.prompt("beta", session_id=sid)
        assert busy.value.code == -32600
        assert "is running a turn in another window" in str(busy.value)
        await _kill(a)
        with pytest.raises(Exception):  # noqa: B017 - the connection is gone
            await running
        # The dead process's lease is gone at once (same machine): B runs its turn on the stored history.
        r = await b.prompt("beta", session_id=sid)
        assert r.text == "turn 2: first | beta"
    async with AcpTestClient.spawn(sys.executable, PYD_AGENT) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        assert _texts(replayed, UserMessageChunk) == ["first", "hang", "beta"]
        agent = _texts(replayed, AgentMessageChunk)
        assert agent.index(INTERRUPTED_TEXT) < agent.index("turn 2: first | beta")
