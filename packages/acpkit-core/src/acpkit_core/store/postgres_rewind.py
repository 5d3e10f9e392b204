"""The Postgres store's rewind tables (schema step 2) and the statements on them.

`acpkit_prompts` holds a row per recorded prompt (its order in `seq`), `acpkit_file_changes` a row
per file and prompt (contents as UTF-8 `bytea`: a file may hold what `text` refuses, such as NUL).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, LiteralString, TypeVar

from ..errors import SessionNotFoundError
from ..runner.types import Session
from .base import JsonDict
from .rewind import FileChange, PromptMark, cut_batches, decode_content, encode_content

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["REWIND_MIGRATION", "REWIND_TABLES", "PostgresRewinding", "cut_history"]

_T = TypeVar("_T")

REWIND_MIGRATION: LiteralString = """
CREATE TABLE acpkit_prompts (
    session_id text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    id text COLLATE "C" NOT NULL,
    text text NOT NULL,
    history_length bigint NOT NULL,
    state text NOT NULL,
    created_at text NOT NULL,
    PRIMARY KEY (session_id, seq),
    UNIQUE (session_id, id)
);
CREATE TABLE acpkit_file_changes (
    session_id text COLLATE "C" NOT NULL,
    prompt_id text COLLATE "C" NOT NULL,
    path text NOT NULL,
    seq bigint NOT NULL,
    before bytea,
    after bytea,
    PRIMARY KEY (session_id, prompt_id, path)
);
"""
"""Schema step 2: the tables rewinding needs."""

REWIND_TABLES = ("acpkit_prompts", "acpkit_file_changes")
"""Tables keyed by `session_id` that a deleted, re-created or cleared session drops."""


async def cut_history(conn: AsyncConnection[Any], session_id: str, count: int) -> None:
    """Drop the history items from position `count` on (a truncated `HistoryLog`)."""
    await conn.execute("DELETE FROM acpkit_history WHERE session_id = %s AND seq >= %s", (session_id, count))


async def _rewind_rows(conn: AsyncConnection[Any], session_id: str, prompt_id: str, keep_updates: int) -> None:
    cur = await conn.execute("SELECT 1 FROM acpkit_sessions WHERE id = %s FOR UPDATE", (session_id,))
    if await cur.fetchone() is None:
        raise SessionNotFoundError(session_id)
    cur = await conn.execute(
        "SELECT seq FROM acpkit_prompts WHERE session_id = %s AND id = %s", (session_id, prompt_id)
    )
    found = await cur.fetchone()
    if found is None:
        raise KeyError(f"prompt {prompt_id!r} is not a recorded prompt of session {session_id!r}")
    await conn.execute(
        "DELETE FROM acpkit_file_changes WHERE session_id = %(id)s AND prompt_id IN "
        "(SELECT id FROM acpkit_prompts WHERE session_id = %(id)s AND seq >= %(seq)s)",
        {"id": session_id, "seq": found[0]},
    )
    await conn.execute("DELETE FROM acpkit_prompts WHERE session_id = %s AND seq >= %s", (session_id, found[0]))
    cur = await conn.execute(
        "SELECT seq, updates FROM acpkit_transcript WHERE session_id = %s ORDER BY seq", (session_id,)
    )
    batches = [(int(seq), json.loads(text)) for seq, text in await cur.fetchall()]
    drop, rewrite = cut_batches(batches, keep_updates)
    if drop:
        await conn.execute("DELETE FROM acpkit_transcript WHERE session_id = %s AND seq = ANY(%s)", (session_id, drop))
    if rewrite is not None:
        await conn.execute(
            "UPDATE acpkit_transcript SET updates = %s WHERE session_id = %s AND seq = %s",
            (rewrite[1], session_id, rewrite[0]),
        )


class PostgresRewinding:
    """The [`RewindStore`][acpkit_core.store.RewindStore] methods of `PostgresStore` (mixed into it)."""

    def _write_call(self, work: Callable[[AsyncConnection[Any]], Awaitable[_T]]) -> Awaitable[_T]:
        raise NotImplementedError  # the store's

    def _save_work(
        self, session: Session, *, server: JsonDict | None = None
    ) -> tuple[Callable[[AsyncConnection[Any]], Awaitable[int]], int]:
        raise NotImplementedError  # the store's

    def _append_work(
        self, session_id: str, updates: Sequence[JsonDict]
    ) -> Callable[[AsyncConnection[Any]], Awaitable[None]]:
        raise NotImplementedError  # the store's

    async def add_prompt(self, session_id: str, mark: PromptMark, *, transcript: Sequence[JsonDict] = ()) -> None:
        """Record a prompt that has just arrived (and append `transcript`, in one transaction)."""
        append = self._append_work(session_id, transcript)

        async def work(conn: AsyncConnection[Any]) -> None:
            await conn.execute("SELECT 1 FROM acpkit_sessions WHERE id = %s FOR UPDATE", (session_id,))
            await conn.execute(
                "INSERT INTO acpkit_prompts (session_id, seq, id, text, history_length, state, created_at)"
                " VALUES (%(sid)s, (SELECT COALESCE(MAX(seq), -1) + 1 FROM acpkit_prompts WHERE session_id = %(sid)s),"
                " %(id)s, %(text)s, %(length)s, %(state)s, %(at)s)",
                {
                    "sid": session_id,
                    "id": mark.id,
                    "text": mark.text,
                    "length": mark.history_length,
                    "state": json.dumps(mark.state),
                    "at": mark.created_at,
                },
            )
            await append(conn)

        await self._write_call(work)

    async def add_file_changes(self, session_id: str, changes: Sequence[FileChange]) -> None:
        """Record file changes (a known `(prompt, path)` keeps its `before`)."""
        rows = list(changes)

        async def work(conn: AsyncConnection[Any]) -> None:
            await conn.execute("SELECT 1 FROM acpkit_sessions WHERE id = %s FOR UPDATE", (session_id,))
            for change in rows:
                await conn.execute(
                    "INSERT INTO acpkit_file_changes (session_id, prompt_id, path, seq, before, after) VALUES"
                    " (%(sid)s, %(prompt)s, %(path)s,"
                    " (SELECT COALESCE(MAX(seq), -1) + 1 FROM acpkit_file_changes WHERE session_id = %(sid)s),"
                    " %(before)s, %(after)s)"
                    " ON CONFLICT (session_id, prompt_id, path) DO UPDATE SET after = EXCLUDED.after",
                    {
                        "sid": session_id,
                        "prompt": change.prompt_id,
                        "path": change.path,
                        "before": encode_content(change.before),
                        "after": encode_content(change.after),
                    },
                )

        if rows:
            await self._write_call(work)

    async def prompts(self, session_id: str) -> list[PromptMark]:
        """The recorded prompts, oldest first (without state)."""

        async def work(conn: AsyncConnection[Any]) -> list[PromptMark]:
            cur = await conn.execute(
                "SELECT id, text, history_length, created_at FROM acpkit_prompts WHERE session_id = %s ORDER BY seq",
                (session_id,),
            )
            rows = await cur.fetchall()
            return [PromptMark(id=r[0], text=r[1], history_length=int(r[2]), created_at=r[3]) for r in rows]

        return await self._write_call(work)

    async def prompt(self, session_id: str, prompt_id: str) -> PromptMark | None:
        """One recorded prompt, with its state."""

        async def work(conn: AsyncConnection[Any]) -> PromptMark | None:
            cur = await conn.execute(
                "SELECT id, text, history_length, state, created_at FROM acpkit_prompts"
                " WHERE session_id = %s AND id = %s",
                (session_id, prompt_id),
            )
            r = await cur.fetchone()
            if r is None:
                return None
            state: JsonDict = json.loads(r[3])
            return PromptMark(id=r[0], text=r[1], history_length=int(r[2]), state=state, created_at=r[4])

        return await self._write_call(work)

    async def file_changes(self, session_id: str, prompt_ids: Sequence[str]) -> list[FileChange]:
        """The file changes of those prompts, oldest first."""
        ids = list(prompt_ids)

        async def work(conn: AsyncConnection[Any]) -> list[FileChange]:
            cur = await conn.execute(
                "SELECT prompt_id, path, before, after FROM acpkit_file_changes"
                " WHERE session_id = %s AND prompt_id = ANY(%s) ORDER BY seq",
                (session_id, ids),
            )
            return [
                FileChange(prompt_id=r[0], path=r[1], before=decode_content(r[2]), after=decode_content(r[3]))
                for r in await cur.fetchall()
            ]

        return await self._write_call(work) if ids else []

    async def rewind(
        self, session: Session, *, prompt_id: str, keep_updates: int, server: JsonDict | None = None
    ) -> int:
        """Take the session back to before `prompt_id` in one transaction."""
        save, count = self._save_work(session, server=server)

        async def work(conn: AsyncConnection[Any]) -> int:
            await _rewind_rows(conn, session.id, prompt_id, keep_updates)
            return await save(conn)

        version = await self._write_call(work)
        session.history.saved(count)
        return version

    async def copy_prompts(self, source_id: str, target_id: str, *, before: str | None = None) -> None:
        """Copy the source's prompt marks and file changes (those before `before`) to the target."""

        async def work(conn: AsyncConnection[Any]) -> None:
            bound = 2**62
            if before is not None:
                cur = await conn.execute(
                    "SELECT seq FROM acpkit_prompts WHERE session_id = %s AND id = %s", (source_id, before)
                )
                found = await cur.fetchone()
                bound = int(found[0]) if found is not None else bound
            params = {"source": source_id, "target": target_id, "bound": bound}
            await conn.execute(
                "INSERT INTO acpkit_prompts (session_id, seq, id, text, history_length, state, created_at)"
                " SELECT %(target)s, seq, id, text, history_length, state, created_at FROM acpkit_prompts"
                " WHERE session_id = %(source)s AND seq < %(bound)s",
                params,
            )
            await conn.execute(
                "INSERT INTO acpkit_file_changes (session_id, prompt_id, path, seq, before, after)"
                " SELECT %(target)s, prompt_id, path, seq, before, after FROM acpkit_file_changes"
                " WHERE session_id = %(source)s AND prompt_id IN"
                " (SELECT id FROM acpkit_prompts WHERE session_id = %(source)s AND seq < %(bound)s)",
                params,
            )

        await self._write_call(work)
