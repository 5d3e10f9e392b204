"""The embedded SQLite checkpointer's own table is versioned: migrated once, and a newer file refused.

`acpkit_messages` (langchain-acp's, beside LangGraph's tables in `langgraph-checkpoints.sqlite3`)
records its schema steps in `acpkit_langgraph_schema_version`, as on Postgres: a file of 2.0 from
before the table was versioned keeps its rows, and a file a newer langchain-acp migrated is neither
read nor written: the agent says which package to upgrade.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import aiosqlite
import pytest
from acp import RequestError
from acpkit_core.store import SchemaTooNewError
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import create_acp_agent
from langchain_acp._checkpoint import CHECKPOINT_FILE
from langchain_acp._message_saver import SQLITE_MIGRATIONS, VERSION_TABLE, MessageSqliteSaver
from lc_agent_script import recall
from lc_helpers import FakeChatModel

pytestmark = pytest.mark.timeout(60)


def _versions(path: Path) -> list[int]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return [v for (v,) in db.execute(f"SELECT version FROM {VERSION_TABLE} ORDER BY version")]


def _tables(path: Path) -> set[str]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


async def _setup(path: Path) -> None:
    async with aiosqlite.connect(str(path)) as conn:
        await MessageSqliteSaver(conn).setup()


async def test_a_new_file_gets_every_step_once(tmp_path: Path) -> None:
    path = tmp_path / CHECKPOINT_FILE
    await _setup(path)
    await _setup(path)  # a second process opening the file: nothing to apply
    assert _versions(path) == [version for version, _ in SQLITE_MIGRATIONS] == [1]
    assert {"acpkit_messages", VERSION_TABLE, "checkpoints", "writes"} <= _tables(path)


async def test_a_file_from_before_the_version_table_keeps_its_messages(tmp_path: Path) -> None:
    path = tmp_path / CHECKPOINT_FILE
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(
            "CREATE TABLE acpkit_messages (thread_id TEXT NOT NULL, key TEXT NOT NULL, type TEXT NOT NULL,"
            " value BLOB NOT NULL, PRIMARY KEY (thread_id, key))"
        )
        db.execute("INSERT INTO acpkit_messages VALUES ('t', 'k', 'json', x'7b7d')")
        db.commit()
    await _setup(path)
    assert _versions(path) == [1]
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT thread_id, key, type, value FROM acpkit_messages").fetchall() == [
            ("t", "k", "json", b"{}")
        ]


def _graph() -> object:
    return create_agent(FakeChatModel(script=[recall], repeat_last=True), tools=[])


async def test_a_file_a_newer_langchain_acp_migrated_is_refused_and_left_alone(tmp_path: Path) -> None:
    store = str(tmp_path / "sessions.sqlite3")
    path = tmp_path / CHECKPOINT_FILE
    async with AcpTestClient.connect(create_acp_agent(_graph(), store=store)) as c:  # pyright: ignore[reportArgumentType]
        await c.initialize()
        sid = await c.new_session()
        assert (await c.prompt("one", session_id=sid)).text == "turn 1: one"
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (99)")
        db.commit()
        kept = db.execute("SELECT COUNT(*) FROM acpkit_messages").fetchone()[0]
    assert kept > 0

    expected = (
        f"the checkpoint database {path}: langchain-acp tables are at schema version 99, newer than this "
        "langchain-acp's (1): upgrade langchain-acp here, or give this agent a state directory of its own "
        "(ACPKIT_STATE_DIR)"
    )
    with pytest.raises(SchemaTooNewError) as refused:
        await _setup(path)
    assert str(refused.value) == expected

    # A served agent on that state answers its client with the same words, and stays up.
    async with AcpTestClient.connect(create_acp_agent(_graph(), store=store)) as c:  # pyright: ignore[reportArgumentType]
        await c.initialize()
        for _ in range(2):
            with pytest.raises(RequestError) as answered:
                await c.prompt("two", session_id=sid)
            assert (answered.value.code, str(answered.value)) == (
                -32603,
                f"The agent failed: SchemaTooNewError: {expected}",
            )
    assert _versions(path) == [1, 99]
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT COUNT(*) FROM acpkit_messages").fetchone()[0] == kept
