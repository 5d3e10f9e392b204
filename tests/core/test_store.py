"""Session stores: memory, SQLite and Postgres behave the same; SQLite and Postgres are atomic and shareable.

The `store` tests run on all three, the `durable` ones on SQLite and Postgres (a throwaway cluster
from `tests/postgres_cluster.py`, one schema per test: skipped without Postgres, failed in CI).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import sqlite3
import stat
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acpkit_core.config import AgentOptions
from acpkit_core.errors import SessionNotFoundError
from acpkit_core.runner.types import HttpMcpServer, Session, StdioMcpServer
from acpkit_core.server import AcpAgent
from acpkit_core.store import (
    InvalidCursorError,
    MemoryStore,
    SchemaTooNewError,
    SessionStore,
    SqliteStore,
    TurnBusyError,
    default_store_path,
    open_store,
)
from acpkit_core.testing import AcpTestClient, ScriptedRunner


def _session(sid: str, cwd: str = "/work", updated: str = "2026-01-01T00:00:00.000000Z") -> Session:
    return Session(
        id=sid,
        cwd=cwd,
        mcp_servers=(
            StdioMcpServer(name="fs", command="/bin/fs", args=("-v",), env={"A": "1"}),
            HttpMcpServer(name="web", url="http://x", headers={"H": "v"}),
        ),
        additional_directories=("/extra",),
        mode_id="agentic",
        config={"mode": "agentic", "flag": True},
        state={"history": [{"role": "user", "text": "hi"}]},
        title="t",
        created_at=updated,
        updated_at=updated,
    )


def _spec(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """What `open_store` takes for a store of `kind` (a fresh database each test)."""
    if kind == "memory":
        return "memory"
    if kind == "sqlite":
        return str(tmp_path / "s.sqlite3")
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    s = open_store(_spec(request.param, request, tmp_path))
    yield s
    await s.close()


@pytest.fixture(params=["sqlite", "postgres"])
def durable(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The `open_store` spec of a database other processes can open too (SQLite file, Postgres URL)."""
    return _spec(request.param, request, tmp_path)


async def test_round_trip(store: SessionStore) -> None:
    original = _session("a")
    await store.create(original, server={"permissions": {"allow_always": ["x"], "reject_always": []}})
    got = await store.get("a")
    # Secret values (MCP env and headers) are never stored: names, commands and URLs are.
    assert got.session == replace(
        original,
        mcp_servers=(
            StdioMcpServer(name="fs", command="/bin/fs", args=("-v",)),
            HttpMcpServer(name="web", url="http://x"),
        ),
    )
    assert got.server == {"permissions": {"allow_always": ["x"], "reject_always": []}}
    assert got.session is not original


async def test_unknown_session(store: SessionStore) -> None:
    with pytest.raises(SessionNotFoundError) as info:
        await store.get("nope")
    assert "nope" in str(info.value)
    with pytest.raises(SessionNotFoundError):
        await store.transcript("nope")


async def test_transcript_append_and_reset(store: SessionStore) -> None:
    s = _session("a")
    await store.create(s)
    await store.save(s, append=[{"n": 1}, {"n": 2}])
    await store.save(s, append=[{"n": 3}])
    assert await store.transcript("a") == [{"n": 1}, {"n": 2}, {"n": 3}]
    await store.save(s, append=[{"n": 4}], reset_transcript=True)
    assert await store.transcript("a") == [{"n": 4}]
    s.state["x"] = 1
    await store.save(s)  # server omitted: kept
    assert (await store.get("a")).session.state["x"] == 1


async def test_transcript_text_comes_back_exactly(store: SessionStore) -> None:
    s = _session("a")
    odd = [{"text": 'naïve ☃ 𝄞 \n\t "q" \\'}, {"text": "a\ud800b"}, {"n": [1.5, None, True, {"k": "v"}]}]
    await store.create(s, transcript=odd[:1])
    await store.save(s, append=odd[1:])
    assert await store.transcript("a") == odd


async def test_list_filter_order_and_paging(store: SessionStore) -> None:
    for i in range(7):
        await store.create(_session(f"s{i}", cwd="/a" if i % 2 else "/b", updated=f"2026-01-01T00:00:0{i}.000000Z"))
    await store.create(_session("tie", cwd="/a", updated="2026-01-01T00:00:05.000000Z"))
    page = await store.list()
    assert [s.id for s in page.sessions][:3] == ["s6", "s5", "tie"]
    only_a = await store.list(cwd="/a")
    assert [s.id for s in only_a.sessions] == ["s5", "tie", "s3", "s1"]
    seen: list[str] = []
    cursor: str | None = None
    while True:
        p = await store.list(cursor=cursor, limit=3)
        seen += [s.id for s in p.sessions]
        cursor = p.next_cursor
        if cursor is None:
            break
    assert seen == [s.id for s in page.sessions]
    assert len(seen) == 8
    assert (await store.list(cwd="/nowhere")).sessions == []
    with pytest.raises(InvalidCursorError):
        await store.list(cursor="garbage!!")


async def test_owner_round_trips_and_filters_the_list(store: SessionStore) -> None:
    """A remote principal's sessions carry its name; `list(owner=...)` keeps only that principal's."""
    for i, owner in enumerate(["alice", "bob", None, "alice"]):
        session = _session(f"o{i}", updated=f"2026-01-01T00:00:0{i}.000000Z")
        session.owner = owner
        await store.create(session)
    assert (await store.get("o1")).session.owner == "bob"
    assert (await store.get("o2")).session.owner is None
    assert [s.id for s in (await store.list(owner="alice")).sessions] == ["o3", "o0"]
    assert [s.id for s in (await store.list(owner="alice", limit=1)).sessions] == ["o3"]
    assert [s.id for s in (await store.list(owner="carol")).sessions] == []
    assert len((await store.list()).sessions) == 4


async def test_delete(store: SessionStore) -> None:
    await store.create(_session("a"), transcript=[{"n": 0}])
    await store.delete("a")
    with pytest.raises(SessionNotFoundError):
        await store.get("a")
    await store.delete("a")


async def test_session_id_is_never_a_path(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.sqlite3")
    evil = "../../etc/passwd'; DROP TABLE sessions; --"
    await store.create(_session(evil))
    assert (await store.get(evil)).session.id == evil
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("s.sqlite3")) == []
    await store.close()


def test_default_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ACPKIT_STATE_DIR", str(tmp_path / "st"))
    assert default_store_path() == tmp_path / "st" / "sessions.sqlite3"
    monkeypatch.delenv("ACPKIT_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_store_path() == tmp_path / "xdg" / "acpkit" / "sessions.sqlite3"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_store_path() == tmp_path / "home" / ".local" / "state" / "acpkit" / "sessions.sqlite3"


async def test_open_store(tmp_path: Path) -> None:
    assert isinstance(open_store("memory"), MemoryStore)
    s = open_store(None)
    assert s.path is not None and s.path.name == "sessions.sqlite3" and s.path.exists()
    await s.close()
    p = open_store(str(tmp_path / "x.db"))
    assert p.path == (tmp_path / "x.db").resolve()
    await p.close()
    m = MemoryStore()
    assert open_store(m) is m


async def test_sqlite_is_in_wal_mode(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.sqlite3")
    await store.create(_session("a"))
    mode = sqlite3.connect(tmp_path / "s.sqlite3").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    await store.close()


async def test_a_failed_save_writes_nothing(durable: str) -> None:
    store = open_store(durable)
    s = _session("a")
    await store.create(s)
    s.state["turn"] = 2
    with pytest.raises(TypeError):
        await store.save(s, append=[{"bad": object()}])  # not JSON: nothing of the turn is written
    got = await store.get("a")
    assert "turn" not in got.session.state
    assert await store.transcript("a") == []
    await store.close()


def _workers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("acpkit-sqlite")}


async def test_sqlite_lock_held_elsewhere_does_not_block_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = SqliteStore(path, timeout=3.0)
    s = _session("a")
    await store.create(s)
    other = sqlite3.connect(path, isolation_level=None)  # another agent process's connection
    other.execute("BEGIN IMMEDIATE")  # ... holding the write lock
    try:
        save = asyncio.create_task(store.save(s, append=[{"n": 1}]))
        later_read = asyncio.create_task(store.transcript("a"))  # queued behind the save
        loop = asyncio.get_running_loop()
        ticks = 0
        deadline = loop.time() + 0.5
        while loop.time() < deadline:
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks >= 10  # the loop kept running (a blocked loop gets one or two)
        assert not save.done() and not later_read.done()  # the save is waiting for the lock
    finally:
        other.execute("COMMIT")
        other.close()
    await asyncio.wait_for(save, 2.0)
    assert await asyncio.wait_for(later_read, 2.0) == [{"n": 1}]  # calls run in the order made
    assert await store.transcript("a") == [{"n": 1}]
    await store.close()


async def test_sqlite_runs_on_its_worker_and_close_stops_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    statement_threads: set[str] = set()
    connect = sqlite3.connect

    def traced_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = connect(*args, **kwargs)
        db.set_trace_callback(lambda _sql: statement_threads.add(threading.current_thread().name))
        statement_threads.add(threading.current_thread().name)
        return db

    monkeypatch.setattr(sqlite3, "connect", traced_connect)
    path = tmp_path / "s.sqlite3"
    before = _workers()
    store = SqliteStore(path)
    ours = _workers() - before
    assert len(ours) == 1
    await store.create(_session("a"), transcript=[{"n": 0}])
    await store.save(_session("a"), append=[{"n": 1}])
    assert (await store.get("a")).session.id == "a"
    assert await store.transcript("a") == [{"n": 0}, {"n": 1}]
    assert len((await store.list()).sessions) == 1
    assert statement_threads == {t.name for t in ours}  # never the loop's thread
    assert path.with_name("s.sqlite3-wal").exists()

    await store.close()
    assert not ours & set(threading.enumerate())  # the worker thread is gone
    assert not path.with_name("s.sqlite3-wal").exists()  # the last connection closed (WAL checkpointed)
    await store.close()  # closing twice is harmless
    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: store.get("a"),
        lambda: store.transcript("a"),
        lambda: store.list(),
        lambda: store.save(_session("a")),
        lambda: store.create(_session("b")),
        lambda: store.delete("a"),
    ]
    for call in calls:
        with pytest.raises(sqlite3.ProgrammingError, match=r"session store .* is closed"):
            await call()
    assert store.path == path.resolve()
    monkeypatch.undo()
    reopened = SqliteStore(path)
    assert await reopened.transcript("a") == [{"n": 0}, {"n": 1}]
    await reopened.close()


async def test_sqlite_unusable_file_raises_on_open(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    path.write_bytes(b"not a database, " * 100)
    before = _workers()
    with pytest.raises(sqlite3.DatabaseError, match="not a database"):
        SqliteStore(path)
    assert _workers() <= before  # no worker left behind


async def test_sqlite_file_of_a_newer_acp_kit_is_refused_and_left_alone(tmp_path: Path) -> None:
    """Two versions sharing a state directory: the older one does not read or write what the newer
    one migrated, and says which to upgrade."""
    path = tmp_path / "s.sqlite3"
    store = SqliteStore(path)
    await store.create(_session("a"))
    await store.close()
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA user_version=99")
    before = _workers()
    with pytest.raises(SchemaTooNewError) as refused:
        SqliteStore(path)
    assert str(refused.value) == (
        f"the session store {path} is at schema version 99, newer than this acpkit-core's (4): "
        "upgrade acpkit-core here, or give this agent a state directory of its own (ACPKIT_STATE_DIR)"
    )
    assert _workers() <= before
    # an agent on it answers its client with the same words, and stays up
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=str(path)))) as c:
        await c.initialize()
        for _ in range(2):
            with pytest.raises(RequestError) as answered:
                await c.new_session()
            assert answered.value.code == -32603
            assert str(answered.value) == f"agent misconfigured: {refused.value}"
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 99
        assert db.execute("SELECT id FROM sessions").fetchall() == [("a",)]


def _writer(spec: str, prefix: str, n: int) -> None:
    import asyncio

    async def go() -> None:
        store = open_store(spec)
        for i in range(n):
            s = _session(f"{prefix}{i}")
            await store.create(s)
            await store.save(s, append=[{"i": i}])
            await store.save(_session("shared"), append=[{"from": prefix, "i": i}])
        await store.close()

    asyncio.run(go())


async def test_two_processes_share_one_database(durable: str) -> None:
    first = open_store(durable)
    await first.create(_session("shared"))
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(durable, p, 25)) for p in ("x", "y")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    page = await first.list(limit=100)
    assert len(page.sessions) == 51
    shared = await first.transcript("shared")
    assert sorted((u["from"], u["i"]) for u in shared) == sorted((p, i) for p in "xy" for i in range(25))
    await first.close()


# --- incremental saves, leases, files --------------------------------------------------------------


def _forbid_rewrites(spec: str) -> None:
    """Make any UPDATE or DELETE of stored history and transcript rows fail (append-only check)."""
    if not spec.startswith("postgresql://"):
        db = sqlite3.connect(spec)
        for table in ("history", "transcript"):
            for op in ("UPDATE", "DELETE"):
                db.execute(
                    f"CREATE TRIGGER no_{op.lower()}_{table} BEFORE {op} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, '{table} rows are rewritten'); END"
                )
        db.commit()
        db.close()
        return
    import psycopg

    with psycopg.connect(spec, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION no_rewrite() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION '% rows are rewritten', TG_TABLE_NAME; END $$"
        )
        for table in ("acpkit_history", "acpkit_transcript"):
            conn.execute(
                f"CREATE TRIGGER no_rewrite BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION no_rewrite()"
            )


def _history_rows(spec: str, session_id: str) -> list[tuple[int, str]]:
    """The stored history rows (seq, item) of a session, read by hand."""
    if not spec.startswith("postgresql://"):
        db = sqlite3.connect(spec)
        rows = db.execute("SELECT seq, item FROM history WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
        db.close()
        return [(int(a), str(b)) for a, b in rows]
    import psycopg

    with psycopg.connect(spec) as conn:
        cur = conn.execute("SELECT seq, item FROM acpkit_history WHERE session_id = %s ORDER BY seq", (session_id,))
        return [(int(a), str(b)) for a, b in cur.fetchall()]


async def test_a_turn_appends_and_never_rewrites(durable: str) -> None:
    store = open_store(durable)
    s = _session("a")
    s.history.append({"m": 0}, {"m": 1})
    await store.create(s)
    assert list(s.history.pending) == []
    _forbid_rewrites(durable)
    for turn in range(2, 6):
        s.history.append({"m": turn})
        await store.save(s, append=[{"sessionUpdate": "x", "turn": turn}])
    rows = _history_rows(durable, "a")
    assert rows == [(i, f'{{"m":{m}}}') for i, m in enumerate([0, 1, 2, 3, 4, 5])]
    got = await store.get("a")
    assert got.version == 4
    assert got.session.history.take_loaded() == [{"m": m} for m in [0, 1, 2, 3, 4, 5]]
    assert [u["turn"] for u in await store.transcript("a")] == [2, 3, 4, 5]
    await store.close()


async def test_a_replaced_history_is_rewritten_once(store: SessionStore) -> None:
    s = _session("a")
    s.history.append({"m": 0}, {"m": 1})
    await store.create(s)
    s.history.replace([{"m": "x"}])
    await store.save(s)
    s.history.append({"m": "y"})
    await store.save(s)
    assert (await store.get("a")).session.history.take_loaded() == [{"m": "x"}, {"m": "y"}]
    s.history.clear()
    await store.save(s)
    assert (await store.get("a")).session.history.take_loaded() == []


async def test_turn_lease(store: SessionStore) -> None:
    await store.create(_session("a"))
    assert (await store.begin_turn("a", "one")).interrupted is False
    assert (await store.begin_turn("a", "one")).version == 0  # the holder may take it again
    with pytest.raises(TurnBusyError, match="is running a turn in another window"):
        await store.begin_turn("a", "two")
    assert await store.recover_turn("a") is False  # a live lease is not an interrupted turn
    await store.save(_session("a"), release="one")
    start = await store.begin_turn("a", "two")
    assert (start.version, start.interrupted) == (1, False)
    await store.end_turn("a", "two")
    # A lease that expired (its holder stopped renewing it) marks an interrupted turn, once.
    await store.begin_turn("a", "three", lease_seconds=-1)
    assert (await store.begin_turn("a", "four")).interrupted is True
    await store.begin_turn("a", "four", lease_seconds=-1)
    assert await store.recover_turn("a") is True
    assert await store.recover_turn("a") is False
    with pytest.raises(SessionNotFoundError):
        await store.begin_turn("missing", "one")


def _hold_lease_and_wait(spec: str, ready: Any) -> None:
    async def go() -> None:
        store = open_store(spec)
        await store.begin_turn("a", "other-process")
        ready.set()
        await asyncio.sleep(60)

    asyncio.run(go())


async def test_a_lease_dies_with_its_process(durable: str) -> None:
    store = open_store(durable)
    await store.create(_session("a"))
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold_lease_and_wait, args=(durable, ready))
    holder.start()
    assert ready.wait(60)
    with pytest.raises(TurnBusyError, match=f"process {holder.pid} on"):
        await store.begin_turn("a", "me")
    holder.kill()
    holder.join(10)
    # Postgres drops the dead process's lock when it sees the connection close (a few ms later).
    for _ in range(100):
        with contextlib.suppress(TurnBusyError):
            assert (await store.begin_turn("a", "me")).interrupted is True
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the dead process's lease was never taken over")
    await store.close()


async def test_files_are_private_and_hold_no_secrets(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = tmp_path / "elsewhere" / "state" / "s.sqlite3"
        store = SqliteStore(path)
        s = _session("a")
        s.mcp_servers = (
            StdioMcpServer(name="fs", command="/bin/fs", env={"API_KEY": "sk-secret-value-1"}),
            HttpMcpServer(name="web", url="http://x", headers={"Authorization": "Bearer secret-token-2"}),
        )
        await store.create(s)
        await store.save(s, append=[{"sessionUpdate": "x"}])
        files = [p for p in path.parent.iterdir() if p.name.startswith("s.sqlite3")]
        assert {p.name for p in files} >= {"s.sqlite3", "s.sqlite3-wal", "s.sqlite3-shm"}
        assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == dict.fromkeys((p.name for p in files), 0o600)
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        data = b"".join(p.read_bytes() for p in files)
        assert b"API_KEY" in data and b"Authorization" in data  # names are kept
        assert b"sk-secret-value-1" not in data and b"secret-token-2" not in data
        await store.close()
    finally:
        os.umask(old)


async def test_an_existing_readable_file_is_narrowed(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    path.touch(mode=0o644)
    path.chmod(0o644)
    store = SqliteStore(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    await store.close()


async def test_deleted_sessions_give_their_space_back(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = SqliteStore(path)
    for i in range(20):
        s = _session(f"s{i}")
        s.history.append({"blob": "x" * 100_000})
        await store.create(s, transcript=[{"sessionUpdate": "x", "text": "y" * 100_000}])
    await store.close()
    full = path.stat().st_size
    assert full > 4_000_000
    store = SqliteStore(path)
    for i in range(20):
        await store.delete(f"s{i}")
    await store.close()
    assert path.stat().st_size < full / 10


async def test_an_older_file_is_migrated_without_its_secrets(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL, updated_at TEXT NOT NULL,"
        " data TEXT NOT NULL, server TEXT NOT NULL);"
        "CREATE TABLE transcript (session_id TEXT NOT NULL, seq INTEGER NOT NULL, updates TEXT NOT NULL,"
        " PRIMARY KEY (session_id, seq));"
    )
    data = {
        "id": "a",
        "cwd": "/w",
        "mcp_servers": [{"transport": "stdio", "name": "fs", "command": "/bin/fs", "env": {"K": "old-secret-3"}}],
        "state": {"history": [1]},
    }
    db.execute("INSERT INTO sessions VALUES ('a', '/w', 't', ?, '{}')", (json.dumps(data),))
    db.execute("INSERT INTO transcript VALUES ('a', 0, '[{\"sessionUpdate\": \"x\"}]')")
    db.commit()
    db.close()
    store = SqliteStore(path)
    got = await store.get("a")
    assert got.session.state == {"history": [1]}
    assert got.session.mcp_servers == (StdioMcpServer(name="fs", command="/bin/fs"),)
    assert await store.transcript("a") == [{"sessionUpdate": "x"}]
    await store.close()
    assert b"old-secret-3" not in path.read_bytes()


async def test_a_big_value_does_not_stay_in_the_connection(tmp_path: Path) -> None:
    """SQLite keeps a cached statement's last parameters and read buffers: after a big one, a new connection."""
    store = SqliteStore(tmp_path / "s.sqlite3")
    s = _session("a")
    s.history.append({"m": "small"})
    await store.create(s)
    first = store._db  # pyright: ignore[reportPrivateUsage]
    await store.save(s, append=[{"sessionUpdate": "x"}])
    assert store._db is first  # pyright: ignore[reportPrivateUsage]
    s.history.append({"m": "y" * 1_200_000})
    await store.save(s)
    second = store._db  # pyright: ignore[reportPrivateUsage]
    assert second is not first
    got = await store.get("a")  # reading it back is as big: another connection
    assert store._db is not second  # pyright: ignore[reportPrivateUsage]
    assert [len(item["m"]) for item in got.session.history.take_loaded() or []] == [5, 1_200_000]
    await store.append_transcript("a", [{"sessionUpdate": "x"}])  # and the store goes on working
    assert len(await store.transcript("a")) == 2
    await store.close()
