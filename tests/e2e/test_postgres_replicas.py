"""Two `acpkit run` processes (replicas) on one Postgres database, over real stdio.

A session started on one replica is loaded and continued on the other; one session never runs two
turns at once (the second replica is told busy); a replica killed mid-turn leaves its lease
behind for no longer than Postgres takes to see its connection close. LangChain graphs share
their checkpoints through LangGraph's Postgres saver, chosen by the same `--store` URL.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import AgentMessageChunk, UserMessageChunk
from acpkit_core.server.recording import INTERRUPTED_TEXT
from acpkit_core.testing import AcpTestClient
from test_durability import LC_AGENT, PYD_AGENT, _kill, _texts, _until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]


def _replica(url: str, script: str) -> tuple[str, ...]:
    return (sys.executable, "-m", "acpkit_core.cli", "run", "--store", url, script)


async def test_a_replica_killed_mid_turn_hands_the_session_to_another(postgres_url: str) -> None:
    async with (
        AcpTestClient.spawn(*_replica(postgres_url, PYD_AGENT)) as a,
        AcpTestClient.spawn(*_replica(postgres_url, PYD_AGENT)) as b,
    ):
        await a.initialize()
        await b.initialize()
        sid = await a.new_session(cwd=str(Path.cwd()))
        assert (await a.prompt("first", session_id=sid)).text == "turn 1: first"
        running = asyncio.ensure_future(a.prompt("hang", session_id=sid))
        await _until(lambda: any("part 4" in t for t in _texts(a.updates.get(sid, []), AgentMessageChunk)))
        _, replayed = await b.load_session(sid)  # B sees A's completed turn; the running one is not "interrupted"
        assert _texts(replayed, AgentMessageChunk)[0] == "turn 1: first"
        assert INTERRUPTED_TEXT not in _texts(replayed, AgentMessageChunk)
        with pytest.raises(RequestError) as busy:
            await b.prompt("beta", session_id=sid)
        assert busy.value.code == -32600
        assert "is running a turn in another window (process" in str(busy.value)
        await _kill(a)
        with pytest.raises(Exception):  # noqa: B017 - the connection is gone
            await running
        for _ in range(100):  # Postgres drops A's liveness lock once it sees A's connection close
            try:
                answer = await b.prompt("beta", session_id=sid)
                break
            except RequestError as exc:
                assert exc.code == -32600, exc
                await asyncio.sleep(0.05)
        else:
            pytest.fail("replica B never took over the dead replica's lease")
        assert answer.text == "turn 2: first | beta"  # the model saw the completed turn, not the killed one
        _, replayed = await b.load_session(sid)
        assert _texts(replayed, UserMessageChunk) == ["first", "hang", "beta"]
        agent = _texts(replayed, AgentMessageChunk)
        assert agent[0] == "turn 1: first"
        assert agent.index(INTERRUPTED_TEXT) < agent.index("turn 2: first | beta")


async def test_langgraph_replicas_share_checkpoints_through_postgres(postgres_url: str) -> None:
    async with (
        AcpTestClient.spawn(*_replica(postgres_url, LC_AGENT)) as a,
        AcpTestClient.spawn(*_replica(postgres_url, LC_AGENT)) as b,
    ):
        await a.initialize()
        await b.initialize()
        sid = await a.new_session(cwd=str(Path.cwd()))
        assert (await a.prompt("alpha", session_id=sid)).text == "turn 1: alpha"
        _, replayed = await b.load_session(sid)
        assert _texts(replayed, UserMessageChunk) == ["alpha"]
        assert (await b.prompt("beta", session_id=sid)).text == "turn 2: alpha | beta"
        assert (await a.prompt("gamma", session_id=sid)).text == "turn 3: alpha | beta | gamma"
    import psycopg

    with psycopg.connect(postgres_url) as conn:  # the checkpoints are LangGraph's own tables, in the same schema
        threads = conn.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
    assert threads == [(sid,)]


def _message_rows(url: str, thread_id: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT COUNT(*) FROM acpkit_messages WHERE thread_id = %s", (thread_id,)).fetchone()
    return int(row[0]) if row else 0


async def test_a_langgraph_replica_killed_between_turns_loses_no_completed_turn(postgres_url: str) -> None:
    async with AcpTestClient.spawn(*_replica(postgres_url, LC_AGENT)) as a:
        await a.initialize()
        sid = await a.new_session(cwd=str(Path.cwd()))
        await a.prompt("alpha", session_id=sid)
        assert (await a.prompt("beta", session_id=sid)).text == "turn 2: alpha | beta"
        await _kill(a)  # SIGKILL between turns: nothing is flushed on the way out
    assert _message_rows(postgres_url, sid) == 4  # each message of the two turns, once
    async with AcpTestClient.spawn(*_replica(postgres_url, LC_AGENT)) as b:  # a new process: nothing in memory
        await b.initialize()
        _, replayed = await b.load_session(sid)
        assert _texts(replayed, UserMessageChunk) == ["alpha", "beta"]
        assert INTERRUPTED_TEXT not in _texts(replayed, AgentMessageChunk)
        assert (await b.prompt("gamma", session_id=sid)).text == "turn 3: alpha | beta | gamma"
        assert _message_rows(postgres_url, sid) == 6
        await b.delete_session(sid)
    assert _message_rows(postgres_url, sid) == 0
