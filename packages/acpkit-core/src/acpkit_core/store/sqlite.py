"""The default session store: one SQLite file (WAL), safe to share between agent processes."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar, TypeVarTuple

from ..errors import SessionNotFoundError
from ..runner import Session
from .base import (
    DEFAULT_PAGE_SIZE,
    JsonDict,
    SessionPage,
    StoredSession,
    decode_cursor,
    dumps_updates,
    encode_cursor,
    session_from_json,
    session_to_json,
)

__all__ = ["SqliteStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data TEXT NOT NULL,
    server TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_time ON sessions (updated_at DESC, id);
CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions (cwd, updated_at DESC, id);
CREATE TABLE IF NOT EXISTS transcript (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    updates TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"""
_SCHEMA_NAMES = frozenset({"sessions", "sessions_by_time", "sessions_by_cwd", "transcript"})
"""Every table and index `_SCHEMA` creates."""

_WORKER_THREAD_NAME = "acpkit-sqlite"
"""Prefix of the name of each store's worker thread."""

_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")


class SqliteStore:
    """Sessions in one SQLite file.

    WAL mode lets readers and one writer work at the same time; every write is one
    `BEGIN IMMEDIATE` transaction, so two agent processes can share the file and a crash never
    leaves a turn half-written. Session ids are only ever SQL parameters, never paths.

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
        self._timeout = timeout
        self._db: sqlite3.Connection | None = None
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
        db = sqlite3.connect(self._path, timeout=self._timeout, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(f"PRAGMA busy_timeout={int(self._timeout * 1000)}")
            existing = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
            if not existing.issuperset(_SCHEMA_NAMES):
                with _write(db):
                    for stmt in _SCHEMA.split(";"):
                        if stmt.strip():
                            db.execute(stmt)
        except BaseException:
            db.close()
            raise
        self._db = db

    def _close_db(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()

    def _on_worker(self, fn: Callable[[sqlite3.Connection, *_Ts], _T], *args: *_Ts) -> _T:
        db = self._db
        if db is None:
            raise self._closed_error()
        return fn(db, *args)

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
        """Store a new session (with the transcript a fork starts from)."""
        # Serialized here, not on the worker: what is written is the session as it is now.
        data = json.dumps(session_to_json(session))
        lines = dumps_updates(transcript) if transcript else None
        row = (session.id, session.cwd, session.updated_at, data, json.dumps(server or {}))
        await self._call(_create, row, lines)

    async def get(self, session_id: str) -> StoredSession:
        """Read a session."""
        return await self._call(_get, session_id)

    async def save(
        self,
        session: Session,
        *,
        server: JsonDict | None = None,
        append: Sequence[JsonDict] = (),
        reset_transcript: bool = False,
    ) -> None:
        """Write the session and append one batch to its transcript, atomically."""
        data = json.dumps(session_to_json(session))
        batch = dumps_updates(append) if append else None
        server_json = json.dumps(server) if server is not None else None
        await self._call(
            _save, (session.id, session.cwd, session.updated_at, data), server_json, batch, reset_transcript
        )

    async def transcript(self, session_id: str) -> list[JsonDict]:
        """Every recorded update, oldest first."""
        return await self._call(_transcript, session_id)

    async def list(
        self, *, cwd: str | None = None, cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
    ) -> SessionPage:
        """Sessions, most recently updated first."""
        where: list[str] = []
        params: list[str | int] = []
        if cwd is not None:
            where.append("cwd = ?")
            params.append(cwd)
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
        """Remove a session and its transcript."""
        await self._call(_delete, session_id)

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


@contextmanager
def _write(db: sqlite3.Connection) -> Generator[sqlite3.Connection]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


@contextmanager
def _read(db: sqlite3.Connection) -> Generator[sqlite3.Connection]:
    db.execute("BEGIN")
    try:
        yield db
    finally:
        db.execute("COMMIT")


def _create(db: sqlite3.Connection, row: tuple[str, str, str, str, str], lines: str | None) -> None:
    with _write(db):
        db.execute("INSERT INTO sessions (id, cwd, updated_at, data, server) VALUES (?, ?, ?, ?, ?)", row)
        db.execute("DELETE FROM transcript WHERE session_id = ?", (row[0],))
        if lines is not None:
            db.execute("INSERT INTO transcript (session_id, seq, updates) VALUES (?, 0, ?)", (row[0], lines))


def _get(db: sqlite3.Connection, session_id: str) -> StoredSession:
    row = db.execute("SELECT data, server FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise SessionNotFoundError(session_id)
    return StoredSession(session=session_from_json(json.loads(row[0])), server=json.loads(row[1]))


def _save(
    db: sqlite3.Connection,
    row: tuple[str, str, str, str],
    server_json: str | None,
    batch: str | None,
    reset_transcript: bool,
) -> None:
    session_id = row[0]
    with _write(db):
        if server_json is None:
            kept = db.execute("SELECT server FROM sessions WHERE id = ?", (session_id,)).fetchone()
            server_json = kept[0] if kept else "{}"
        db.execute(
            "INSERT OR REPLACE INTO sessions (id, cwd, updated_at, data, server) VALUES (?, ?, ?, ?, ?)",
            (*row, server_json),
        )
        if reset_transcript:
            db.execute("DELETE FROM transcript WHERE session_id = ?", (session_id,))
        if batch is not None:
            db.execute(
                "INSERT INTO transcript (session_id, seq, updates) VALUES "
                "(?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM transcript WHERE session_id = ?), ?)",
                (session_id, session_id, batch),
            )


def _transcript(db: sqlite3.Connection, session_id: str) -> list[JsonDict]:
    with _read(db):
        if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
            raise SessionNotFoundError(session_id)
        rows = db.execute("SELECT updates FROM transcript WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    out: list[JsonDict] = []
    for (batch,) in rows:
        out.extend(json.loads(batch))
    return out


def _delete(db: sqlite3.Connection, session_id: str) -> None:
    with _write(db):
        db.execute("DELETE FROM transcript WHERE session_id = ?", (session_id,))
        db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))


def _list(db: sqlite3.Connection, sql: str, params: list[str | int], limit: int) -> SessionPage:
    rows = db.execute(sql, params).fetchall()
    sessions = [session_from_json(json.loads(r[0])) for r in rows[:limit]]
    next_cursor = None
    if len(rows) > limit and sessions:
        next_cursor = encode_cursor(sessions[-1].updated_at, sessions[-1].id)
    return SessionPage(sessions=sessions, next_cursor=next_cursor)
