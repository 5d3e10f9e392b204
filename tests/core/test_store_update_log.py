"""The per-session update log (`acpkit serve`'s reconnect): an older store gets its tables, once."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest
from acp import RequestError
from acpkit_core.runner.types import Session
from acpkit_core.server.turn_log import prompt_key, resume_cursor
from acpkit_core.store import PostgresStore, SqliteStore
from acpkit_core.store.postgres_schema import MIGRATIONS, migrate


async def test_a_sqlite_file_of_schema_3_gets_the_log_tables(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    store = SqliteStore(path)
    await store.create(Session(id="a", cwd="/w"))
    await store.close()
    with sqlite3.connect(path) as db:  # as version 3 left it
        db.execute("DROP TABLE update_log")
        db.execute("DROP TABLE update_log_answers")
        db.execute("PRAGMA user_version=3")
    store = SqliteStore(path)
    await store.log_append("a", [(1, '{"begin": true}'), (2, '{"u": {}}')])
    await store.log_answer("a", "answer:q", "{}")
    assert await store.log_read("a", 1) == [(2, '{"u": {}}')]
    assert await store.log_last("a") == 2
    assert await store.log_answers("a") == {"answer:q": "{}"}
    assert (await store.get("a")).session.cwd == "/w"
    await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 4


async def test_a_postgres_schema_at_step_2_gets_step_3(postgres_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        assert await migrate(conn, MIGRATIONS[:2]) == 2
    store = PostgresStore(postgres_url)
    await store.create(Session(id="a", cwd="/w"))
    await store.log_append("a", [(1, '{"begin": true}'), (2, '{"u": {}}')])
    await store.log_trim("a", 2)
    assert await store.log_read("a", 0) == [(2, '{"u": {}}')]
    await store.close()
    with psycopg.connect(postgres_url) as conn:
        versions = [int(v) for (v,) in conn.execute("SELECT version FROM acpkit_schema_version ORDER BY version")]
    assert versions == [1, 2, 3]


@pytest.mark.parametrize(
    ("meta", "reader", "said"),
    [
        ({"acpkit.prompt": 5}, prompt_key, "must be a string of 1 to 200 characters"),
        ({"acpkit.prompt": ""}, prompt_key, "must be a string of 1 to 200 characters"),
        ({"acpkit.prompt": "k" * 201}, prompt_key, "must be a string of 1 to 200 characters"),
        ({"acpkit.resume": {"after": -1}}, resume_cursor, 'must be {"after": N}, N >= 0'),
        ({"acpkit.resume": {"after": "3"}}, resume_cursor, 'must be {"after": N}, N >= 0'),
        ({"acpkit.resume": 3}, resume_cursor, 'must be {"after": N}, N >= 0'),
    ],
)
def test_a_bad_prompt_key_or_cursor_is_invalid_params(meta: dict[str, Any], reader: Any, said: str) -> None:
    with pytest.raises(RequestError) as refused:
        reader(meta)
    assert refused.value.code == -32602 and said in str(refused.value.data)


def test_the_prompt_key_and_cursor_read_what_is_given() -> None:
    assert prompt_key({"acpkit.prompt": "abc"}) == "abc" and prompt_key(None) is None
    assert resume_cursor({"acpkit.resume": {"after": 7}}) == 7 and resume_cursor({}) is None
