"""The per-session update log (`acpkit serve`'s reconnect): what each store keeps and reads back, and an
older store getting its tables, once.

The contract tests run on the memory, SQLite and Postgres stores (Postgres from
`tests/postgres_cluster.py`: skipped without it, failed in CI).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from acp import RequestError
from acpkit_core.runner.types import Session
from acpkit_core.server.turn_log import prompt_key, resume_cursor
from acpkit_core.store import PostgresStore, SqliteStore, UpdateLogStore, open_store
from acpkit_core.store.postgres_schema import MIGRATIONS, migrate


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    kind = str(request.param)
    spec = {"memory": "memory", "sqlite": str(tmp_path / "s.sqlite3")}.get(kind)
    s = open_store(spec if spec is not None else str(request.getfixturevalue("postgres_url")))
    assert isinstance(s, UpdateLogStore)
    await s.create(Session(id="a", cwd="/w"))
    yield s
    await s.close()


def _entry(n: int) -> tuple[int, str]:
    return (n, f'{{"u": {{"n": {n}}}}}')


async def test_entries_read_back_after_any_number_whatever_the_batches(store: Any) -> None:
    """A turn's log is written a batch at a time (a row per batch in the SQL stores): reading after
    any number gives exactly the entries above it, in order, wherever the batches begin and end."""
    await store.log_append("a", [_entry(n) for n in range(1, 6)])
    await store.log_append("a", [_entry(6)])
    await store.log_append("a", [_entry(n) for n in range(7, 11)] + [_entry(12), _entry(13)])  # a gap: two runs
    every = [_entry(n) for n in [*range(1, 11), 12, 13]]
    for after in range(15):
        assert await store.log_read("a", after) == [e for e in every if e[0] > after], after
    assert await store.log_last("a") == 13
    assert await store.log_read("b", 0) == [] and await store.log_last("b") == 0


async def test_a_batch_written_again_replaces_itself(store: Any) -> None:
    """A flush that failed is retried with what came since: the entries read once each."""
    await store.log_append("a", [_entry(1), _entry(2)])
    await store.log_append("a", [_entry(1), _entry(2), _entry(3)])
    assert await store.log_read("a", 0) == [_entry(1), _entry(2), _entry(3)]
    assert await store.log_last("a") == 3


async def test_trim_drops_the_entries_below_its_number_even_inside_a_batch(store: Any) -> None:
    """A turn's start keeps only the last entry of the turn before (its end), which shares a batch
    with that turn's last updates."""
    await store.log_append("a", [_entry(n) for n in range(1, 5)])
    await store.log_append("a", [_entry(n) for n in range(5, 9)])
    await store.log_answer("a", "answer:q", "{}")
    await store.log_trim("a", 7)
    assert await store.log_read("a", 0) == [_entry(7), _entry(8)]
    assert await store.log_last("a") == 8
    assert await store.log_answers("a") == {}
    await store.log_append("a", [_entry(9)])
    assert await store.log_read("a", 6) == [_entry(7), _entry(8), _entry(9)]
    await store.log_trim("a", 10)  # past the end: all gone
    assert await store.log_read("a", 0) == [] and await store.log_last("a") == 0


async def test_a_text_with_a_line_break_reads_as_the_same_json(store: Any) -> None:
    """The log's texts are JSON: one written with line breaks (indented) reads back as that JSON."""
    await store.log_append("a", [(1, '{\n  "u": {"text": "two\\nlines"}\n}'), _entry(2)])
    read = await store.log_read("a", 0)
    assert [n for n, _ in read] == [1, 2] and read[1] == _entry(2)
    assert json.loads(read[0][1]) == {"u": {"text": "two\nlines"}}


async def test_the_sql_stores_write_a_batch_as_one_row(tmp_path: Path, postgres_url: str) -> None:
    """One insert per batch, not per streamed update (what the log cost a served turn)."""
    sqlite = SqliteStore(tmp_path / "s.sqlite3")
    postgres = PostgresStore(postgres_url)
    for store in (sqlite, postgres):
        await store.create(Session(id="a", cwd="/w"))
        await store.log_append("a", [_entry(n) for n in range(1, 201)])
        await store.close()
    with sqlite3.connect(tmp_path / "s.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM update_log").fetchone()[0] == 1
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT COUNT(*) FROM acpkit_update_log").fetchone() == (1,)


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
    assert versions == [1, 2, 3, 4]


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
