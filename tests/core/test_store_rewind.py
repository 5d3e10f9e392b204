"""What the stores keep for rewinding: prompt marks, file changes, and the atomic rewind itself.

Every test runs on the memory, SQLite and Postgres stores (Postgres from `tests/postgres_cluster.py`:
skipped without it, failed in CI).
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from acpkit_core.runner.types import HistoryLog, Session
from acpkit_core.store import FileChange, PostgresStore, PromptMark, RewindStore, SessionStore, SqliteStore, open_store
from acpkit_core.store.postgres_schema import MIGRATIONS, migrate


def _spec(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if kind == "memory":
        return "memory"
    if kind == "sqlite":
        return str(tmp_path / "s.sqlite3")
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    s = open_store(_spec(request.param, request, tmp_path))
    assert isinstance(s, RewindStore)
    yield s
    await s.close()


def _update(n: int) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"u{n}"}, "messageId": "m"}


async def _three_turns(store: Any) -> Session:
    """A session with three prompts p1..p3: two history items and two transcript updates each."""
    session = Session(id="s", cwd="/w", state={"n": 0})
    await store.create(session)
    n = 0
    for turn in (1, 2, 3):
        mark = PromptMark(
            id=f"p{turn}", text=f"prompt {turn}", history_length=len(session.history), state={"n": turn - 1}
        )
        await store.add_prompt("s", mark, transcript=[_update(n)])  # the prompt's batch, with its mark
        await store.append_transcript("s", [_update(n + 1)])
        n += 2
        session.history.append({"m": f"q{turn}"}, {"m": f"a{turn}"})
        session.state = {"n": turn}
        await store.save(session)
    return session


async def test_prompts_are_listed_in_order_and_read_with_their_state(store: Any) -> None:
    await _three_turns(store)
    marks = await store.prompts("s")
    assert [(m.id, m.text, m.history_length) for m in marks] == [
        ("p1", "prompt 1", 0),
        ("p2", "prompt 2", 2),
        ("p3", "prompt 3", 4),
    ]
    assert all(m.state == {} for m in marks)  # listed without their state
    second = await store.prompt("s", "p2")
    assert second is not None and second.state == {"n": 1}
    assert await store.prompt("s", "nope") is None


async def test_a_file_change_keeps_its_first_before_and_last_after(store: Any) -> None:
    await _three_turns(store)
    await store.add_file_changes("s", [FileChange(prompt_id="p2", path="/w/a", before=None, after="one")])
    await store.add_file_changes(
        "s",
        [
            FileChange(prompt_id="p2", path="/w/a", before="ignored", after="two"),
            FileChange(prompt_id="p3", path="/w/b", before="nul \x00 and \udc80", after=None),
        ],
    )
    changes = await store.file_changes("s", ["p2", "p3"])
    assert changes == [
        FileChange(prompt_id="p2", path="/w/a", before=None, after="two"),
        FileChange(prompt_id="p3", path="/w/b", before="nul \x00 and \udc80", after=None),
    ]
    assert await store.file_changes("s", ["p1"]) == []


async def test_rewind_cuts_transcript_history_marks_and_files_at_once(store: Any) -> None:
    session = await _three_turns(store)
    await store.add_file_changes(
        "s",
        [
            FileChange(prompt_id="p1", path="/w/a", before="0", after="1"),
            FileChange(prompt_id="p2", path="/w/a", before="1", after="2"),
        ],
    )
    before = (await store.get("s")).version
    session.history.truncate(2)
    session.state = {"n": 1}
    version = await store.rewind(session, prompt_id="p2", keep_updates=3, server={"usage": {"x": 1}})
    assert version == before + 1
    got = await store.get("s")
    assert got.version == version
    assert got.session.history.take_loaded() == [{"m": "q1"}, {"m": "a1"}]
    assert got.session.state == {"n": 1}
    assert got.server == {"usage": {"x": 1}}
    assert [u["content"]["text"] for u in await store.transcript("s")] == ["u0", "u1", "u2"]
    assert [m.id for m in await store.prompts("s")] == ["p1"]
    assert [c.prompt_id for c in await store.file_changes("s", ["p1", "p2"])] == ["p1"]
    # the session goes on from there: the next prompt and items follow the kept ones
    await store.add_prompt("s", PromptMark(id="p4", history_length=2), transcript=[_update(9)])
    session.history.append({"m": "q4"})
    await store.save(session)
    got = await store.get("s")
    assert got.session.history.take_loaded() == [{"m": "q1"}, {"m": "a1"}, {"m": "q4"}]
    assert [u["content"]["text"] for u in await store.transcript("s")] == ["u0", "u1", "u2", "u9"]
    assert [m.id for m in await store.prompts("s")] == ["p1", "p4"]


async def test_rewind_to_an_unknown_prompt_changes_nothing(store: Any) -> None:
    session = await _three_turns(store)
    session.history.truncate(0)
    with pytest.raises(KeyError, match="not a recorded prompt"):
        await store.rewind(session, prompt_id="gone", keep_updates=0)
    assert len((await store.get("s")).session.history) == 6
    assert len(await store.transcript("s")) == 6


async def test_a_straddling_transcript_batch_is_cut_inside(store: Any) -> None:
    session = Session(id="s", cwd="/w")
    await store.create(session)
    await store.add_prompt("s", PromptMark(id="p1"))
    await store.append_transcript("s", [_update(0), _update(1), _update(2)])
    await store.rewind(session, prompt_id="p1", keep_updates=2)
    assert [u["content"]["text"] for u in await store.transcript("s")] == ["u0", "u1"]


async def test_clear_delete_and_recreate_forget_the_marks(store: Any) -> None:
    session = await _three_turns(store)
    await store.add_file_changes("s", [FileChange(prompt_id="p1", path="/w/a", before="0", after="1")])
    await store.save(session, reset_transcript=True)  # `/clear`
    assert await store.prompts("s") == []
    assert await store.file_changes("s", ["p1"]) == []
    await store.add_prompt("s", PromptMark(id="p9"))
    await store.delete("s")
    await store.create(Session(id="s", cwd="/w"))
    assert await store.prompts("s") == []


async def test_copy_prompts_for_a_fork(store: Any) -> None:
    await _three_turns(store)
    await store.add_file_changes(
        "s",
        [
            FileChange(prompt_id="p1", path="/w/a", before="0", after="1"),
            FileChange(prompt_id="p3", path="/w/b", before=None, after="x"),
        ],
    )
    await store.create(Session(id="f", cwd="/w"))
    await store.copy_prompts("s", "f", before="p3")
    assert [m.id for m in await store.prompts("f")] == ["p1", "p2"]
    assert (await store.prompt("f", "p2")).state == {"n": 1}  # pyright: ignore[reportOptionalMemberAccess]
    assert await store.file_changes("f", ["p1", "p2", "p3"]) == [
        FileChange(prompt_id="p1", path="/w/a", before="0", after="1")
    ]
    await store.create(Session(id="g", cwd="/w"))
    await store.copy_prompts("s", "g")
    assert [m.id for m in await store.prompts("g")] == ["p1", "p2", "p3"]
    assert [m.id for m in await store.prompts("s")] == ["p1", "p2", "p3"]  # the source is left as it was


async def test_a_truncated_history_is_cut_by_a_plain_save(store: SessionStore) -> None:
    session = Session(id="h", cwd="/w")
    session.history.append(*({"i": i} for i in range(5)))
    await store.create(session)
    stored = (await store.get("h")).session
    log: HistoryLog = stored.history
    assert len(log) == 5
    log.truncate(3)
    log.append({"i": "new"})
    await store.save(stored)
    assert (await store.get("h")).session.history.take_loaded() == [{"i": 0}, {"i": 1}, {"i": 2}, {"i": "new"}]


def test_history_log_truncate() -> None:
    log = HistoryLog([1, 2, 3])
    log.append(4, 5)
    log.truncate(4)  # within the pending items: nothing stored is dropped
    assert (len(log), log.cut, list(log.pending)) == (4, None, [4])
    log.truncate(1)
    assert (len(log), log.cut, list(log.pending)) == (1, 1, [])
    assert log.take_loaded() == [1]
    log.truncate(5)  # longer than the log: nothing to do
    assert len(log) == 1
    log.saved(0)
    assert log.cut is None
    with pytest.raises(ValueError, match=">= 0"):
        log.truncate(-1)


async def test_a_sqlite_file_of_schema_2_gets_the_rewind_tables(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    store = SqliteStore(path)
    await store.create(Session(id="a", cwd="/w"))
    await store.close()
    with sqlite3.connect(path) as db:  # as version 2 left it
        db.execute("DROP TABLE prompts")
        db.execute("DROP TABLE file_changes")
        db.execute("PRAGMA user_version=2")
    store = SqliteStore(path)
    await store.add_prompt("a", PromptMark(id="p1", text="hi"))
    assert [m.text for m in await store.prompts("a")] == ["hi"]
    assert (await store.get("a")).session.cwd == "/w"
    await store.close()


async def test_a_postgres_schema_at_step_1_gets_step_2(postgres_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        assert await migrate(conn, MIGRATIONS[:1]) == 1
    store = PostgresStore(postgres_url)
    await store.create(Session(id="a", cwd="/w"))
    await store.add_prompt("a", PromptMark(id="p1", text="hi"))
    assert [m.text for m in await store.prompts("a")] == ["hi"]
    await store.close()
    with psycopg.connect(postgres_url) as conn:
        versions = [int(v) for (v,) in conn.execute("SELECT version FROM acpkit_schema_version ORDER BY version")]
    assert versions == [m[0] for m in MIGRATIONS]  # step 2, then the steps after it
