"""The checkpointer a served graph runs with: its own, or one embedded beside the session store.

Beside a SQLite store it is a SQLite file next to it; with a Postgres store (`postgresql://...`),
LangGraph's own Postgres saver on the same database, so every replica sees every checkpoint; with
the memory store, memory. The SQLite and Postgres savers store each message once
(`_message_saver`). The user's graph is never mutated: a graph compiled without a checkpointer is
copied (`Pregel.copy(update={"checkpointer": saver})`) and the copy gets the embedded saver.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acpkit_core.errors import UserError
from acpkit_core.store import private_file
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel import Pregel

if TYPE_CHECKING:
    from ._message_saver import MessagesOnce

__all__ = ["CHECKPOINT_FILE", "EmbeddedCheckpointer", "with_checkpointer"]

CHECKPOINT_FILE = "langgraph-checkpoints.sqlite3"
"""Name of the embedded checkpoint database, created beside the session store's SQLite file."""


_SETUP_LOCK = 0x4143504C  # "ACPL": serialises LangGraph's table setup between replicas starting together


class EmbeddedCheckpointer:
    """Opens the embedded saver lazily, in the serving event loop, and closes it at the end.

    `path` is the SQLite file to use; `url` a Postgres database (LangGraph's Postgres saver, the
    `postgres` extra); neither: an in-memory saver (the memory store).
    """

    def __init__(self, path: Path | None, *, url: str | None = None) -> None:
        self.path = path
        """The SQLite file, or `None`."""
        self.url = url
        """The Postgres URL, or `None`."""
        self._saver: BaseCheckpointSaver[Any] | None = None
        self._conn: Any = None
        self._messages: MessagesOnce | None = None
        self._lock = asyncio.Lock()

    def preload(self) -> None:
        """Import the SQLite saver's modules now (at start-up: a few milliseconds, or twenty-odd without
        a bytecode cache, that the first prompt would otherwise wait for)."""
        if self.path is not None and self.url is None:
            from . import _message_saver  # noqa: F401  # pyright: ignore[reportUnusedImport]

    async def get(self) -> BaseCheckpointSaver[Any]:
        """The saver, opening it on first use."""
        if self._saver is not None:
            return self._saver
        async with self._lock:
            if self._saver is None:
                if self.url is not None:
                    self._saver = self._messages = await self._open_postgres(self.url)
                elif self.path is None:
                    self._saver = InMemorySaver()
                else:
                    import aiosqlite

                    from ._message_saver import MessageSqliteSaver

                    self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                    private_file(self.path)
                    # No statement cache: a cached statement keeps its last parameters and the buffer
                    # it read a value into, so one big message would stay in memory for good.
                    conn = await aiosqlite.connect(str(self.path), cached_statements=0)
                    try:
                        await conn.execute("PRAGMA journal_mode=WAL")
                        # As the session store: a committed checkpoint survives the process being killed.
                        await conn.execute("PRAGMA synchronous=NORMAL")
                        saver = MessageSqliteSaver(conn)
                        await saver.setup()  # a file a newer langchain-acp migrated: SchemaTooNewError
                    except BaseException:
                        await conn.close()  # the next turn tries again, on a connection of its own
                        raise
                    self._conn = conn
                    self._saver = self._messages = saver
            return self._saver

    async def _open_postgres(self, url: str) -> MessagesOnce:
        try:
            from psycopg import AsyncConnection
            from psycopg.rows import dict_row
            from psycopg_pool import AsyncConnectionPool

            from ._message_saver_postgres import MessagePostgresSaver
        except ImportError as exc:
            raise UserError(
                'a Postgres session store needs LangGraph\'s Postgres saver: pip install "langchain-acp[postgres]" '
                "(or give create_acp_agent a checkpointer)"
            ) from exc
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=10,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            open=False,
            name="acpkit-langgraph",
        )
        await pool.open(wait=True, timeout=10.0)
        try:
            saver = MessagePostgresSaver(pool)
            # LangGraph's setup is not safe to run twice at once: replicas starting together take turns.
            async with await AsyncConnection.connect(url, autocommit=True) as lock:
                await lock.execute("SELECT pg_advisory_lock(%s)", (_SETUP_LOCK,))
                await saver.setup()
        except BaseException:
            await pool.close()
            raise
        self._conn = pool
        return saver

    def forget(self, thread_id: str) -> None:
        """Drop what the embedded saver keeps in memory for a thread (its session was closed)."""
        if self._messages is not None:
            self._messages.forget(thread_id)

    def settle(self, saver: object, thread_id: str) -> None:
        """A run of the thread on `saver` ended normally: if that is the embedded saver, it may trust the
        messages it keeps for the thread."""
        if self._messages is not None and saver is self._messages:
            self._messages.settle(thread_id)

    async def aclose(
        self, *, unless: Callable[[], bool] | None = None, before: Callable[[], None] | None = None
    ) -> bool:
        """Close the SQLite connection or the Postgres pool, if one was opened; `True` when it was.

        Under the saver's lock: nothing is closed when `unless()` says the saver is in use; otherwise
        `before()` runs (drop what holds the saver), the saver is detached at once (the next `get`
        opens a new one, after this close) and then closed.
        """
        async with self._lock:
            if self._conn is None or (unless is not None and unless()):
                return False  # nothing to close (an in-memory saver keeps its threads), or in use
            if before is not None:
                before()
            conn, self._conn = self._conn, None
            self._saver = self._messages = None
            await conn.close()
            return True


def with_checkpointer(graph: Pregel[Any, Any, Any, Any], saver: BaseCheckpointSaver[Any]) -> Pregel[Any, Any, Any, Any]:
    """A copy of `graph` that checkpoints with `saver` (the graph itself is left as it was)."""
    return graph.copy(update={"checkpointer": saver})


def has_checkpointer(graph: Pregel[Any, Any, Any, Any]) -> bool:
    """True when the graph was compiled with its own saver."""
    saver: object = graph.checkpointer  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    return isinstance(saver, BaseCheckpointSaver)
