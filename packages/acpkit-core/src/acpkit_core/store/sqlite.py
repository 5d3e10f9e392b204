"""The default session store: one SQLite file (WAL), safe to share between agent processes."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar, TypeVarTuple

from ..errors import SessionNotFoundError
from ..runner.types import Session
from . import sqlite_log
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
    lease_alive,
    private_file,
    session_from_json,
    session_to_json,
)
from .sqlite_log import LOG_TABLES
from .sqlite_rewind import REWIND_TABLES, SqliteRewinding, cut_history
from .sqlite_schema import SCHEMA_VERSION, check_version, migrate, read_transaction, write_transaction
from .update_log import LogEntry

__all__ = ["SqliteStore"]

logger = logging.getLogger("acpkit_core.store")


_WORKER_THREAD_NAME = "acpkit-sqlite"
"""Prefix of the name of each store's worker thread."""

_HOST = socket.gethostname()

_REOPEN_AFTER_CHARS = 1_000_000
"""A call that binds or reads more characters than this is followed by a new connection (see `_reopen`)."""


class _Connection(sqlite3.Connection):
    """The worker's connection; `moved` counts the characters the current call bound or read."""

    moved: int = 0


_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")


class SqliteStore(SqliteRewinding):
    """Sessions in one SQLite file.

    WAL mode lets readers and one writer work at the same time; every write is one
    `BEGIN IMMEDIATE` transaction, so two agent processes can share the file and a crash never
    leaves a turn half-written. Session ids are only ever SQL parameters, never paths.

    History and transcript are append-only rows: a turn inserts what it added and rewrites
    nothing. Turns of one session are serialised across processes by a lease row (see
    [`SessionStore`][acpkit_core.store.SessionStore]). With `synchronous=NORMAL` in WAL mode a
    committed write survives the process being killed; a power cut may lose the last
    transactions, never corrupt the file.

    The file is created with mode 0600 (an existing file that others may read is narrowed to
    0600), its directory, when created, 0700; SQLite gives the `-wal` and `-shm` files the mode
    of the database. Deleted sessions' pages are returned to the file system
    (`auto_vacuum=INCREMENTAL`).

    All database work runs on one worker thread owned by the store (named `acpkit-sqlite_0`):
    the connection is opened, used and closed there, and the async methods await it. A write lock
    held by another process (up to `timeout` seconds) or a big transcript therefore delays only
    that call, never the event loop; and the single worker runs calls in the order they were made.
    `close()` closes the connection and stops the thread.
    """

    def __init__(self, path: str | Path, *, timeout: float = 10.0) -> None:
        """Open (creating if needed) the SQLite file at `path`; `timeout` is the busy timeout in seconds.

        The file is opened and its schema checked before this returns, on the worker thread, so
        an unusable file raises here. The schema write (and so a wait for another process's
        write lock) only happens when the tables do not exist yet.
        """
        self._path = Path(path).expanduser().resolve()
        self._path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        private_file(self._path)
        self._timeout = timeout
        self._db: _Connection | None = None
        self._closed = False
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_WORKER_THREAD_NAME)
        try:
            self._executor.submit(self._open).result()
        except BaseException as exc:
            self._closed = True
            # The open failed on the worker, which is now idle: join it. Interrupted: do not wait.
            self._executor.shutdown(wait=isinstance(exc, Exception))
            raise

    @property
    def path(self) -> Path | None:
        """The SQLite file."""
        return self._path

    # --- the worker thread ------------------------------------------------------------------------

    def _open(self) -> None:
        self._db = self._connect()

    def _connect(self) -> _Connection:
        db = sqlite3.connect(self._path, timeout=self._timeout, isolation_level=None, factory=_Connection)
        try:
            if check_version(db) < SCHEMA_VERSION:
                migrate(db)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(f"PRAGMA busy_timeout={int(self._timeout * 1000)}")
        except BaseException:
            db.close()
            raise
        return db

    def _close_db(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()

    def _on_worker(self, fn: Callable[[sqlite3.Connection, *_Ts], _T], *args: *_Ts) -> _T:
        db = self._db
        if db is None:
            raise self._closed_error()
        db.moved = 0
        try:
            return fn(db, *args)
        finally:
            if db.moved >= _REOPEN_AFTER_CHARS:
                self._reopen(db)

    def _reopen(self, db: _Connection) -> None:
        """Replace the connection after a call that bound or read a big value.

        SQLite keeps a copy of a cached statement's last parameters, and the buffer a statement
        read a value into, until the statement runs again or is finalized: after a 20 MB prompt,
        tens of megabytes would stay in the process for good. A new connection drops them (about
        a millisecond, only after such calls).
        """
        try:
            fresh = self._connect()
        except Exception:
            logger.warning("session store %s: could not reopen the connection", self._path, exc_info=True)
            return
        self._db = fresh
        db.close()

    async def _call(self, fn: Callable[[sqlite3.Connection, *_Ts], _T], *args: *_Ts) -> _T:
        """Run `fn(connection, *args)` on the worker thread and await its result."""
        if self._closed:
            raise self._closed_error()
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._on_worker, fn, *args)

    def _closed_error(self) -> sqlite3.ProgrammingError:
        return sqlite3.ProgrammingError(f"the session store {self._path} is closed")

    # --- the SessionStore API ---------------------------------------------------------------------

    async def create(
        self, session: Session, *, server: JsonDict | None = None, transcript: Sequence[JsonDict] = ()
    ) -> None:
        """Store a new session (with the history and transcript a fork starts from)."""
        # Serialized here, not on the worker: what is written is the session as it is now.
        data = json.dumps(session_to_json(session))
        lines = dumps_updates(transcript) if transcript else None
        items = [dumps_updates(item) for item in session.history.pending]
        row = (session.id, session.cwd, session.updated_at, data, json.dumps(server or {}))
        await self._call(_create, row, lines, items)
        session.history.saved(len(items))

    async def get(self, session_id: str) -> StoredSession:
        """Read a session with its history."""
        return await self._call(_get, session_id)

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
    ) -> tuple[Callable[[sqlite3.Connection], int], int]:
        """What `save` writes, as work for the worker (inside a write transaction), and its history item count.

        Serialized here, not on the worker: what is written is the session as it is now.
        """
        row = (session.id, session.cwd, session.updated_at, json.dumps(session_to_json(session)))
        batch = dumps_updates(append) if append else None
        server_json = json.dumps(server) if server is not None else None
        log = session.history
        history = (log.reset, log.cut, [dumps_updates(item) for item in log.pending])

        def work(db: sqlite3.Connection) -> int:
            return _save_rows(db, row, server_json, batch, reset_transcript, history, release)

        return work, len(history[2])

    def _append_work(self, session_id: str, updates: Sequence[JsonDict]) -> Callable[[sqlite3.Connection], None]:
        """`append_transcript`'s write, as work inside a transaction (nothing for no updates)."""
        batch = dumps_updates(updates) if updates else None

        def work(db: sqlite3.Connection) -> None:
            if batch is not None:
                _insert_transcript(db, session_id, batch)

        return work

    async def _write_call(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run `work(connection)` in one write transaction on the worker thread."""
        return await self._call(_in_write, work)

    async def append_transcript(self, session_id: str, updates: Sequence[JsonDict]) -> None:
        """Append one batch of updates to the transcript."""
        if updates:
            await self._call(_append_transcript, session_id, dumps_updates(updates))

    async def begin_turn(
        self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS
    ) -> TurnStart:
        """Take the session's turn lease."""
        return await self._call(_begin_turn, session_id, owner, lease_seconds)

    async def renew_turn(self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> None:
        """Extend the lease."""
        await self._call(_renew_turn, session_id, owner, lease_seconds)

    async def end_turn(self, session_id: str, owner: str) -> None:
        """Drop the lease."""
        await self._call(_end_turn, session_id, owner)

    async def recover_turn(self, session_id: str) -> bool:
        """Clear a dead process's lease; True when there was one."""
        return await self._call(_recover_turn, session_id)

    async def transcript(self, session_id: str) -> list[JsonDict]:
        """Every recorded update, oldest first."""
        return await self._call(_transcript, session_id)

    async def list(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        owner: str | None = None,
    ) -> SessionPage:
        """Sessions, most recently updated first (their history is not read); `owner` keeps one principal's."""
        where: list[str] = []
        params: list[str | int] = []
        if cwd is not None:
            where.append("cwd = ?")
            params.append(cwd)
        if owner is not None:
            where.append("json_extract(data, '$.owner') = ?")
            params.append(owner)
        if cursor is not None:
            after_time, after_id = decode_cursor(cursor)
            where.append("(updated_at < ? OR (updated_at = ? AND id > ?))")
            params += [after_time, after_time, after_id]
        sql = "SELECT data FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC, id ASC LIMIT ?"
        params.append(limit + 1)
        return await self._call(_list, sql, params, limit)

    async def delete(self, session_id: str) -> None:
        """Remove a session, its history, transcript and lease, and give the freed pages back."""
        await self._call(_delete, session_id)

    # --- UpdateLogStore ---------------------------------------------------------------------------

    async def log_append(self, session_id: str, entries: Sequence[LogEntry]) -> None:
        """Add entries to the session's update log."""
        if entries:
            await self._call(sqlite_log.log_append, session_id, entries)

    async def log_read(self, session_id: str, after: int) -> list[LogEntry]:
        """The log's entries numbered above `after`."""
        return await self._call(sqlite_log.log_read, session_id, after)

    async def log_last(self, session_id: str) -> int:
        """The log's highest number (0 when empty)."""
        return await self._call(sqlite_log.log_last, session_id)

    async def log_trim(self, session_id: str, before: int) -> None:
        """Drop the entries numbered below `before`, and every answer."""
        await self._call(sqlite_log.log_trim, session_id, before)

    async def log_answer(self, session_id: str, key: str, value: str) -> None:
        """Set a named value of the session's log."""
        await self._call(sqlite_log.log_answer, session_id, key, value)

    async def log_answers(self, session_id: str) -> dict[str, str]:
        """The session's named values."""
        return await self._call(sqlite_log.log_answers, session_id)

    async def close(self) -> None:
        """Close the database connection and stop the worker thread.

        Calls already made finish first. Closing again does nothing; any other call on a closed
        store raises `sqlite3.ProgrammingError` ("the session store ... is closed").
        """
        if self._closed:
            return
        self._closed = True
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._close_db)
        except BaseException:
            # Cancelled (or the close failed): the worker still runs what is queued, then exits.
            self._executor.shutdown(wait=False)
            raise
        self._executor.shutdown(wait=True)  # the worker is idle: this only joins the thread


# --- run on the worker thread -----------------------------------------------------------------------


def _moved(db: sqlite3.Connection, chars: int) -> None:
    if isinstance(db, _Connection):
        db.moved += chars


def _append_history(db: sqlite3.Connection, session_id: str, items: Sequence[str]) -> None:
    if not items:
        return
    _moved(db, sum(len(item) for item in items))
    row = db.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM history WHERE session_id = ?", (session_id,)).fetchone()
    base = int(row[0])
    db.executemany(
        "INSERT INTO history (session_id, seq, item) VALUES (?, ?, ?)",
        [(session_id, base + i, item) for i, item in enumerate(items)],
    )


def _insert_transcript(db: sqlite3.Connection, session_id: str, batch: str) -> None:
    _moved(db, len(batch))
    db.execute(
        "INSERT INTO transcript (session_id, seq, updates) VALUES "
        "(?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM transcript WHERE session_id = ?), ?)",
        (session_id, session_id, batch),
    )


def _create(
    db: sqlite3.Connection, row: tuple[str, str, str, str, str], lines: str | None, items: Sequence[str]
) -> None:
    with write_transaction(db):
        db.execute("INSERT INTO sessions (id, cwd, updated_at, data, server) VALUES (?, ?, ?, ?, ?)", row)
        for table in ("transcript", "history", "leases", *REWIND_TABLES, *LOG_TABLES):
            db.execute(f"DELETE FROM {table} WHERE session_id = ?", (row[0],))
        if lines is not None:
            _moved(db, len(lines))
            db.execute("INSERT INTO transcript (session_id, seq, updates) VALUES (?, 0, ?)", (row[0], lines))
        _append_history(db, row[0], items)


def _get(db: sqlite3.Connection, session_id: str) -> StoredSession:
    with read_transaction(db):
        row = db.execute("SELECT data, server, version FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise SessionNotFoundError(session_id)
        items = db.execute("SELECT item FROM history WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    _moved(db, sum(len(item) for (item,) in items))
    history = [json.loads(item) for (item,) in items]
    return StoredSession(
        session=session_from_json(json.loads(row[0]), history), server=json.loads(row[1]), version=int(row[2])
    )


def _in_write(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], _T]) -> _T:
    with write_transaction(db):
        return work(db)


def _save_rows(
    db: sqlite3.Connection,
    row: tuple[str, str, str, str],
    server_json: str | None,
    batch: str | None,
    reset_transcript: bool,
    history: tuple[bool, int | None, Sequence[str]],
    release: str | None,
) -> int:
    """`save`'s writes, inside the caller's transaction."""
    session_id = row[0]
    kept = db.execute("SELECT server, version FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if server_json is None:
        server_json = kept[0] if kept else "{}"
    version = (int(kept[1]) if kept else 0) + 1
    db.execute(
        "INSERT OR REPLACE INTO sessions (id, cwd, updated_at, data, server, version) VALUES (?, ?, ?, ?, ?, ?)",
        (*row, server_json, version),
    )
    if reset_transcript:  # `/clear`: nothing earlier is left to rewind to
        for table in ("transcript", *REWIND_TABLES):
            db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
    if batch is not None:
        _insert_transcript(db, session_id, batch)
    reset_history, cut, items = history
    if reset_history:
        db.execute("DELETE FROM history WHERE session_id = ?", (session_id,))
    elif cut is not None:
        cut_history(db, session_id, cut)
    _append_history(db, session_id, items)
    if release is not None:
        db.execute("DELETE FROM leases WHERE session_id = ? AND owner = ?", (session_id, release))
    return version


def _append_transcript(db: sqlite3.Connection, session_id: str, batch: str) -> None:
    with write_transaction(db):
        _insert_transcript(db, session_id, batch)


def _lease_is_dead(row: tuple[str, str, int, float] | None) -> bool:
    return row is not None and not lease_alive(row[1], row[2], row[3], now=time.time(), this_host=_HOST)


def _begin_turn(db: sqlite3.Connection, session_id: str, owner: str, lease_seconds: float) -> TurnStart:
    with write_transaction(db):
        kept = db.execute("SELECT version FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if kept is None:
            raise SessionNotFoundError(session_id)
        lease = db.execute(
            "SELECT owner, host, pid, expires FROM leases WHERE session_id = ?", (session_id,)
        ).fetchone()
        interrupted = False
        if lease is not None and lease[0] != owner:
            if not _lease_is_dead(lease):
                where = "this process" if (lease[1], lease[2]) == (_HOST, os.getpid()) else f"process {lease[2]}"
                raise TurnBusyError(
                    f"session {session_id!r} is running a turn in another window ({where} on {lease[1]}); "
                    "wait for it to finish, or cancel it there"
                )
            interrupted = True
        db.execute(
            "INSERT OR REPLACE INTO leases (session_id, owner, host, pid, expires) VALUES (?, ?, ?, ?, ?)",
            (session_id, owner, _HOST, os.getpid(), time.time() + lease_seconds),
        )
    return TurnStart(version=int(kept[0]), interrupted=interrupted)


def _renew_turn(db: sqlite3.Connection, session_id: str, owner: str, lease_seconds: float) -> None:
    with write_transaction(db):
        db.execute(
            "UPDATE leases SET expires = ? WHERE session_id = ? AND owner = ?",
            (time.time() + lease_seconds, session_id, owner),
        )


def _end_turn(db: sqlite3.Connection, session_id: str, owner: str) -> None:
    with write_transaction(db):
        db.execute("DELETE FROM leases WHERE session_id = ? AND owner = ?", (session_id, owner))


def _recover_turn(db: sqlite3.Connection, session_id: str) -> bool:
    lease = db.execute("SELECT owner, host, pid, expires FROM leases WHERE session_id = ?", (session_id,)).fetchone()
    if not _lease_is_dead(lease):
        return False
    with write_transaction(db):
        lease = db.execute(
            "SELECT owner, host, pid, expires FROM leases WHERE session_id = ?", (session_id,)
        ).fetchone()
        if not _lease_is_dead(lease):
            return False
        db.execute("DELETE FROM leases WHERE session_id = ?", (session_id,))
    return True


def _transcript(db: sqlite3.Connection, session_id: str) -> list[JsonDict]:
    with read_transaction(db):
        if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
            raise SessionNotFoundError(session_id)
        rows = db.execute("SELECT updates FROM transcript WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    out: list[JsonDict] = []
    for (batch,) in rows:
        _moved(db, len(batch))
        out.extend(json.loads(batch))
    return out


def _delete(db: sqlite3.Connection, session_id: str) -> None:
    with write_transaction(db):
        for table in ("transcript", "history", "leases", *REWIND_TABLES, *LOG_TABLES):
            db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
        db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
    # `executescript` steps the pragma to the end (each step frees one page; `execute` takes one).
    db.executescript("PRAGMA incremental_vacuum; PRAGMA wal_checkpoint(PASSIVE);")


def _list(db: sqlite3.Connection, sql: str, params: list[str | int], limit: int) -> SessionPage:
    rows = db.execute(sql, params).fetchall()
    sessions = [session_from_json(json.loads(r[0])) for r in rows[:limit]]
    next_cursor = None
    if len(rows) > limit and sessions:
        next_cursor = encode_cursor(sessions[-1].updated_at, sessions[-1].id)
    return SessionPage(sessions=sessions, next_cursor=next_cursor)
