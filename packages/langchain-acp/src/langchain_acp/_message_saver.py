"""LangGraph checkpoint savers that store each message once: the logic, and the SQLite saver.

LangGraph's savers write a checkpoint's whole `messages` list again at every checkpoint and read
it back (and rebuild every message object) at the start of every run, so a turn costs in
proportion to the length of the conversation. `MessagesOnce` keeps the stock saver's tables and
adds one, `acpkit_messages`: a checkpoint stores each list of messages as the keys of its messages
(a digest of the serialized message), and a message is written once, the first time a checkpoint
holds it. The keys of a long list are grouped in runs of `_RUN`, each run a row of its own written
once too, so the checkpoint names a run by one key and what a turn writes does not grow with the
conversation. `MessageSqliteSaver` (the embedded default, here) and `MessagePostgresSaver`
(`_message_saver_postgres`, `--store postgresql://...`) differ only in the SQL that reads,
writes and deletes those rows.

In the process, each thread keeps the messages it wrote or read (the objects, with a shallow copy
of their fields): a message of the next checkpoint that is the same object with the same fields is
not serialized again, and a run starts from those objects instead of deserializing them. A node that
replaces a message (same id, new content), or assigns one of its fields in place, gets a new row.
Messages larger than `_CACHED_BYTES` are not kept in memory: they are read back and serialized at
each checkpoint, as the stock saver does (their row is still written once).

A long conversation is mostly the previous checkpoint's list with a few messages added, so each
thread also keeps its latest list of messages (`_Prefix`): when the next list starts with the same
objects, their fields as stored and their rows known stored, that is checked for the whole prefix
at once (a few comparisons done in C, not a Python step per message), and only the added messages
are looked at one by one (the prefix also keeps the keys of its runs, so only a run the new
messages complete is hashed, and reading a checkpoint joins its runs in C). Anything else (a
message replaced, removed or changed in place) takes the message by message path. When the runner
reports that a run of the thread ended normally (`settle`), the next read hands out the kept
messages without that comparison: only a run changes them, and its last checkpoint compared them
already.

Several processes may share one database (two windows on one SQLite file, replicas on one
Postgres). What a process keeps can never be stale: a key is the digest of the message's bytes,
so a kept message is the message any process stored under that key, and a checkpoint written by
another process names keys this one reads (or finds kept). What could be stale is the set of keys
this process believes stored, whose rows it does not write again: it holds only while the thread's
newest checkpoint is one this process wrote or read. When a run reads a newer checkpoint, or writes
on top of another one (another process advanced the thread, or deleted it and started it again, or
a run resumed an older checkpoint), the set starts over from the keys of the checkpoint read
(whoever wrote it committed them first), and the other messages are written again (a row already
there is left as it is).

Everything else (checkpoint rows, pending writes, ids, the ancestor walk of delta channels) is
the stock saver's. A crash leaves at worst rows of `acpkit_messages` no checkpoint uses: the
messages are committed before the checkpoint that names them.
"""

from __future__ import annotations

import hashlib
import operator
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any, cast

from acpkit_core.store import pending_steps
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

__all__ = ["SQLITE_MIGRATIONS", "VERSION_TABLE", "MessageSqliteSaver", "MessagesOnce"]

SQLITE_MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        # `IF NOT EXISTS`: a file of 2.0 before the table was versioned has it already, as it is.
        """
        CREATE TABLE IF NOT EXISTS acpkit_messages (
            thread_id TEXT NOT NULL,
            key TEXT NOT NULL,
            type TEXT NOT NULL,
            value BLOB NOT NULL,
            PRIMARY KEY (thread_id, key)
        )
        """,
    ),
)
"""The message table's schema on SQLite, as numbered steps of one statement each (the Postgres
saver's are `_message_saver_postgres.MIGRATIONS`): a file at version N gets the steps after N, in
order, once; a file newer than the last step is refused (`acpkit_core.store.pending_steps`)."""

VERSION_TABLE = "acpkit_langgraph_schema_version"
"""Where the steps applied are recorded, in the checkpoint file (the same name as on Postgres)."""

_UPGRADE = "upgrade langchain-acp here, or give this agent a state directory of its own (ACPKIT_STATE_DIR)"

_REFS = "__acpkit_message_keys__"
"""The key of the dict that stands for a list of messages in a stored checkpoint: the keys of its
messages (after those of its runs, if any)."""

_RUNS = "__acpkit_message_runs__"
"""The other key of that dict, in a list of `_RUN` messages or more: the keys of its runs."""

_RUN = 64
"""Message keys per run: a list's first keys are stored as runs of this many, each a row of
`acpkit_messages` (type `_RUN_TYPE`) written once, so a checkpoint lists a key per run and the
keys of at most `_RUN - 1` messages after them, whatever the length of the conversation."""

_RUN_TYPE = "acpkit-keys"

_CACHED_BYTES = 256 * 1024
"""A message whose serialized form is larger is not kept in memory between runs."""

_THREAD_BUDGET = 64 * 1024 * 1024
"""Serialized bytes of messages one thread keeps in memory at most."""

_THREADS = 64
"""Threads whose messages are kept in memory (the least recently used are dropped)."""

_NAMESPACES = 32
"""Checkpoint namespaces (subgraphs) whose newest checkpoint a thread follows; past that it starts over."""

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
        return message is self.message and vars(message) == self.fields and _extra_of(message) == self.extra


_extra_of = operator.attrgetter("__pydantic_extra__")


def _copy_extra(message: BaseMessage) -> dict[str, Any] | None:
    extra = message.__pydantic_extra__
    return None if extra is None else dict(extra)


@dataclass(slots=True)
class _Prefix:
    """The leading messages of a thread's latest list that are kept, in parallel lists.

    `same(messages)` answers for the whole prefix at once with comparisons that run in C: the same
    objects (`id`, stable while this holds them), each with the fields (and extra fields) it had
    when stored.
    """

    messages: list[BaseMessage] = field(default_factory=list[BaseMessage])
    ids: list[int] = field(default_factory=list[int])
    fields: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    extras: list[dict[str, Any] | None] = field(default_factory=list[dict[str, Any] | None])
    keys: list[str] = field(default_factory=list[str])
    runs: list[str] = field(default_factory=list[str])
    """The keys of the runs that group this prefix's leading keys (`_RUN` keys each), so a
    checkpoint of a longer list computes only the runs its new keys complete."""

    def same(self, messages: Sequence[BaseMessage]) -> bool:
        """`messages` are this prefix's objects, in order, none changed since it was stored."""
        return (
            len(messages) == len(self.ids)
            and list(map(id, messages)) == self.ids
            and list(map(vars, messages)) == self.fields
            and list(map(_extra_of, messages)) == self.extras
        )

    def unchanged(self) -> bool:
        """None of this prefix's messages was changed in place since it was stored."""
        return self.same(self.messages)

    def extend(self, thread: _Thread, messages: Sequence[BaseMessage]) -> None:
        """Add `messages` (stored, unchanged) while they are kept in memory."""
        for message in messages:
            kept = thread.by_object.get(id(message))
            if kept is None or kept.message is not message:
                return
            self.messages.append(message)
            self.ids.append(id(message))
            self.fields.append(kept.fields)
            self.extras.append(kept.extra)
            self.keys.append(kept.key)


@dataclass(slots=True)
class _Thread:
    """What one thread keeps in memory."""

    by_object: dict[int, _Kept] = field(default_factory=dict[int, _Kept])
    by_key: dict[str, _Kept] = field(default_factory=dict[str, _Kept])
    stored: set[str] = field(default_factory=set[str])
    """Keys known to be in the table (written or read by this process since `heads` last changed hands)."""
    heads: dict[str, str] = field(default_factory=dict[str, str])
    """The newest checkpoint id this process wrote or read, per checkpoint namespace."""
    runs: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """Runs of message keys by their own key (written or read)."""
    size: int = 0
    latest: dict[str, _Prefix] = field(default_factory=dict[str, _Prefix])
    """Per channel, the kept prefix of the latest list of messages written or read."""
    settled: bool = False
    """A run ended after its last checkpoint and nothing was read since: the kept messages are as stored."""

    def reuse(self, name: str, messages: Sequence[BaseMessage]) -> _Prefix | None:
        """The channel's latest prefix when `messages` start with it unchanged and its rows are known
        stored (it is then taken out)."""
        prefix = self.latest.pop(name, None)
        if prefix is None or not prefix.ids or not self.stored.issuperset(prefix.keys):
            return None
        if not self.stored.issuperset(prefix.runs):
            return None
        return prefix if prefix.same(messages[: len(prefix.ids)]) else None

    def keep(self, message: BaseMessage, key: str, size: int) -> None:
        """Keep `message`, stored as `key`, in memory; when it is not kept (too big, over the thread's
        budget, or `key` kept for another object), what was kept for the object under another key
        is forgotten all the same: a prefix must never take the old key for this message."""
        old = self.by_object.get(id(message))
        if old is not None and old.key != key:
            self.drop(old)
        if size > _CACHED_BYTES or self.size + size > _THREAD_BUDGET or key in self.by_key:
            return
        kept = _Kept(message, key, dict(vars(message)), _copy_extra(message), size)
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

    def moved(self, namespace: str, head: str | None) -> None:
        """The thread's newest checkpoint in `namespace` is `head`: forget `stored` unless we knew it."""
        if self.heads.get(namespace) != head:
            self.stored.clear()
            self.heads.clear()
        self.advanced(namespace, head)

    def advanced(self, namespace: str, head: str | None) -> None:
        """This process wrote (or read) `head`, the newest checkpoint of `namespace`."""
        if head is None:
            self.heads.pop(namespace, None)
            return
        if namespace not in self.heads and len(self.heads) >= _NAMESPACES:
            self.stored.clear()
            self.heads.clear()
        self.heads[namespace] = head

    def prune(self, lists: Sequence[Sequence[str]], runs: set[str]) -> None:
        """Forget kept messages and runs no list of the latest checkpoint holds (when they are many).

        `lists` are the keys of the checkpoint's lists of messages; the set of them is built only when
        there is something to prune (a turn does not go over the whole conversation).
        """
        if len(self.runs) > 2 * len(runs) + 16:
            self.runs = {key: keys for key, keys in self.runs.items() if key in runs}
        if len(self.by_key) <= 2 * sum(map(len, lists)) + 16:
            return
        live = set[str]().union(*lists)
        for kept in [k for k in self.by_key.values() if k.key not in live]:
            self.drop(kept)


def _is_messages(value: object) -> bool:
    if not isinstance(value, list) or not value:
        return False
    return all(map(isinstance, cast(list[object], value), repeat(BaseMessage)))


def _refs_of(value: object) -> tuple[list[str], list[str]] | None:
    """The run keys and message keys of a stored list of messages, or `None` for any other value."""
    if not isinstance(value, dict):
        return None
    refs = cast(dict[str, Any], value)
    if _REFS not in refs or not refs.keys() <= {_REFS, _RUNS}:
        return None
    runs, keys = refs.get(_RUNS, []), refs[_REFS]
    if not isinstance(runs, list) or not isinstance(keys, list):
        return None
    return [str(k) for k in cast(list[Any], runs)], [str(k) for k in cast(list[Any], keys)]


def _run_row(keys: list[str]) -> tuple[str, bytes]:
    """The key and stored value of a run of message keys."""
    value = " ".join(keys).encode()
    return hashlib.blake2b(value, digest_size=16, person=_RUN_TYPE.encode()).hexdigest(), value


class MessagesOnce(BaseCheckpointSaver[str]):
    """Stores each message of a thread once (see the module docstring); put it before a stock saver.

    `class MessageSqliteSaver(MessagesOnce, AsyncSqliteSaver)`: this class rewrites checkpoints
    on their way to and from the stock saver's `aput`, `aget_tuple` and `alist`, and deletes a
    thread's messages after the stock `adelete_thread`. A subclass gives the SQL, in the four
    methods `_setup_messages`, `_insert_messages`, `_select_messages` and `_delete_messages`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._threads: OrderedDict[str, _Thread] = OrderedDict()

    # --- the database (each backend's) ----------------------------------------------------------

    async def _setup_messages(self) -> None:
        """Make sure the table exists (before each call; a cheap check once done)."""

    async def _insert_messages(self, rows: list[tuple[str, str, str, bytes]]) -> None:
        """Insert `(thread_id, key, type, value)` rows, leaving present keys as they are, and commit."""
        raise NotImplementedError

    async def _select_messages(self, thread_id: str, keys: list[str]) -> list[tuple[str, str, bytes]]:
        """The `(key, type, value)` rows of those keys of the thread that are stored.

        Called while `alist` holds the stock saver's lock: it must not take it.
        """
        raise NotImplementedError

    async def _delete_messages(self, thread_id: str) -> None:
        """Delete the thread's rows and commit."""
        raise NotImplementedError

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

    def settle(self, thread_id: str) -> None:
        """A run of `thread_id` ended normally (its last checkpoint written, nothing runs on its messages).

        The next read of the thread then hands out the kept messages without comparing each one's
        fields with the stored ones (they are as the last checkpoint stored them: only a run changes
        them, and a run that fails midway is never settled).
        """
        thread = self._threads.get(thread_id)
        if thread is not None:
            thread.settled = True

    # --- writing ----------------------------------------------------------------------------------

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Write the new messages of the checkpoint, then the checkpoint with message keys in their place."""
        await self._setup_messages()
        configurable = config.get("configurable", {})
        thread_id = str(configurable["thread_id"])
        namespace = str(configurable.get("checkpoint_ns", ""))
        parent = configurable.get("checkpoint_id")
        thread = self._thread(thread_id)
        thread.moved(namespace, str(parent) if parent else None)
        values = checkpoint["channel_values"]
        lists = [name for name, value in values.items() if _is_messages(value)]
        stored = dict(values)
        if lists:
            rows: dict[str, tuple[str, str, str, bytes]] = {}
            live: list[list[str]] = []
            live_runs: set[str] = set()
            for name in lists:
                messages = cast(list[BaseMessage], values[name])
                prefix = thread.reuse(name, messages)
                keys: list[str] = list(prefix.keys) if prefix is not None else []
                added = messages[len(keys) :]
                for message in added:
                    kept = thread.by_object.get(id(message))
                    if kept is not None and kept.unchanged(message):
                        key = kept.key
                        if key not in thread.stored:
                            rows[key] = (thread_id, key, *self.serde.dumps_typed(message))
                    else:
                        type_, blob = self.serde.dumps_typed(message)
                        key = hashlib.blake2b(blob, digest_size=16, person=type_.encode()[:16]).hexdigest()
                        if key not in thread.stored:
                            rows[key] = (thread_id, key, type_, blob)
                        thread.keep(message, key, len(blob))
                    keys.append(key)
                live.append(keys)
                runs: list[str] = list(prefix.runs) if prefix is not None else []  # still the runs of its keys
                if prefix is None:
                    prefix, added = _Prefix(), messages
                if len(prefix.ids) == len(keys) - len(added):  # the prefix covered every message before these
                    prefix.extend(thread, added)
                thread.latest[name] = prefix
                whole = len(keys) - len(keys) % _RUN
                for start in range(len(runs) * _RUN, whole, _RUN):
                    run = keys[start : start + _RUN]
                    run_key, value = _run_row(run)
                    if run_key not in thread.stored:
                        rows[run_key] = (thread_id, run_key, _RUN_TYPE, value)
                    thread.runs[run_key] = run
                    runs.append(run_key)
                # The runs stay the prefix's only while its keys are the list's (in C, no copy).
                same_keys = all(map(operator.eq, prefix.keys, keys))
                prefix.runs = runs[: len(prefix.keys) // _RUN] if same_keys else []
                live_runs.update(runs)
                stored[name] = {_RUNS: runs, _REFS: keys[whole:]} if runs else {_REFS: keys}
            if rows:
                try:
                    await self._insert_messages(list(rows.values()))
                except BaseException:
                    self.forget(thread_id)
                    raise
                thread.stored.update(rows)
            thread.prune(live, live_runs)
        saved = await super().aput(config, {**checkpoint, "channel_values": stored}, metadata, new_versions)
        thread.advanced(namespace, checkpoint["id"])
        return saved

    # --- reading ----------------------------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The stock checkpoint, with its lists of messages rebuilt."""
        await self._setup_messages()
        saved = await super().aget_tuple(config)
        configurable = config.get("configurable", {})
        if not configurable.get("checkpoint_id"):  # the thread's newest: note whose it is
            thread = self._thread(str(configurable["thread_id"]))
            thread.moved(str(configurable.get("checkpoint_ns", "")), saved.checkpoint["id"] if saved else None)
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
        await self._setup_messages()
        async for saved in super().alist(config, filter=filter, before=before, limit=limit):
            await self._rebuild(saved)
            yield saved

    async def _rebuild(self, saved: CheckpointTuple) -> None:
        values = saved.checkpoint["channel_values"]
        refs = {name: ref for name, value in values.items() if (ref := _refs_of(value)) is not None}
        if not refs:
            return
        thread_id = str(saved.config.get("configurable", {})["thread_id"])
        thread = self._thread(thread_id)
        # Over the runs and keys in C (`chain`, set operations): no Python step per message.
        runs = set(chain.from_iterable(run_keys for run_keys, _ in refs.values()))
        unknown = runs - thread.runs.keys()
        if unknown:
            for key, type_, value in await self._select_messages(thread_id, list(unknown)):
                if type_ == _RUN_TYPE:
                    thread.runs[key] = value.decode().split(" ")
        lost_runs = runs - thread.runs.keys()
        if lost_runs:
            raise LookupError(
                f"checkpoint {saved.checkpoint['id']} of thread {thread_id!r} names {len(lost_runs)} run(s) of "
                "message keys missing from acpkit_messages"
            )
        lists = {
            name: [*chain.from_iterable(map(thread.runs.__getitem__, run_keys)), *keys]
            for name, (run_keys, keys) in refs.items()
        }
        settled, thread.settled = thread.settled, False  # what is read now is handed to a run
        found: dict[str, BaseMessage] = {}
        missing: set[str] = set()
        heads: dict[str, _Prefix] = {}
        for name, keys in lists.items():
            head = thread.latest.get(name)
            if head is not None and keys[: len(head.keys)] == head.keys and (settled or head.unchanged()):
                heads[name] = head
                keys = keys[len(head.keys) :]
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
            for key, type_, blob in await self._select_messages(thread_id, list(missing)):
                message = cast(BaseMessage, self.serde.loads_typed((type_, blob)))
                found[key] = message
                thread.keep(message, key, len(blob))
        for name, keys in lists.items():
            head = heads.get(name)
            start = len(head.keys) if head is not None else 0
            lost = [key for key in keys[start:] if key not in found]
            if lost:
                raise LookupError(
                    f"checkpoint {saved.checkpoint['id']} of thread {thread_id!r} names {len(lost)} message(s) "
                    "missing from acpkit_messages"
                )
            tail = [found[key] for key in keys[start:]]
            values[name] = [*head.messages, *tail] if head is not None else tail
            if head is None:
                head = _Prefix()
            else:
                thread.stored.update(head.keys)
            head.extend(thread, tail)
            head.runs = refs[name][0][: len(head.keys) // _RUN]
            thread.latest[name] = head
        # Whoever wrote this checkpoint committed its messages first: they are all in the table.
        thread.stored.update(found)
        thread.stored.update(runs)

    # --- deleting ---------------------------------------------------------------------------------

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints and writes, then its messages."""
        await self._setup_messages()
        await super().adelete_thread(thread_id)
        await self._delete_messages(str(thread_id))
        self.forget(str(thread_id))


class MessageSqliteSaver(MessagesOnce, AsyncSqliteSaver):
    """`AsyncSqliteSaver` that stores each message of a thread once (see the module docstring)."""

    def __init__(self, conn: Any, **kwargs: Any) -> None:
        super().__init__(conn, **kwargs)
        self._messages_ready = False

    async def setup(self) -> None:
        """The stock tables, then `acpkit_messages` (versioned: a newer schema is refused)."""
        await super().setup()
        if not self._messages_ready:
            async with self.lock:
                if not self._messages_ready:
                    await self._migrate()
                    self._messages_ready = True

    async def _migrate(self) -> None:
        """Apply the steps of `SQLITE_MIGRATIONS` the file lacks, in one write transaction (processes
        sharing the file migrate once); `SchemaTooNewError` when a newer langchain-acp migrated it."""
        conn = self.conn
        await conn.commit()  # nothing of the stock setup left pending before the transaction
        await conn.execute("BEGIN IMMEDIATE")
        try:
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE}"
                " (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
            )
            async with conn.execute(f"SELECT COALESCE(MAX(version), 0) FROM {VERSION_TABLE}") as cursor:
                row = await cursor.fetchone()
            current = int(row[0]) if row else 0
            async with conn.execute("PRAGMA database_list") as cursor:
                listed = await cursor.fetchone()
            path = str(listed[2]) if listed and listed[2] else "in memory"
            steps = pending_steps(
                current,
                SQLITE_MIGRATIONS,
                package="langchain-acp",
                where=f"the checkpoint database {path}:",
                upgrade=_UPGRADE,
            )
            for version, step in steps:
                await conn.execute(step)
                await conn.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (?)", (version,))
        except BaseException:
            await conn.rollback()
            raise
        await conn.commit()

    async def _setup_messages(self) -> None:
        await self.setup()

    async def _insert_messages(self, rows: list[tuple[str, str, str, bytes]]) -> None:
        async with self.lock:
            await self.conn.executemany(
                "INSERT OR IGNORE INTO acpkit_messages (thread_id, key, type, value) VALUES (?, ?, ?, ?)", rows
            )
            await self.conn.commit()

    async def _select_messages(self, thread_id: str, keys: list[str]) -> list[tuple[str, str, bytes]]:
        out: list[tuple[str, str, bytes]] = []
        # No `self.lock`: `alist` holds it while it yields, and reads need no transaction.
        for start in range(0, len(keys), _SQL_VARS):
            chunk = keys[start : start + _SQL_VARS]
            marks = ",".join("?" * len(chunk))
            async with self.conn.execute(
                f"SELECT key, type, value FROM acpkit_messages WHERE thread_id = ? AND key IN ({marks})",
                (thread_id, *chunk),
            ) as cursor:
                out.extend((str(key), str(type_), bytes(blob)) for key, type_, blob in await cursor.fetchall())
        return out

    async def _delete_messages(self, thread_id: str) -> None:
        async with self.lock:
            await self.conn.execute("DELETE FROM acpkit_messages WHERE thread_id = ?", (thread_id,))
            await self.conn.commit()
