"""The SQLite store's update-log statements (run on the store's worker thread)."""

from __future__ import annotations

import sqlite3
from collections.abc import Generator, Sequence
from contextlib import contextmanager

from .update_log import LogEntry, cut_row, pack_rows, unpack_rows

__all__ = ["LOG_TABLES", "log_answer", "log_answers", "log_append", "log_last", "log_read", "log_trim"]

LOG_TABLES = ("update_log", "update_log_answers")
"""Tables keyed by `session_id` that a deleted session drops."""


@contextmanager
def _tx(db: sqlite3.Connection) -> Generator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def log_append(db: sqlite3.Connection, session_id: str, entries: Sequence[LogEntry]) -> None:
    with _tx(db):
        db.executemany(
            "INSERT OR REPLACE INTO update_log (session_id, seq, entry) VALUES (?, ?, ?)",
            [(session_id, first, text) for first, text in pack_rows(entries)],
        )


def log_read(db: sqlite3.Connection, session_id: str, after: int) -> list[LogEntry]:
    # The rows from the one holding `after` (the last starting at or before it) on.
    rows = db.execute(
        "SELECT seq, entry FROM update_log WHERE session_id = ? AND seq >= COALESCE("
        "(SELECT MAX(seq) FROM update_log WHERE session_id = ? AND seq <= ?), 0) ORDER BY seq",
        (session_id, session_id, after),
    ).fetchall()
    return unpack_rows(((int(first), str(text)) for first, text in rows), after)


def log_last(db: sqlite3.Connection, session_id: str) -> int:
    row = db.execute(
        "SELECT seq + length(entry) - length(replace(entry, char(10), '')) FROM update_log "
        "WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def log_trim(db: sqlite3.Connection, session_id: str, before: int) -> None:
    with _tx(db):
        straddling = db.execute(
            "SELECT seq, entry FROM update_log WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT 1",
            (session_id, before),
        ).fetchone()
        db.execute("DELETE FROM update_log WHERE session_id = ? AND seq < ?", (session_id, before))
        kept = cut_row(int(straddling[0]), str(straddling[1]), before) if straddling else None
        if kept is not None:
            db.execute(
                "INSERT OR REPLACE INTO update_log (session_id, seq, entry) VALUES (?, ?, ?)", (session_id, *kept)
            )
        db.execute("DELETE FROM update_log_answers WHERE session_id = ?", (session_id,))


def log_answer(db: sqlite3.Connection, session_id: str, key: str, value: str) -> None:
    with _tx(db):
        db.execute(
            "INSERT OR REPLACE INTO update_log_answers (session_id, key, value) VALUES (?, ?, ?)",
            (session_id, key, value),
        )


def log_answers(db: sqlite3.Connection, session_id: str) -> dict[str, str]:
    rows = db.execute("SELECT key, value FROM update_log_answers WHERE session_id = ?", (session_id,)).fetchall()
    return {str(k): str(v) for k, v in rows}
