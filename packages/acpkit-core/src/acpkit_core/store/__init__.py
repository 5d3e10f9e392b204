"""Session stores: where sessions, runner state and transcripts live.

`SqliteStore` (the default, one WAL-mode file in the user's state directory), `MemoryStore`
(tests), and the [`SessionStore`][acpkit_core.store.SessionStore] protocol for anything else.
"""

from __future__ import annotations

from .base import (
    InvalidCursorError,
    SessionPage,
    SessionStore,
    StoredSession,
    TurnBusyError,
    TurnStart,
    default_store_path,
    private_file,
)
from .memory import MemoryStore
from .sqlite import SqliteStore

__all__ = [
    "InvalidCursorError",
    "MemoryStore",
    "SessionPage",
    "SessionStore",
    "SqliteStore",
    "StoredSession",
    "TurnBusyError",
    "TurnStart",
    "default_store_path",
    "open_store",
    "private_file",
]


def open_store(spec: SessionStore | str | None) -> SessionStore:
    """A store from `AgentOptions.store`: a store, `"memory"`, a SQLite path, or `None` for the default file."""
    if spec is None:
        return SqliteStore(default_store_path())
    if isinstance(spec, str):
        return MemoryStore() if spec == "memory" else SqliteStore(spec)
    return spec
