"""The embedded SQLite checkpointer: LangGraph's `AsyncSqliteSaver`, storing each message once.

LangGraph's savers write a checkpoint's whole `messages` list again at every checkpoint and read
it back (and rebuild every message object) at the start of every run, so a turn costs in
proportion to the length of the conversation. This saver keeps the stock tables and adds one,
`acpkit_messages`: a checkpoint stores each list of messages as the keys of its messages (a
digest of the serialized message), and a message is written once, the first time a checkpoint
holds it.

In the process, each thread keeps the messages it wrote or read (the objects, with a shallow copy
of their fields): a message of the next checkpoint that is the same object with the same fields is
not serialized again, and a run starts from those objects instead of deserializing them. A node that
replaces a message (same id, new content), or assigns one of its fields in place, gets a new row.
Messages larger than `_CACHED_BYTES` are not kept in memory: they are read back and serialized at
each checkpoint, as the stock saver does (their row is still written once).

Everything else (checkpoint rows, pending writes, ids, the ancestor walk of delta channels) is
the stock saver's. A crash leaves at worst rows of `acpkit_messages` no checkpoint uses: the
messages are committed before the checkpoint that names them.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

__all__ = ["MessageSqliteSaver"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS acpkit_messages (
    thread_id TEXT NOT NULL,
    key TEXT NOT NULL,
    type TEXT NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (thread_id, key)
);
"""

_REFS = "__acpkit_message_keys__"
"""The one key of the dict that stands for a list of messages in a stored checkpoint."""

_CACHED_BYTES = 256 * 1024
"""A message whose serialized form is larger is not kept in memory between runs."""

_THREAD_BUDGET = 64 * 1024 * 1024
"""Serialized bytes of messages one thread keeps in memory at most."""

_THREADS = 64
"""Threads whose messages are kept in memory (the least recently used are dropped)."""

_SQL_VARS = 500
"""Keys per `IN (...)` query."""


@dataclass(slots=True)
class _Kept:
    """A message kept in memory: the object, its key, and its fields when it was stored."""

    message: BaseMessage
    key: str
    fields: dict[str, Any]
    extra: dict[str, Any] | None
    size: int

    def unchanged(self, message: BaseMessage) -> bool:
        """`message` is this one, its fields as they were stored (compared by identity first: cheap)."""
        return message is self.message and vars(message) == self.fields and _extra(message) == self.extra


@dataclass(slots=True)
class _Thread:
    """What one thread keeps in memory."""

    by_object: dict[int, _Kept] = field(default_factory=dict[int, _Kept])
    by_key: dict[str, _Kept] = field(default_factory=dict[str, _Kept])
    stored: set[str] = field(default_factory=set[str])
    """Keys known to be in the table (written or read by this process)."""
    size: int = 0

    def keep(self, message: BaseMessage, key: str, size: int) -> None:
        if size > _CACHED_BYTES or self.size + size > _THREAD_BUDGET or key in self.by_key:
            return
        kept = _Kept(message, key, dict(vars(message)), _extra(message), size)
        old = self.by_object.get(id(message))
        if old is not None:
            self.drop(old)
        self.by_object[id(message)] = kept
        self.by_key[key] = kept
        self.size += size

    def drop(self, kept: _Kept) -> None:
        """Forget a kept message."""
        if self.by_object.get(id(kept.message)) is kept:
            del self.by_object[id(kept.message)]
        if self.by_key.get(kept.key) is kept:
            del self.by_key[kept.key]
            self.size -= kept.size

    def prune(self, live: set[str]) -> None:
        """Forget kept messages no list of the latest checkpoint holds (when they are many)."""
        if len(self.by_key) <= 2 * len(live) + 16:
            return
        for kept in [k for k in self.by_key.values() if k.key not in live]:
            self.drop(kept)


def _extra(message: BaseMessage) -> dict[str, Any] | None:
    extra = message.__pydantic_extra__
    return dict(extra) if extra else None


def _is_messages(value: object) -> bool:
    if not isinstance(value, list) or not value:
        return False
    return all(isinstance(m, BaseMessage) for m in cast(list[object], value))


def _keys_of(value: object) -> list[str] | None:
    if isinstance(value, dict) and len(cast(dict[str, Any], value)) == 1:
        keys = cast(dict[str, Any], value).get(_REFS)
        if isinstance(keys, list):
            return [str(k) for k in cast(list[Any], keys)]
    return None


class MessageSqliteSaver(AsyncSqliteSaver):
    """`AsyncSqliteSaver` that stores each message of a thread once (see the module docstring)."""

    def __init__(self, conn: Any, **kwargs: Any) -> None:
        super().__init__(conn, **kwargs)
        self._threads: OrderedDict[str, _Thread] = OrderedDict()
        self._messages_ready = False

    # --- memory -----------------------------------------------------------------------------------

    def _thread(self, thread_id: str) -> _Thread:
        thread = self._threads.get(thread_id)
        if thread is None:
            thread = self._threads[thread_id] = _Thread()
            while len(self._threads) > _THREADS:
                self._threads.popitem(last=False)
        else:
            self._threads.move_to_end(thread_id)
        return thread

    def forget(self, thread_id: str) -> None:
        """Drop what the process keeps in memory for `thread_id` (its session was closed)."""
        self._threads.pop(thread_id, None)

    # --- schema -----------------------------------------------------------------------------------

    async def setup(self) -> None:
        """The stock tables, and `acpkit_messages`."""
        await super().setup()
        if not self._messages_ready:
            async with self.lock:
                if not self._messages_ready:
                    await self.conn.executescript(_SCHEMA)
                    await self.conn.commit()
                    self._messages_ready = True

    # --- writing ----------------------------------------------------------------------------------

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Write the new messages of the checkpoint, then the checkpoint with message keys in their place."""
        await self.setup()
        values = checkpoint["channel_values"]
        lists = [name for name, value in values.items() if _is_messages(value)]
        if not lists:
            return await super().aput(config, checkpoint, metadata, new_versions)
        thread_id = str(config.get("configurable", {})["thread_id"])
        thread = self._thread(thread_id)
        rows: dict[str, tuple[str, str, str, bytes]] = {}
        stored = dict(values)
        live: set[str] = set()
        for name in lists:
            keys: list[str] = []
            for message in cast(list[BaseMessage], values[name]):
                kept = thread.by_object.get(id(message))
                if kept is not None and kept.unchanged(message):
                    keys.append(kept.key)
                    continue
                type_, blob = self.serde.dumps_typed(message)
                key = hashlib.blake2b(blob, digest_size=16, person=type_.encode()[:16]).hexdigest()
                if key not in thread.stored:
                    rows[key] = (thread_id, key, type_, blob)
                thread.keep(message, key, len(blob))
                keys.append(key)
            live.update(keys)
            stored[name] = {_REFS: keys}
        if rows:
            try:
                async with self.lock:
                    await self.conn.executemany(
                        "INSERT OR IGNORE INTO acpkit_messages (thread_id, key, type, value) VALUES (?, ?, ?, ?)",
                        list(rows.values()),
                    )
                    await self.conn.commit()
            except BaseException:
                self.forget(thread_id)
                raise
            thread.stored.update(rows)
        thread.prune(live)
        return await super().aput(config, {**checkpoint, "channel_values": stored}, metadata, new_versions)

    # --- reading ----------------------------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The stock checkpoint, with its lists of messages rebuilt."""
        await self.setup()
        saved = await super().aget_tuple(config)
        if saved is not None:
            await self._rebuild(saved)
        return saved

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """The stock listing, with each checkpoint's lists of messages rebuilt."""
        await self.setup()
        async for saved in super().alist(config, filter=filter, before=before, limit=limit):
            await self._rebuild(saved)
            yield saved

    async def _rebuild(self, saved: CheckpointTuple) -> None:
        values = saved.checkpoint["channel_values"]
        lists = {name: keys for name, value in values.items() if (keys := _keys_of(value)) is not None}
        if not lists:
            return
        thread_id = str(saved.config.get("configurable", {})["thread_id"])
        thread = self._thread(thread_id)
        found: dict[str, BaseMessage] = {}
        missing: set[str] = set()
        for keys in lists.values():
            for key in keys:
                kept = thread.by_key.get(key)
                # A kept message changed in place since (by a run that then failed) is read again.
                if kept is not None and kept.unchanged(kept.message):
                    found[key] = kept.message
                else:
                    if kept is not None:
                        thread.drop(kept)
                    missing.add(key)
        if missing:
            for key, message, size in await self._read(thread_id, missing):
                found[key] = message
                thread.stored.add(key)
                thread.keep(message, key, size)
        for name, keys in lists.items():
            lost = [key for key in keys if key not in found]
            if lost:
                raise LookupError(
                    f"checkpoint {saved.checkpoint['id']} of thread {thread_id!r} names {len(lost)} message(s) "
                    "missing from acpkit_messages"
                )
            values[name] = [found[key] for key in keys]

    async def _read(self, thread_id: str, keys: Iterable[str]) -> list[tuple[str, BaseMessage, int]]:
        wanted = list(keys)
        out: list[tuple[str, BaseMessage, int]] = []
        # No `self.lock`: `alist` holds it while it yields, and reads need no transaction.
        for start in range(0, len(wanted), _SQL_VARS):
            chunk = wanted[start : start + _SQL_VARS]
            marks = ",".join("?" * len(chunk))
            async with self.conn.execute(
                f"SELECT key, type, value FROM acpkit_messages WHERE thread_id = ? AND key IN ({marks})",
                (thread_id, *chunk),
            ) as cursor:
                rows = list(await cursor.fetchall())
            for key, type_, blob in rows:
                out.append((str(key), cast(BaseMessage, self.serde.loads_typed((type_, blob))), len(blob)))
        return out

    # --- deleting ---------------------------------------------------------------------------------

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints, writes and messages."""
        await self.setup()
        await super().adelete_thread(thread_id)
        async with self.lock:
            await self.conn.execute("DELETE FROM acpkit_messages WHERE thread_id = ?", (str(thread_id),))
            await self.conn.commit()
        self.forget(str(thread_id))


def message_rows(values: Mapping[str, Any]) -> int:
    """How many lists of messages a stored checkpoint's channel values name (for tests)."""
    return sum(_keys_of(v) is not None for v in values.values())
