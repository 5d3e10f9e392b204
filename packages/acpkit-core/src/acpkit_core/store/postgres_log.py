"""The Postgres store's update-log tables (migration step 3) and statements."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, LiteralString, TypeVar

from .update_log import LogEntry

if TYPE_CHECKING:
    from psycopg import AsyncConnection

_T = TypeVar("_T")

__all__ = ["LOG_MIGRATION", "LOG_TABLES", "PostgresLog"]

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
                    [(session_id, seq, text) for seq, text in entries],
                )

        await self._write_call(work)

    async def log_read(self, session_id: str, after: int) -> list[LogEntry]:
        """The log's entries numbered above `after`."""

        async def work(conn: AsyncConnection[Any]) -> list[LogEntry]:
            cur = await conn.execute(
                "SELECT seq, entry FROM acpkit_update_log WHERE session_id = %s AND seq > %s ORDER BY seq",
                (session_id, after),
            )
            return [(int(seq), str(entry)) for seq, entry in await cur.fetchall()]

        return await self._write_call(work)

    async def log_last(self, session_id: str) -> int:
        """The log's highest number (0 when empty)."""

        async def work(conn: AsyncConnection[Any]) -> int:
            cur = await conn.execute("SELECT MAX(seq) FROM acpkit_update_log WHERE session_id = %s", (session_id,))
            row = await cur.fetchone()
            return int(row[0]) if row is not None and row[0] is not None else 0

        return await self._write_call(work)

    async def log_trim(self, session_id: str, before: int) -> None:
        """Drop the entries numbered below `before`, and every answer."""

        async def work(conn: AsyncConnection[Any]) -> None:
            await conn.execute("DELETE FROM acpkit_update_log WHERE session_id = %s AND seq < %s", (session_id, before))
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
