"""A `postgresql://` store gives a served graph LangGraph's Postgres saver on the same database."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import create_acp_agent
from lc_agent_script import recall
from lc_helpers import FakeChatModel

pytestmark = pytest.mark.timeout(60)


def memory_graph() -> Any:
    return create_agent(FakeChatModel(script=[recall], repeat_last=True), tools=[])


def _checkpoints(url: str, thread_id: str, table: str = "checkpoints") -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE thread_id = %s".encode(), (thread_id,)).fetchone()
    return int(row[0]) if row else 0


async def test_the_conversation_lives_in_postgres_across_restarts_and_delete_removes_it(postgres_url: str) -> None:
    graph = memory_graph()
    async with AcpTestClient.connect(create_acp_agent(graph, store=postgres_url)) as c:
        await c.initialize()
        keep = await c.new_session()
        drop = await c.new_session()
        for sid in (keep, drop):
            await c.prompt("one", session_id=sid)
            assert (await c.prompt("two", session_id=sid)).text == "turn 2: one | two"
    assert graph.checkpointer is None  # the user's graph was not touched
    assert _checkpoints(postgres_url, keep) > 0 and _checkpoints(postgres_url, drop) > 0
    assert _checkpoints(postgres_url, drop, "acpkit_messages") == 4  # two turns, two messages each, once
    async with AcpTestClient.connect(create_acp_agent(memory_graph(), store=postgres_url)) as c:  # a new process
        await c.initialize()
        _, replayed = await c.load_session(keep)
        assert [u.content.text for u in replayed if u.session_update == "user_message_chunk"] == ["one", "two"]
        assert (await c.prompt("three", session_id=keep)).text == "turn 3: one | two | three"
        await c.delete_session(drop)
    assert _checkpoints(postgres_url, drop) == 0 and _checkpoints(postgres_url, keep) > 0
    assert _checkpoints(postgres_url, drop, "acpkit_messages") == 0
    assert _checkpoints(postgres_url, keep, "acpkit_messages") == 6
