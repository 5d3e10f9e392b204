"""The Postgres store's schema: its migrations, applied once per database under an advisory lock."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, LiteralString

from .base import SchemaTooNewError, pending_steps
from .postgres_log import LOG_BATCH_MIGRATION, LOG_MIGRATION
from .postgres_rewind import REWIND_MIGRATION

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["MIGRATIONS", "SchemaTooNewError", "migrate"]


MIGRATIONS: tuple[tuple[int, LiteralString], ...] = (
    (
        1,
        """
        CREATE TABLE acpkit_sessions (
            id text COLLATE "C" PRIMARY KEY,
            cwd text COLLATE "C" NOT NULL,
            owner text COLLATE "C",
            updated_at text COLLATE "C" NOT NULL,
            data text NOT NULL,
            server text NOT NULL,
            version bigint NOT NULL DEFAULT 0
        );
        CREATE INDEX acpkit_sessions_by_time ON acpkit_sessions (updated_at DESC, id);
        CREATE INDEX acpkit_sessions_by_cwd ON acpkit_sessions (cwd, updated_at DESC, id);
        CREATE INDEX acpkit_sessions_by_owner ON acpkit_sessions (owner, updated_at DESC, id);
        CREATE TABLE acpkit_history (
            session_id text COLLATE "C" NOT NULL,
            seq bigint NOT NULL,
            item text NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
        CREATE TABLE acpkit_transcript (
            session_id text COLLATE "C" NOT NULL,
            seq bigint NOT NULL,
            updates text NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
        CREATE TABLE acpkit_leases (
            session_id text COLLATE "C" PRIMARY KEY,
            owner text NOT NULL,
            host text NOT NULL,
            pid integer NOT NULL,
            holder integer NOT NULL,
            expires double precision NOT NULL
        );
        """,
    ),
    (2, REWIND_MIGRATION),
    (3, LOG_MIGRATION),
    (4, LOG_BATCH_MIGRATION),
)
"""The schema, as numbered steps: a database at version N gets the steps after N, in order, once.

The version lives in `acpkit_schema_version`. Tables are prefixed `acpkit_`, so the store can
share a database (and a schema) with other applications and with LangGraph's checkpoint tables.
"""


_MIGRATION_LOCK = 0x4143504B  # "ACPK": the advisory lock that serialises schema migrations


async def migrate(
    conn: AsyncConnection[Any],
    migrations: Sequence[tuple[int, LiteralString]] = MIGRATIONS,
    *,
    version_table: str = "acpkit_schema_version",
    package: str = "acpkit-core",
) -> int:
    """Bring the schema reached by `conn` (its `search_path`) to the last of `migrations`; returns the version.

    One transaction under an advisory lock: replicas starting together migrate once, and a failed
    step leaves the schema as it was. A database newer than `migrations` raises `SchemaTooNewError`
    (which names `package`, the one to upgrade). The steps applied are recorded in `version_table`:
    another package keeping tables of its own in the same database (`langchain-acp`'s message
    table) numbers its steps in a table of its own.
    """
    from psycopg import sql
    from psycopg.rows import tuple_row

    latest = migrations[-1][0] if migrations else 0
    table = sql.Identifier(version_table)
    async with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        await cur.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {}"
                " (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            ).format(table)
        )
        await cur.execute(sql.SQL("SELECT COALESCE(MAX(version), 0) FROM {}").format(table))
        row = await cur.fetchone()
        current = int(row[0]) if row else 0
        upgrade = f"upgrade {package} on this replica"
        steps = pending_steps(current, migrations, package=package, where="the database's", upgrade=upgrade)
        for version, step in steps:
            await cur.execute(step)
            await cur.execute(sql.SQL("INSERT INTO {} (version) VALUES (%s)").format(table), (version,))
    return latest
