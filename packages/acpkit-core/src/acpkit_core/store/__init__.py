"""Session stores: where sessions, runner state and transcripts live.

`SqliteStore` (the default, one WAL-mode file in the user's state directory), `PostgresStore`
(one database shared by several replicas; the `postgres` extra), `MemoryStore` (tests), and
the [`SessionStore`][acpkit_core.store.SessionStore] protocol for anything else (with the optional
[`RewindStore`][acpkit_core.store.RewindStore] for going back to an earlier prompt).
"""

from __future__ import annotations

from .base import (
    InvalidCursorError,
    SchemaTooNewError,
    SessionPage,
    SessionStore,
    StoredSession,
    TurnBusyError,
    TurnStart,
    default_store_path,
    pending_steps,
    private_file,
)
from .memory import MemoryStore
from .postgres import PostgresStore, is_postgres_url
from .postgres_schema import migrate
from .rewind import FileChange, PromptMark, RewindStore
from .sqlite import SqliteStore
from .update_log import LogEntry, UpdateLogStore

__all__ = [
    "FileChange",
    "InvalidCursorError",
    "LogEntry",
    "MemoryStore",
    "PostgresStore",
    "PromptMark",
    "RewindStore",
    "SchemaTooNewError",
    "SessionPage",
    "SessionStore",
    "SqliteStore",
    "StoredSession",
    "TurnBusyError",
    "TurnStart",
    "UpdateLogStore",
    "default_store_path",
    "migrate",
    "open_store",
    "pending_steps",
    "private_file",
]


def open_store(spec: SessionStore | str | None) -> SessionStore:
    """A store from `AgentOptions.store`: a store, `"memory"`, a `postgresql://` URL, a SQLite path, or `None`.

    `None` is the default SQLite file ([`default_store_path()`][acpkit_core.store.default_store_path]).
    """
    if spec is None:
        return SqliteStore(default_store_path())
    if isinstance(spec, str):
        if spec == "memory":
            return MemoryStore()
        return PostgresStore(spec) if is_postgres_url(spec) else SqliteStore(spec)
    return spec
