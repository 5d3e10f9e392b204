"""The Postgres store's update-log tables (migration steps 3 and 4) and statements.

A row of `acpkit_update_log` holds a run of consecutive entries, one per line, numbered from its
`seq` (see [`pack_rows`][acpkit_core.store.update_log.pack_rows]).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, LiteralString, TypeVar

from .update_log import LogEntry, cut_row, pack_rows, unpack_rows

if TYPE_CHECKING:
    from psycopg import AsyncConnection

_T = TypeVar("_T")

__all__ = ["LOG_BATCH_MIGRATION", "LOG_MIGRATION", "LOG_TABLES", "PostgresLog"]

LOG_MIGRATION: LiteralString = """
CREATE TABLE acpkit_update_log (
    session_id text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    entry text NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE acpkit_update_log_answers (
    session_id text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (session_id, key)
);
"""

LOG_BATCH_MIGRATION: LiteralString = """
COMMENT ON TABLE acpkit_update_log IS
    'each row: a run of consecutive entries, one JSON text per line, numbered from seq';
"""
"""Step 4: the log's rows hold runs of entries (the table is unchanged; a version that reads one entry
per row refuses the database rather than misread it)."""

LOG_TABLES = ("acpkit_update_log", "acpkit_update_log_answers")
"""Tables keyed by `session_id` that a deleted session drops."""


class PostgresLog:
    """The [`UpdateLogStore`][acpkit_core.store.UpdateLogStore] methods of `PostgresStore` (mixed into it)."""

    def _write_call(self, work: Callable[[AsyncConnection[Any]], Awaitable[_T]]) -> Awaitable[_T]:
        raise NotImplementedError  # the store's

    async def log_append(self, session_id: str, entries: Sequence[LogEntry]) -> None:
        """Add entries to the session's update log."""
        if not entries:
            return

        async def work(conn: AsyncConnection[Any]) -> None:
            async with conn.cursor() as cur:
                await cur.executemany(
                    "INSERT INTO acpkit_update_log (session_id, seq, entry) VALUES (%s, %s, %s) "
                    "ON CONFLICT (session_id, seq) DO UPDATE SET entry = EXCLUDED.entry",
                    [(session_id, first, text) for first, text in pack_rows(entries)],
                )

        await self._write_call(work)

    async def log_read(self, session_id: str, after: int) -> list[LogEntry]:
        """The log's entries numbered above `after`."""

        async def work(conn: AsyncConnection[Any]) -> list[LogEntry]:
            cur = await conn.execute(  # the rows from the one holding `after` (the last starting at or before it) on
                "SELECT seq, entry FROM acpkit_update_log WHERE session_id = %s AND seq >= COALESCE("
                "(SELECT MAX(seq) FROM acpkit_update_log WHERE session_id = %s AND seq <= %s), 0) ORDER BY seq",
                (session_id, session_id, after),
            )
            return unpack_rows(((int(first), str(text)) for first, text in await cur.fetchall()), after)

        return await self._write_call(work)

    async def log_last(self, session_id: str) -> int:
        """The log's highest number (0 when empty)."""

        async def work(conn: AsyncConnection[Any]) -> int:
            cur = await conn.execute(
                "SELECT seq + length(entry) - length(replace(entry, E'\\n', '')) FROM acpkit_update_log "
                "WHERE session_id = %s ORDER BY seq DESC LIMIT 1",
                (session_id,),
            )
            row = await cur.fetchone()
            return int(row[0]) if row is not None and row[0] is not None else 0

        return await self._write_call(work)

    async def log_trim(self, session_id: str, before: int) -> None:
        """Drop the entries numbered below `before`, and every answer."""

        async def work(conn: AsyncConnection[Any]) -> None:
            # one transaction (`_write_call`'s)
            cur = await conn.execute(
                "SELECT seq, entry FROM acpkit_update_log WHERE session_id = %s AND seq < %s ORDER BY seq DESC LIMIT 1",
                (session_id, before),
            )
            straddling = await cur.fetchone()
            await conn.execute("DELETE FROM acpkit_update_log WHERE session_id = %s AND seq < %s", (session_id, before))
            kept = cut_row(int(straddling[0]), str(straddling[1]), before) if straddling else None
            if kept is not None:
                await conn.execute(
                    "INSERT INTO acpkit_update_log (session_id, seq, entry) VALUES (%s, %s, %s) "
                    "ON CONFLICT (session_id, seq) DO UPDATE SET entry = EXCLUDED.entry",
                    (session_id, *kept),
                )
            await conn.execute("DELETE FROM acpkit_update_log_answers WHERE session_id = %s", (session_id,))

        await self._write_call(work)

    async def log_answer(self, session_id: str, key: str, value: str) -> None:
        """Set a named value of the session's log."""

        async def work(conn: AsyncConnection[Any]) -> None:
            await conn.execute(
                "INSERT INTO acpkit_update_log_answers (session_id, key, value) VALUES (%s, %s, %s) "
                "ON CONFLICT (session_id, key) DO UPDATE SET value = EXCLUDED.value",
                (session_id, key, value),
            )

        await self._write_call(work)

    async def log_answers(self, session_id: str) -> dict[str, str]:
        """The session's named values."""

        async def work(conn: AsyncConnection[Any]) -> dict[str, str]:
            cur = await conn.execute(
                "SELECT key, value FROM acpkit_update_log_answers WHERE session_id = %s", (session_id,)
            )
            return {str(k): str(v) for k, v in await cur.fetchall()}

        return await self._write_call(work)
