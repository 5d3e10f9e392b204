"""What only the Postgres store has: schema migrations, its URL, its liveness lock across replicas.

The behaviour it shares with SQLite (round trips, paging, incremental saves, leases, two processes)
is tested on both stores in `test_store.py`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest
from acpkit_core.errors import SessionNotFoundError
from acpkit_core.runner.types import Session
from acpkit_core.store import PostgresStore, SchemaTooNewError, TurnBusyError, open_store
from acpkit_core.store.postgres_schema import MIGRATIONS, migrate


def _schema_version(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [int(v) for (v,) in conn.execute("SELECT version FROM acpkit_schema_version ORDER BY version")]


async def test_open_store_takes_a_postgres_url(postgres_url: str) -> None:
    secret_url = postgres_url.replace("acpkit@", "acpkit:hunter2@")
    store = open_store(secret_url)
    assert isinstance(store, PostgresStore)
    assert store.path is None and store.url == secret_url
    assert "hunter2" not in repr(store) and "127.0.0.1" in repr(store)
    await store.close()


async def test_the_schema_is_migrated_once_and_versioned(postgres_url: str) -> None:
    first, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    await first.create(Session(id="a", cwd="/w"))
    assert (await second.get("a")).session.cwd == "/w"  # the second opening found the schema done
    assert _schema_version(postgres_url) == [m[0] for m in MIGRATIONS]
    await first.close()
    await second.close()


async def test_later_steps_apply_in_order_and_a_newer_schema_is_refused(postgres_url: str) -> None:
    steps: list[tuple[int, Any]] = [
        (1, "CREATE TABLE acpkit_probe (n integer)"),
        (2, "INSERT INTO acpkit_probe VALUES (2)"),
    ]
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        assert await migrate(conn, steps[:1]) == 1
        assert await migrate(conn, steps) == 2  # only step 2 runs: step 1 again would fail
        assert await migrate(conn, steps) == 2
        rows = await (await conn.execute("SELECT n FROM acpkit_probe")).fetchall()
        assert rows == [(2,)]
        with pytest.raises(SchemaTooNewError, match="at schema version 2, newer than this acpkit-core's \\(1\\)"):
            await migrate(conn, steps[:1])
        # A failed step leaves the schema as it was.
        with pytest.raises(psycopg.errors.SyntaxError):
            await migrate(conn, [*steps, (3, "CREATE TABL oops")])
    assert _schema_version(postgres_url) == [1, 2]


async def test_a_closed_store_refuses_calls(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    await store.create(Session(id="a", cwd="/w"))
    await store.close()
    await store.close()
    with pytest.raises(RuntimeError, match=r"the session store postgresql://acpkit@127.0.0.1:\d+/postgres is closed"):
        await store.get("a")
    reopened = PostgresStore(postgres_url)
    assert (await reopened.get("a")).session.id == "a"
    with pytest.raises(SessionNotFoundError):
        await reopened.begin_turn("missing", "me")
    await reopened.close()


async def test_an_unreachable_database_is_a_clear_error(postgres_server: str) -> None:
    store = PostgresStore(postgres_server.replace("/postgres", "/no_such_db"), timeout=2)
    with pytest.raises(psycopg.OperationalError, match='database "no_such_db" does not exist'):
        await store.get("a")
    await store.close()


async def test_a_replica_on_another_machine_holds_its_lease_until_its_connection_goes(postgres_url: str) -> None:
    """A lease from another host cannot be checked by pid: its liveness lock says whether it lives."""
    a, b = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        await a.create(Session(id="s", cwd="/w"))
        await a.begin_turn("s", "replica-a")
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("UPDATE acpkit_leases SET host = 'elsewhere', pid = 1")
        with pytest.raises(TurnBusyError, match=r"process 1 on elsewhere"):
            await b.begin_turn("s", "replica-b")
        await a.close()  # its connections close: Postgres drops its liveness lock
        start = await _begin_when_released(b, "s", "replica-b")
        assert start.interrupted is True
    finally:
        await a.close()
        await b.close()


async def _begin_when_released(store: PostgresStore, session_id: str, owner: str) -> Any:
    """`begin_turn`, retried for a few seconds: the server ends a closed client's backend (and so
    drops its advisory lock) a moment after the socket closes, not at once."""
    deadline = asyncio.get_running_loop().time() + 5
    while True:
        try:
            return await store.begin_turn(session_id, owner)
        except TurnBusyError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.02)


async def test_a_lost_liveness_connection_is_restored_on_renewal(postgres_url: str) -> None:
    a, b = PostgresStore(postgres_url), PostgresStore(postgres_url)
    await a.create(Session(id="s", cwd="/w"))
    await a.begin_turn("s", "replica-a")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        # Terminate every backend holding one of our liveness locks (a network cut, a proxy restart).
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s",
            (0x41435053,),
        )
    await a.renew_turn("s", "replica-a")  # notices, reconnects, takes its lock again
    with pytest.raises(TurnBusyError):
        await b.begin_turn("s", "replica-b")
    await a.close()
    await b.close()
