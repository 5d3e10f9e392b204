"""Sessions in Postgres: one database shared by every replica of a served agent.

Needs the `postgres` extra (`pip install "acpkit-core[postgres]"`: psycopg 3 and psycopg-pool);
importing this module does not import them, so stdio users install nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

from ..errors import SessionNotFoundError, UserError
from ..runner.types import Session
from .base import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_PAGE_SIZE,
    JsonDict,
    SessionPage,
    StoredSession,
    TurnBusyError,
    TurnStart,
    decode_cursor,
    dumps_updates,
    encode_cursor,
    session_from_json,
    session_to_json,
)
from .postgres_log import LOG_TABLES, PostgresLog
from .postgres_rewind import REWIND_TABLES, PostgresRewinding, cut_history

if TYPE_CHECKING:
    from pathlib import Path

    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool
from .postgres_schema import migrate

_T = TypeVar("_T")

__all__ = ["PostgresStore", "is_postgres_url"]


_HOLDER_LOCKS = 0x41435053  # "ACPS": the namespace of the advisory locks that mark live processes
_NOW: Final = "extract(epoch from clock_timestamp())"
"""The database's clock (seconds): leases expire by one clock, whatever the replicas' clocks say."""

_HOST = socket.gethostname()


def is_postgres_url(spec: str) -> bool:
    """True for a `postgresql://` or `postgres://` connection URL."""
    return spec.startswith(("postgresql://", "postgres://"))


def _redacted(url: str) -> str:
    """The URL without its password (for messages)."""
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(url)
    user = f"{params['user']}@" if params.get("user") else ""
    port = f":{params['port']}" if params.get("port") else ""
    return f"postgresql://{user}{params.get('host') or ''}{port}/{params.get('dbname') or ''}"


class PostgresStore(PostgresLog, PostgresRewinding):
    """Sessions in a Postgres database, shared by any number of agent processes on any machines.

    The same behaviour as [`SqliteStore`][acpkit_core.store.SqliteStore]: history and transcript
    are append-only rows, every write is one transaction, and a turn runs under a lease row so
    two processes never run turns of one session at the same time. Selected by
    `AgentOptions(store="postgresql://...")` or `acpkit run/serve --store postgresql://...`.

    Leases: each store holds one extra connection with a session-level advisory lock that marks
    its process as alive, and every lease names that lock. A process that dies loses its
    connection, Postgres drops the lock, and the next `begin_turn` takes the lease over at once
    and reports the turn as interrupted. When the machine itself is lost (no connection reset
    reaches the server) the lease expires `lease_seconds` after its last renewal, by the
    database's clock. The pooler in front of Postgres, if any, must keep sessions (pgbouncer's
    `pool_mode=session`), or advisory locks mean nothing.

    Nothing touches the network until the first call (in the serving event loop): it opens the
    liveness connection, applies the schema [migrations][acpkit_core.store.postgres_schema.migrate],
    then opens a pool of `min_size` to `max_size` connections. The tables are created in the
    connection's `search_path` schema (`?options=-csearch_path%3Dmyschema` in the URL picks one).
    """

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 10.0) -> None:
        """Remember the URL (checked here; nothing connects before the first call).

        Raises `UserError` when the `postgres` extra is not installed.
        """
        try:
            from psycopg.conninfo import conninfo_to_dict
        except ImportError as exc:  # pragma: no cover - the test environment has the extra
            raise UserError(
                'the Postgres session store needs the postgres extra: pip install "acpkit-core[postgres]"'
            ) from exc
        conninfo_to_dict(url)  # a malformed URL raises psycopg.ProgrammingError here
        self._url = url
        self._min_size = min_size
        self._max_size = max_size
        self._timeout = timeout
        self._pool: AsyncConnectionPool[Any] | None = None
        self._alive: AsyncConnection[Any] | None = None
        self._holder = 0
        self._opening = asyncio.Lock()
        self._closed = False

    @property
    def path(self) -> Path | None:
        """Always `None`: the sessions are not in a local file."""
        return None

    @property
    def url(self) -> str:
        """The connection URL (adapters open their own Postgres resources with it, such as LangGraph's saver)."""
        return self._url

    def __repr__(self) -> str:
        return f"PostgresStore({_redacted(self._url)!r})"

    # --- connections ------------------------------------------------------------------------------

    async def _ready(self) -> AsyncConnectionPool[Any]:
        if self._closed:
            raise self._closed_error()
        if self._pool is not None:
            return self._pool
        async with self._opening:
            if self._closed:
                raise self._closed_error()
            if self._pool is None:
                from psycopg_pool import AsyncConnectionPool

                alive = await self._connect_alive()
                pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
                    self._url,
                    min_size=self._min_size,
                    max_size=self._max_size,
                    kwargs={"autocommit": True},
                    timeout=self._timeout,
                    open=False,
                    name="acpkit-store",
                )
                try:
                    await migrate(alive)
                    await pool.open(wait=True, timeout=self._timeout)
                except BaseException:
                    await pool.close()
                    await alive.close()
                    raise
                self._alive, self._pool = alive, pool
            return self._pool

    async def _connect_alive(self) -> AsyncConnection[Any]:
        """A connection holding an advisory lock of our own: while it lives, so does this process."""
        from psycopg import AsyncConnection

        conn = await AsyncConnection.connect(self._url, autocommit=True, connect_timeout=max(1, int(self._timeout)))
        try:
            for _ in range(100):
                holder = self._holder or random.randint(-(2**31), 2**31 - 1)
                cur = await conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (_HOLDER_LOCKS, holder))
                row = await cur.fetchone()
                if row and row[0]:
                    self._holder = holder
                    return conn
                self._holder = 0  # taken (by a process that chose the same number): choose again
            raise RuntimeError("could not take a process lock in the session store")  # pragma: no cover
        except BaseException:
            await conn.close()
            raise

    async def _check_alive(self, *, ping: bool) -> None:
        """Reconnect the liveness connection if it broke (its lock went with it); `ping` asks the server."""
        alive = self._alive
        if not ping and alive is not None and not alive.closed and not alive.broken:
            return
        async with self._opening:  # one reconnection for every caller that noticed
            alive = self._alive
            if alive is not None:
                try:
                    if not alive.closed and not alive.broken:
                        await alive.execute("SELECT 1")
                        return
                except Exception:
                    pass
                await alive.close()
            if not self._closed:
                self._alive = await self._connect_alive()

    def _closed_error(self) -> RuntimeError:
        return RuntimeError(f"the session store {_redacted(self._url)} is closed")

    # --- the SessionStore API ---------------------------------------------------------------------

    async def create(
        self, session: Session, *, server: JsonDict | None = None, transcript: Sequence[JsonDict] = ()
    ) -> None:
        """Store a new session (with the history and transcript a fork starts from)."""
        row = session_to_json(session)
        data = json.dumps(row)
        lines = dumps_updates(transcript) if transcript else None
        items = [dumps_updates(item) for item in session.history.pending]
        pool = await self._ready()
        async with pool.connection() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO acpkit_sessions (id, cwd, owner, updated_at, data, server)"
                " VALUES (%s, %s, %s, %s, %s, %s)",
                (session.id, session.cwd, row.get("owner"), session.updated_at, data, json.dumps(server or {})),
            )
            for table in ("acpkit_transcript", "acpkit_history", "acpkit_leases", *REWIND_TABLES):
                await conn.execute(f"DELETE FROM {table} WHERE session_id = %s", (session.id,))
            if lines is not None:
                await conn.execute(
                    "INSERT INTO acpkit_transcript (session_id, seq, updates) VALUES (%s, 0, %s)", (session.id, lines)
                )
            await _append_history(conn, session.id, items)
        session.history.saved(len(items))

    async def get(self, session_id: str) -> StoredSession:
        """Read a session with its history (one statement: one snapshot)."""
        pool = await self._ready()
        async with pool.connection() as conn:
            cur = await conn.execute(
                "SELECT s.data, s.server, s.version,"
                " (SELECT array_agg(h.item ORDER BY h.seq) FROM acpkit_history h WHERE h.session_id = s.id)"
                " FROM acpkit_sessions s WHERE s.id = %s",
                (session_id,),
            )
            row = await cur.fetchone()
        if row is None:
            raise SessionNotFoundError(session_id)
        history = [json.loads(item) for item in row[3] or ()]
        return StoredSession(
            session=session_from_json(json.loads(row[0]), history), server=json.loads(row[1]), version=int(row[2])
        )

    async def save(
        self,
        session: Session,
        *,
        server: JsonDict | None = None,
        append: Sequence[JsonDict] = (),
        reset_transcript: bool = False,
        release: str | None = None,
    ) -> int:
        """Write the session row, its new history items and one transcript batch, atomically."""
        work, count = self._save_work(
            session, server=server, append=append, reset_transcript=reset_transcript, release=release
        )
        version = await self._write_call(work)
        session.history.saved(count)
        return version

    def _save_work(
        self,
        session: Session,
        *,
        server: JsonDict | None = None,
        append: Sequence[JsonDict] = (),
        reset_transcript: bool = False,
        release: str | None = None,
    ) -> tuple[Callable[[AsyncConnection[Any]], Awaitable[int]], int]:
        """What `save` writes, as work inside a transaction, and its history item count (serialized now)."""
        row_json = session_to_json(session)
        data = json.dumps(row_json)
        batch = dumps_updates(append) if append else None
        server_json = json.dumps(server) if server is not None else None
        log = session.history
        reset, cut = log.reset, log.cut
        items = [dumps_updates(item) for item in log.pending]

        async def work(conn: AsyncConnection[Any]) -> int:
            # The upsert locks the session row until commit: saves and appends of one session queue.
            cur = await conn.execute(
                "INSERT INTO acpkit_sessions AS s (id, cwd, owner, updated_at, data, server, version)"
                " VALUES (%(id)s, %(cwd)s, %(owner)s, %(updated_at)s, %(data)s, COALESCE(%(server)s, '{}'), 1)"
                " ON CONFLICT (id) DO UPDATE SET cwd = EXCLUDED.cwd, owner = EXCLUDED.owner,"
                " updated_at = EXCLUDED.updated_at,"
                " data = EXCLUDED.data, server = COALESCE(%(server)s, s.server), version = s.version + 1"
                " RETURNING s.version",
                {
                    "id": session.id,
                    "cwd": session.cwd,
                    "owner": row_json.get("owner"),
                    "updated_at": session.updated_at,
                    "data": data,
                    "server": server_json,
                },
            )
            row = await cur.fetchone()
            assert row is not None
            if reset_transcript:  # `/clear`: nothing earlier is left to rewind to
                for table in ("acpkit_transcript", *REWIND_TABLES):
                    await conn.execute(f"DELETE FROM {table} WHERE session_id = %s", (session.id,))
            if batch is not None:
                await _insert_transcript(conn, session.id, batch)
            if reset:
                await conn.execute("DELETE FROM acpkit_history WHERE session_id = %s", (session.id,))
            elif cut is not None:
                await cut_history(conn, session.id, cut)
            await _append_history(conn, session.id, items)
            if release is not None:
                await conn.execute(
                    "DELETE FROM acpkit_leases WHERE session_id = %s AND owner = %s", (session.id, release)
                )
            return int(row[0])

        return work, len(items)

    def _append_work(
        self, session_id: str, updates: Sequence[JsonDict]
    ) -> Callable[[AsyncConnection[Any]], Awaitable[None]]:
        """`append_transcript`'s write, as work inside a transaction (nothing for no updates)."""
        batch = dumps_updates(updates) if updates else None

        async def work(conn: AsyncConnection[Any]) -> None:
            if batch is not None:
                await _insert_transcript(conn, session_id, batch)

        return work

    async def _write_call(self, work: Callable[[AsyncConnection[Any]], Awaitable[_T]]) -> _T:
        """Run `work(connection)` in one transaction."""
        pool = await self._ready()
        async with pool.connection() as conn, conn.transaction():
            return await work(conn)

    async def append_transcript(self, session_id: str, updates: Sequence[JsonDict]) -> None:
        """Append one batch of updates to the transcript."""
        if not updates:
            return
        batch = dumps_updates(updates)
        pool = await self._ready()
        async with pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT 1 FROM acpkit_sessions WHERE id = %s FOR UPDATE", (session_id,))
            await _insert_transcript(conn, session_id, batch)

    async def begin_turn(
        self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS
    ) -> TurnStart:
        """Take the session's turn lease (a dead holder's lease is taken over: `interrupted`)."""
        pool = await self._ready()
        await self._check_alive(ping=False)
        async with pool.connection() as conn, conn.transaction():
            cur = await conn.execute("SELECT version FROM acpkit_sessions WHERE id = %s FOR UPDATE", (session_id,))
            kept = await cur.fetchone()
            if kept is None:
                raise SessionNotFoundError(session_id)
            cur = await conn.execute(
                f"SELECT owner, host, pid, holder, expires > {_NOW} FROM acpkit_leases WHERE session_id = %s",
                (session_id,),
            )
            lease = await cur.fetchone()
            interrupted = False
            if lease is not None and lease[0] != owner:
                if await _holder_alive(conn, int(lease[3]), fresh=bool(lease[4])):
                    where = "this process" if (lease[1], lease[2]) == (_HOST, os.getpid()) else f"process {lease[2]}"
                    raise TurnBusyError(
                        f"session {session_id!r} is running a turn in another window ({where} on {lease[1]}); "
                        "wait for it to finish, or cancel it there"
                    )
                interrupted = True
            await conn.execute(
                "INSERT INTO acpkit_leases AS l (session_id, owner, host, pid, holder, expires)"
                f" VALUES (%s, %s, %s, %s, %s, {_NOW} + %s)"
                " ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, host = EXCLUDED.host,"
                " pid = EXCLUDED.pid, holder = EXCLUDED.holder, expires = EXCLUDED.expires",
                (session_id, owner, _HOST, os.getpid(), self._holder, lease_seconds),
            )
        return TurnStart(version=int(kept[0]), interrupted=interrupted)

    async def renew_turn(self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> None:
        """Extend the lease (and check that this process still holds its liveness lock)."""
        pool = await self._ready()
        await self._check_alive(ping=True)
        async with pool.connection() as conn:
            await conn.execute(
                f"UPDATE acpkit_leases SET expires = {_NOW} + %s, holder = %s WHERE session_id = %s AND owner = %s",
                (lease_seconds, self._holder, session_id, owner),
            )

    async def end_turn(self, session_id: str, owner: str) -> None:
        """Drop the lease."""
        pool = await self._ready()
        async with pool.connection() as conn:
            await conn.execute("DELETE FROM acpkit_leases WHERE session_id = %s AND owner = %s", (session_id, owner))

    async def recover_turn(self, session_id: str) -> bool:
        """Clear a dead process's lease; True when there was one."""
        pool = await self._ready()
        async with pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                f"SELECT holder, expires > {_NOW} FROM acpkit_leases WHERE session_id = %s FOR UPDATE", (session_id,)
            )
            lease = await cur.fetchone()
            if lease is None or await _holder_alive(conn, int(lease[0]), fresh=bool(lease[1])):
                return False
            await conn.execute("DELETE FROM acpkit_leases WHERE session_id = %s", (session_id,))
        return True

    async def transcript(self, session_id: str) -> list[JsonDict]:
        """Every recorded update, oldest first."""
        pool = await self._ready()
        async with pool.connection() as conn:
            cur = await conn.execute(
                "SELECT (SELECT array_agg(t.updates ORDER BY t.seq) FROM acpkit_transcript t WHERE t.session_id = s.id)"
                " FROM acpkit_sessions s WHERE s.id = %s",
                (session_id,),
            )
            row = await cur.fetchone()
        if row is None:
            raise SessionNotFoundError(session_id)
        out: list[JsonDict] = []
        for batch in row[0] or ():
            out.extend(json.loads(batch))
        return out

    async def list(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        owner: str | None = None,
    ) -> SessionPage:
        """Sessions, most recently updated first (their history is not read); `owner` keeps one principal's."""
        after = decode_cursor(cursor) if cursor is not None else None
        pool = await self._ready()
        async with pool.connection() as conn:
            cur = await conn.execute(
                "SELECT data FROM acpkit_sessions"
                " WHERE (%(cwd)s::text IS NULL OR cwd = %(cwd)s)"
                " AND (%(owner)s::text IS NULL OR owner = %(owner)s)"
                " AND (%(at)s::text IS NULL OR updated_at < %(at)s OR (updated_at = %(at)s AND id > %(id)s))"
                " ORDER BY updated_at DESC, id ASC LIMIT %(limit)s",
                {
                    "cwd": cwd,
                    "owner": owner,
                    "at": after[0] if after else None,
                    "id": after[1] if after else None,
                    "limit": limit + 1,
                },
            )
            rows = await cur.fetchall()
        sessions = [session_from_json(json.loads(r[0])) for r in rows[:limit]]
        next_cursor = None
        if len(rows) > limit and sessions:
            next_cursor = encode_cursor(sessions[-1].updated_at, sessions[-1].id)
        return SessionPage(sessions=sessions, next_cursor=next_cursor)

    async def delete(self, session_id: str) -> None:
        """Remove a session, its history, transcript and lease (autovacuum reuses the space)."""
        pool = await self._ready()
        async with pool.connection() as conn, conn.transaction():
            for table in (
                "acpkit_transcript",
                "acpkit_history",
                "acpkit_leases",
                *REWIND_TABLES,
                *LOG_TABLES,
                "acpkit_sessions",
            ):
                column = "id" if table == "acpkit_sessions" else "session_id"
                await conn.execute(f"DELETE FROM {table} WHERE {column} = %s", (session_id,))

    async def close(self) -> None:
        """Close the pool and the liveness connection (this process's leases then look dead).

        Closing again does nothing; any other call on a closed store raises `RuntimeError`
        ("the session store ... is closed").
        """
        if self._closed:
            return
        self._closed = True
        async with self._opening:
            pool, self._pool = self._pool, None
            alive, self._alive = self._alive, None
            if pool is not None:
                await pool.close()
            if alive is not None:
                await alive.close()


async def _holder_alive(conn: AsyncConnection[Any], holder: int, *, fresh: bool) -> bool:
    """True while a lease holds: not expired, and its process's advisory lock is still taken."""
    if not fresh:
        return False
    # Taking the lock (until this transaction ends) succeeds only when nobody holds it.
    cur = await conn.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", (_HOLDER_LOCKS, holder))
    row = await cur.fetchone()
    return not (row and row[0])


async def _append_history(conn: AsyncConnection[Any], session_id: str, items: Sequence[str]) -> None:
    if not items:
        return
    await conn.execute(
        "INSERT INTO acpkit_history (session_id, seq, item)"
        " SELECT %(id)s, (SELECT COALESCE(MAX(seq), -1) FROM acpkit_history WHERE session_id = %(id)s) + n, item"
        " FROM unnest(%(items)s::text[]) WITH ORDINALITY AS t(item, n)",
        {"id": session_id, "items": list(items)},
    )


async def _insert_transcript(conn: AsyncConnection[Any], session_id: str, batch: str) -> None:
    await conn.execute(
        "INSERT INTO acpkit_transcript (session_id, seq, updates) VALUES "
        "(%(id)s, (SELECT COALESCE(MAX(seq), -1) + 1 FROM acpkit_transcript WHERE session_id = %(id)s), %(batch)s)",
        {"id": session_id, "batch": batch},
    )
