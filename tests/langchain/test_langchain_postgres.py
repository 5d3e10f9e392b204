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


async def test_the_message_table_is_migrated_once_and_a_newer_schema_is_refused(postgres_url: str) -> None:
    from acpkit_core.store import SchemaTooNewError
    from langchain_acp._message_saver_postgres import MIGRATIONS, VERSION_TABLE, MessagePostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with AsyncConnectionPool(postgres_url, min_size=1, max_size=2, kwargs=kwargs, open=False) as pool:
        await MessagePostgresSaver(pool).setup()
        await MessagePostgresSaver(pool).setup()  # a second replica starting: nothing to apply
        with psycopg.connect(postgres_url) as conn:
            versions = conn.execute(f"SELECT version FROM {VERSION_TABLE}".encode()).fetchall()
            assert versions == [(m[0],) for m in MIGRATIONS]
            # The session store's own schema version is its own: the two never mix.
            assert conn.execute("SELECT to_regclass('acpkit_schema_version')").fetchone() == (None,)
            conn.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (99)".encode())
            conn.commit()
        with pytest.raises(SchemaTooNewError, match="at schema version 99, newer than this langchain-acp's"):
            await MessagePostgresSaver(pool).setup()
