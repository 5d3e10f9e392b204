"""The SQLite store's rewind tables and the statements on them (run on the store's worker thread,
inside the transaction the store opens).

`prompts` holds a row per recorded prompt (its order in `seq`), `file_changes` a row per file and
prompt. Both are new in schema version 3; a file of version 2 gets them when it is first opened.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar, TypeVarTuple

from ..errors import SessionNotFoundError
from ..runner.types import Session
from .base import JsonDict
from .rewind import FileChange, PromptMark, cut_batches, decode_content, encode_content

_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")

__all__ = ["REWIND_SCHEMA", "REWIND_TABLES", "SqliteRewinding", "cut_history"]

REWIND_SCHEMA = """
CREATE TABLE IF NOT EXISTS prompts (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    id TEXT NOT NULL,
    text TEXT NOT NULL,
    history_length INTEGER NOT NULL,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE UNIQUE INDEX IF NOT EXISTS prompts_by_id ON prompts (session_id, id);
CREATE TABLE IF NOT EXISTS file_changes (
    session_id TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    path TEXT NOT NULL,
    seq INTEGER NOT NULL,
    before BLOB,
    after BLOB,
    PRIMARY KEY (session_id, prompt_id, path)
);
"""

REWIND_TABLES = ("prompts", "file_changes")
"""Tables keyed by `session_id` that a deleted, re-created or cleared session drops."""


def add_prompt(db: sqlite3.Connection, session_id: str, mark: PromptMark) -> None:
    """Insert a prompt after the session's last one."""
    state = json.dumps(mark.state)
    db.execute(
        "INSERT INTO prompts (session_id, seq, id, text, history_length, state, created_at) VALUES "
        "(?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM prompts WHERE session_id = ?), ?, ?, ?, ?, ?)",
        (session_id, session_id, mark.id, mark.text, mark.history_length, state, mark.created_at),
    )


def add_file_changes(db: sqlite3.Connection, session_id: str, changes: Sequence[FileChange]) -> None:
    """Insert file changes; a `(prompt, path)` already there keeps its `before` and takes the new `after`."""
    for change in changes:
        db.execute(
            "INSERT INTO file_changes (session_id, prompt_id, path, seq, before, after) VALUES "
            "(?, ?, ?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM file_changes WHERE session_id = ?), ?, ?) "
            "ON CONFLICT (session_id, prompt_id, path) DO UPDATE SET after = excluded.after",
            (
                session_id,
                change.prompt_id,
                change.path,
                session_id,
                encode_content(change.before),
                encode_content(change.after),
            ),
        )


def prompts(db: sqlite3.Connection, session_id: str) -> list[PromptMark]:
    """The session's prompts, oldest first, without their state."""
    rows = db.execute(
        "SELECT id, text, history_length, created_at FROM prompts WHERE session_id = ? ORDER BY seq", (session_id,)
    ).fetchall()
    return [PromptMark(id=r[0], text=r[1], history_length=int(r[2]), created_at=r[3]) for r in rows]


def prompt(db: sqlite3.Connection, session_id: str, prompt_id: str) -> PromptMark | None:
    """One prompt, with its state."""
    row = db.execute(
        "SELECT id, text, history_length, state, created_at FROM prompts WHERE session_id = ? AND id = ?",
        (session_id, prompt_id),
    ).fetchone()
    if row is None:
        return None
    state: JsonDict = json.loads(row[3])
    return PromptMark(id=row[0], text=row[1], history_length=int(row[2]), state=state, created_at=row[4])


def file_changes(db: sqlite3.Connection, session_id: str, prompt_ids: Sequence[str]) -> list[FileChange]:
    """The file changes of those prompts, in the order they were first recorded."""
    if not prompt_ids:
        return []
    marks = ",".join("?" * len(prompt_ids))
    rows = db.execute(
        f"SELECT prompt_id, path, before, after FROM file_changes WHERE session_id = ? AND prompt_id IN ({marks}) "
        "ORDER BY seq",
        (session_id, *prompt_ids),
    ).fetchall()
    return [
        FileChange(prompt_id=r[0], path=r[1], before=decode_content(r[2]), after=decode_content(r[3])) for r in rows
    ]


def cut_history(db: sqlite3.Connection, session_id: str, count: int) -> None:
    """Drop the history items from position `count` on (a truncated `HistoryLog`)."""
    db.execute("DELETE FROM history WHERE session_id = ? AND seq >= ?", (session_id, count))


def rewind_rows(db: sqlite3.Connection, session_id: str, prompt_id: str, keep_updates: int) -> None:
    """Inside the caller's transaction: drop the marks and file changes from `prompt_id` on, cut the transcript."""
    if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
        raise SessionNotFoundError(session_id)
    found = db.execute("SELECT seq FROM prompts WHERE session_id = ? AND id = ?", (session_id, prompt_id)).fetchone()
    if found is None:
        raise KeyError(f"prompt {prompt_id!r} is not a recorded prompt of session {session_id!r}")
    db.execute(
        "DELETE FROM file_changes WHERE session_id = ? AND prompt_id IN "
        "(SELECT id FROM prompts WHERE session_id = ? AND seq >= ?)",
        (session_id, session_id, found[0]),
    )
    db.execute("DELETE FROM prompts WHERE session_id = ? AND seq >= ?", (session_id, found[0]))
    rows = db.execute("SELECT seq, updates FROM transcript WHERE session_id = ? ORDER BY seq", (session_id,))
    drop, rewrite = cut_batches([(int(seq), json.loads(text)) for seq, text in rows.fetchall()], keep_updates)
    db.executemany("DELETE FROM transcript WHERE session_id = ? AND seq = ?", [(session_id, seq) for seq in drop])
    if rewrite is not None:
        db.execute(
            "UPDATE transcript SET updates = ? WHERE session_id = ? AND seq = ?", (rewrite[1], session_id, rewrite[0])
        )


def copy_prompts(db: sqlite3.Connection, source_id: str, target_id: str, before: str | None) -> None:
    """Copy the source's marks and file changes (those of the prompts before `before`, or all) to the target."""
    bound = 2**62
    if before is not None:
        found = db.execute("SELECT seq FROM prompts WHERE session_id = ? AND id = ?", (source_id, before)).fetchone()
        bound = int(found[0]) if found is not None else bound
    db.execute(
        "INSERT INTO prompts (session_id, seq, id, text, history_length, state, created_at) "
        "SELECT ?, seq, id, text, history_length, state, created_at FROM prompts WHERE session_id = ? AND seq < ?",
        (target_id, source_id, bound),
    )
    db.execute(
        "INSERT INTO file_changes (session_id, prompt_id, path, seq, before, after) "
        "SELECT ?, prompt_id, path, seq, before, after FROM file_changes WHERE session_id = ? AND prompt_id IN "
        "(SELECT id FROM prompts WHERE session_id = ? AND seq < ?)",
        (target_id, source_id, source_id, bound),
    )


class SqliteRewinding:
    """The [`RewindStore`][acpkit_core.store.RewindStore] methods of `SqliteStore` (mixed into it)."""

    def _call(self, fn: Callable[[sqlite3.Connection, *_Ts], _T], *args: *_Ts) -> Awaitable[_T]:
        raise NotImplementedError  # the store's

    def _write_call(self, work: Callable[[sqlite3.Connection], _T]) -> Awaitable[_T]:
        raise NotImplementedError  # the store's

    def _save_work(
        self, session: Session, *, server: JsonDict | None = None
    ) -> tuple[Callable[[sqlite3.Connection], int], int]:
        raise NotImplementedError  # the store's

    def _append_work(self, session_id: str, updates: Sequence[JsonDict]) -> Callable[[sqlite3.Connection], None]:
        raise NotImplementedError  # the store's

    async def add_prompt(self, session_id: str, mark: PromptMark, *, transcript: Sequence[JsonDict] = ()) -> None:
        """Record a prompt that has just arrived (and append `transcript`, in one transaction)."""
        append = self._append_work(session_id, transcript)

        def work(db: sqlite3.Connection) -> None:
            add_prompt(db, session_id, mark)
            append(db)

        await self._write_call(work)

    async def add_file_changes(self, session_id: str, changes: Sequence[FileChange]) -> None:
        """Record file changes (a known `(prompt, path)` keeps its `before`)."""
        rows = list(changes)
        if rows:
            await self._write_call(lambda db: add_file_changes(db, session_id, rows))

    async def prompts(self, session_id: str) -> list[PromptMark]:
        """The recorded prompts, oldest first (without state)."""
        return await self._call(prompts, session_id)

    async def prompt(self, session_id: str, prompt_id: str) -> PromptMark | None:
        """One recorded prompt, with its state."""
        return await self._call(prompt, session_id, prompt_id)

    async def file_changes(self, session_id: str, prompt_ids: Sequence[str]) -> list[FileChange]:
        """The file changes of those prompts, oldest first."""
        return await self._call(file_changes, session_id, list(prompt_ids))

    async def rewind(
        self, session: Session, *, prompt_id: str, keep_updates: int, server: JsonDict | None = None
    ) -> int:
        """Take the session back to before `prompt_id` in one transaction."""
        save, count = self._save_work(session, server=server)

        def work(db: sqlite3.Connection) -> int:
            rewind_rows(db, session.id, prompt_id, keep_updates)
            return save(db)

        version = await self._write_call(work)
        session.history.saved(count)
        return version

    async def copy_prompts(self, source_id: str, target_id: str, *, before: str | None = None) -> None:
        """Copy the source's prompt marks and file changes (those before `before`) to the target."""
        await self._write_call(lambda db: copy_prompts(db, source_id, target_id, before))
