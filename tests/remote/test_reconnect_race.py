"""A LangGraph agent behind a real `acpkit serve`: a client that reconnects at once, resumes and prompts.

The old connection's clean-up used to close the embedded saver the new connection was using
("Cannot operate on a closed database", about one try in eight). 200 cycles of close, reconnect,
`session/resume` or `session/load`, prompt: every turn answers, and the graph remembers them all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acpkit_core.testing import AcpTestClient
from replicas import LANGGRAPH_TARGET, replica

CYCLES = 200


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The replica's store: a SQLite file (the embedded saver is an aiosqlite connection), or Postgres (a pool)."""
    if request.param == "sqlite":
        return str(tmp_path / "lc.sqlite3")
    return str(request.getfixturevalue("postgres_url"))


async def test_reconnect_resume_and_prompt_200_times(store: str) -> None:
    async with replica(store, target=LANGGRAPH_TARGET) as served:
        async with AcpTestClient.connect_url(served.url) as client:
            await client.initialize()
            sid = await client.new_session()
            first = await client.prompt("hello", session_id=sid)
            assert first.stop_reason == "end_turn" and first.text == "turn 1"
        failures: list[str] = []
        turns = 1
        for cycle in range(2, CYCLES + 2):
            # The previous connection has just closed; its clean-up runs in the server meanwhile.
            async with AcpTestClient.connect_url(served.url) as client:
                await client.initialize()
                try:
                    if cycle % 2:
                        await client.resume_session(sid)
                    else:
                        await client.load_session(sid)
                    result = await client.prompt(f"prompt {cycle}", session_id=sid)
                except Exception as exc:
                    failures.append(f"cycle {cycle}: {exc}")
                    continue
                turns += 1
                if result.stop_reason != "end_turn" or result.text != f"turn {turns}":
                    failures.append(f"cycle {cycle}: {result.stop_reason} {result.text!r}")
        assert failures == [], f"{len(failures)} of {CYCLES} reconnects failed: {failures[:5]}"
        assert b"closed database" not in served.stderr


async def test_a_new_session_right_after_the_last_one_closed_200_times(tmp_path: Path) -> None:
    """The old connection held the process's last open session: closing it releases the embedded
    saver while the new connection's first turn opens it again."""
    async with replica(str(tmp_path / "lc.sqlite3"), target=LANGGRAPH_TARGET) as served:
        failures: list[str] = []
        for cycle in range(CYCLES):
            async with AcpTestClient.connect_url(served.url) as client:
                await client.initialize()
                try:
                    sid = await client.new_session()
                    result = await client.prompt(f"prompt {cycle}", session_id=sid)
                except Exception as exc:
                    failures.append(f"cycle {cycle}: {exc}")
                    continue
                if result.stop_reason != "end_turn" or result.text != "turn 1":
                    failures.append(f"cycle {cycle}: {result.stop_reason} {result.text!r}")
        assert failures == [], f"{len(failures)} of {CYCLES} reconnects failed: {failures[:5]}"
        assert b"closed database" not in served.stderr
