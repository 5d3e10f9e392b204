"""The default session store: one SQLite file (WAL), safe to share between agent processes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..errors import SessionNotFoundError
from ..runner import Session
from .base import (
    DEFAULT_PAGE_SIZE,
    JsonDict,
    SessionPage,
    StoredSession,
    decode_cursor,
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


class SqliteStore:
    """Sessions in one SQLite file.

    WAL mode lets readers and one writer work at the same time; every write is one
    `BEGIN IMMEDIATE` transaction, so two agent processes can share the file and a crash never
    leaves a turn half-written. Session ids are only ever SQL parameters, never paths.
    """

    def __init__(self, path: str | Path, *, timeout: float = 10.0) -> None:
        self._path = Path(path).expanduser().resolve()
        self._path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._db = sqlite3.connect(self._path, timeout=timeout, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        with self._write() as db:
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    db.execute(stmt)

    @property
    def path(self) -> Path | None:
        """The SQLite file."""
        return self._path

    @contextmanager
    def _write(self) -> Generator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    async def create(
        self, session: Session, *, server: JsonDict | None = None, transcript: Sequence[JsonDict] = ()
    ) -> None:
        """Store a new session (with the transcript a fork starts from)."""
        data = json.dumps(session_to_json(session))
        lines = json.dumps(list(transcript)) if transcript else None
        with self._write() as db:
            db.execute(
                "INSERT INTO sessions (id, cwd, updated_at, data, server) VALUES (?, ?, ?, ?, ?)",
                (session.id, session.cwd, session.updated_at, data, json.dumps(server or {})),
            )
            db.execute("DELETE FROM transcript WHERE session_id = ?", (session.id,))
            if lines is not None:
                db.execute("INSERT INTO transcript (session_id, seq, updates) VALUES (?, 0, ?)", (session.id, lines))

    async def get(self, session_id: str) -> StoredSession:
        """Read a session."""
        row = self._db.execute("SELECT data, server FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise SessionNotFoundError(session_id)
        return StoredSession(session=session_from_json(json.loads(row[0])), server=json.loads(row[1]))

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
        batch = json.dumps(list(append)) if append else None
        server_json = json.dumps(server) if server is not None else None
        with self._write() as db:
            if server_json is None:
                row = db.execute("SELECT server FROM sessions WHERE id = ?", (session.id,)).fetchone()
                server_json = row[0] if row else "{}"
            db.execute(
                "INSERT OR REPLACE INTO sessions (id, cwd, updated_at, data, server) VALUES (?, ?, ?, ?, ?)",
                (session.id, session.cwd, session.updated_at, data, server_json),
            )
            if reset_transcript:
                db.execute("DELETE FROM transcript WHERE session_id = ?", (session.id,))
            if batch is not None:
                db.execute(
                    "INSERT INTO transcript (session_id, seq, updates) VALUES "
                    "(?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM transcript WHERE session_id = ?), ?)",
                    (session.id, session.id, batch),
                )

    async def transcript(self, session_id: str) -> list[JsonDict]:
        """Every recorded update, oldest first."""
        with self._read() as db:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                raise SessionNotFoundError(session_id)
            rows = db.execute(
                "SELECT updates FROM transcript WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
        out: list[JsonDict] = []
        for (batch,) in rows:
            out.extend(json.loads(batch))
        return out

    @contextmanager
    def _read(self) -> Generator[sqlite3.Connection]:
        self._db.execute("BEGIN")
        try:
            yield self._db
        finally:
            self._db.execute("COMMIT")

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
        rows = self._db.execute(sql, params).fetchall()
        sessions = [session_from_json(json.loads(r[0])) for r in rows[:limit]]
        next_cursor = None
        if len(rows) > limit and sessions:
            next_cursor = encode_cursor(sessions[-1].updated_at, sessions[-1].id)
        return SessionPage(sessions=sessions, next_cursor=next_cursor)

    async def delete(self, session_id: str) -> None:
        """Remove a session and its transcript."""
        with self._write() as db:
            db.execute("DELETE FROM transcript WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    async def close(self) -> None:
        """Close the database connection."""
        self._db.close()
