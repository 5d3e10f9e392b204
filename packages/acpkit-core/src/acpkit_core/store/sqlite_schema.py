"""The SQLite store's schema, brought up to date once per file, and the transactions its
reads and writes run in.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Generator
from contextlib import contextmanager

from .base import SchemaTooNewError, session_from_json, session_to_json
from .sqlite_rewind import REWIND_SCHEMA
from .update_log import LOG_SCHEMA

__all__ = []


SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data TEXT NOT NULL,
    server TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_by_time ON sessions (updated_at DESC, id);
CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions (cwd, updated_at DESC, id);
CREATE TABLE IF NOT EXISTS transcript (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    updates TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS history (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    item TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS leases (
    session_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires REAL NOT NULL
);
"""
    + REWIND_SCHEMA
    + LOG_SCHEMA
)


SCHEMA_VERSION = 4
"""`PRAGMA user_version` of the current schema (1.x and early 2.0 files are 0, files without the
rewind tables 2, without the update log 3: migrated on open)."""


def check_version(db: sqlite3.Connection) -> int:
    """The file's schema version; `SchemaTooNewError` when a newer ACP Kit migrated it.

    An older process would otherwise read and write tables (or rows of a format) it does not know:
    two versions sharing one state directory (an editor still running an agent started before an
    upgrade) stop at the older one's next open, with a message saying so, rather than corrupt it.
    """
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        (_, name, path) = db.execute("PRAGMA database_list").fetchone()
        raise SchemaTooNewError(
            f"the session store {path or name} is at schema version {version}, newer than this "
            f"acpkit-core's ({SCHEMA_VERSION}): upgrade acpkit-core here, or give this agent a state "
            "directory of its own (ACPKIT_STATE_DIR)"
        )
    return version


def migrate(db: sqlite3.Connection) -> None:
    """Create the schema, or bring an older file to it (once, on first open by this version)."""
    existing = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    if not existing:
        db.execute("PRAGMA auto_vacuum=INCREMENTAL")  # only takes effect before the first table
    with write_transaction(db):
        if check_version(db) == SCHEMA_VERSION:
            return  # another process migrated it meanwhile
        for stmt in SCHEMA.split(";"):
            if stmt.strip():
                db.execute(stmt)
        columns = {row[1] for row in db.execute("PRAGMA table_info(sessions)")}
        if "version" not in columns:
            db.execute("ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 0")
        if "sessions" in existing:
            # Rewrite older rows without MCP secrets (values of env and headers).
            for session_id, data in db.execute("SELECT id, data FROM sessions").fetchall():
                rewritten = json.dumps(session_to_json(session_from_json(json.loads(data))))
                db.execute("UPDATE sessions SET data = ? WHERE id = ?", (rewritten, session_id))
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    if int(db.execute("PRAGMA auto_vacuum").fetchone()[0]) != 2:
        db.execute("PRAGMA auto_vacuum=INCREMENTAL")
        db.execute("VACUUM")  # an older file: switching auto_vacuum needs one VACUUM


@contextmanager
def write_transaction(db: sqlite3.Connection) -> Generator[sqlite3.Connection]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


@contextmanager
def read_transaction(db: sqlite3.Connection) -> Generator[sqlite3.Connection]:
    db.execute("BEGIN")
    try:
        yield db
    finally:
        db.execute("COMMIT")
