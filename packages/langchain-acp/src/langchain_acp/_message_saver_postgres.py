"""The embedded Postgres checkpointer: LangGraph's `AsyncPostgresSaver`, storing each message once.

The logic is `MessagesOnce`'s (`_message_saver`), shared with the SQLite saver; this module is
its SQL on Postgres: the `acpkit_messages` table in the connection's `search_path` schema, beside
LangGraph's own tables, created by versioned migrations (`MIGRATIONS`, recorded in
`acpkit_langgraph_schema_version`, applied once under the advisory lock of acpkit-core's
`migrate`). Needs the `postgres` extra (psycopg 3 and `langgraph-checkpoint-postgres`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, LiteralString, cast

from acpkit_core.store import migrate
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncConnection
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from ._message_saver import MessagesOnce

__all__ = ["MIGRATIONS", "VERSION_TABLE", "MessagePostgresSaver"]

MIGRATIONS: tuple[tuple[int, LiteralString], ...] = (
    (
        1,
        """
        CREATE TABLE acpkit_messages (
            thread_id text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL,
            type text NOT NULL,
            value bytea NOT NULL,
            PRIMARY KEY (thread_id, key)
        );
        """,
    ),
)
"""The message table's schema, as numbered steps (see `acpkit_core.store.migrate`)."""

VERSION_TABLE = "acpkit_langgraph_schema_version"
"""Where the steps of `MIGRATIONS` applied are recorded (acpkit-core's own are in `acpkit_schema_version`)."""


class MessagePostgresSaver(MessagesOnce, AsyncPostgresSaver):
    """`AsyncPostgresSaver` that stores each message of a thread once (see `_message_saver`).

    `setup()` runs LangGraph's setup, then this module's `MIGRATIONS`: call it once before use, as
    with the stock saver. Every replica on the database sees every thread; a replica's memory of a
    thread never serves another replica's older state (see `MessagesOnce`).
    """

    @asynccontextmanager
    async def _connection(self) -> AsyncGenerator[AsyncConnection[Any]]:
        """A connection of the pool (or the saver's own), without the saver's lock."""
        conn: object = self.conn
        if isinstance(conn, AsyncConnectionPool):
            pool = cast("AsyncConnectionPool[AsyncConnection[Any]]", conn)
            async with pool.connection() as pooled:
                yield pooled
        else:
            yield cast("AsyncConnection[Any]", conn)

    async def setup(self) -> None:
        """LangGraph's tables, then `acpkit_messages` (versioned: a newer schema is refused)."""
        await super().setup()
        async with self.lock, self._connection() as conn:
            await migrate(conn, MIGRATIONS, version_table=VERSION_TABLE, package="langchain-acp")

    async def _insert_messages(self, rows: list[tuple[str, str, str, bytes]]) -> None:
        # One statement (committed on its own: the pool's connections are in autocommit).
        async with self.lock, self._connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(
                "INSERT INTO acpkit_messages (thread_id, key, type, value)"
                " SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::bytea[]) ON CONFLICT DO NOTHING",
                [list(column) for column in zip(*rows, strict=True)],
            )

    async def _select_messages(self, thread_id: str, keys: list[str]) -> list[tuple[str, str, bytes]]:
        # No `self.lock`: `alist` holds it while it yields.
        async with self._connection() as conn, conn.cursor(row_factory=tuple_row, binary=True) as cur:
            await cur.execute(
                "SELECT key, type, value FROM acpkit_messages WHERE thread_id = %s AND key = ANY(%s)",
                (thread_id, keys),
            )
            return [(str(key), str(type_), bytes(value)) for key, type_, value in await cur.fetchall()]

    async def _delete_messages(self, thread_id: str) -> None:
        async with self.lock, self._connection() as conn:
            await conn.execute("DELETE FROM acpkit_messages WHERE thread_id = %s", (thread_id,))
