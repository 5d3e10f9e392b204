"""The embedded checkpointers store each message once: a turn writes what it added, nothing more.

Every test runs on both savers, SQLite (`MessageSqliteSaver`, the embedded default) and Postgres
(`MessagePostgresSaver`, `--store postgresql://...`), against a real database: a file, and the
throwaway cluster of `tests/postgres_cluster.py` (skipped without Postgres, except in CI).
"""

from __future__ import annotations

import contextlib
import sqlite3
import uuid
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiosqlite
import psycopg
import pytest
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import create_acp_agent
from langchain_acp._checkpoint import CHECKPOINT_FILE
from langchain_acp._message_saver import MessagesOnce, MessageSqliteSaver
from langchain_acp._message_saver_postgres import MessagePostgresSaver
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from lc_agent_script import recall
from lc_helpers import FakeChatModel, Reply
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

pytestmark = pytest.mark.timeout(60)


@dataclass
class Backend:
    """One database the savers run on: how to reach it, open a saver on it, and query it."""

    name: str
    store: str
    """What `create_acp_agent(store=...)` gets: the session store beside which the checkpointer lives."""
    file: Path | None = None
    url: str | None = None
    inserted: list[list[str]] = field(default_factory=list[list[str]])
    """The keys each `_insert_messages` call of a saver opened by `saver()` sent, in order."""

    def rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """Run a query (`%s` placeholders) on the database, in a connection of its own."""
        if self.file is not None:
            with contextlib.closing(sqlite3.connect(self.file)) as db:
                rows = db.execute(sql.replace("%s", "?"), args).fetchall()
                db.commit()
                return rows
        assert self.url is not None
        with psycopg.connect(self.url, autocommit=True) as conn:
            cur = conn.execute(sql.encode(), args)
            return cur.fetchall() if cur.description else []

    def count(self, thread_id: str | None = None) -> int:
        """Rows of `acpkit_messages` (of one thread)."""
        if thread_id is None:
            return int(self.rows("SELECT COUNT(*) FROM acpkit_messages")[0][0])
        return int(self.rows("SELECT COUNT(*) FROM acpkit_messages WHERE thread_id = %s", thread_id)[0][0])

    def message_bytes(self, thread_id: str) -> int:
        """Bytes of the serialized messages of one thread."""
        return int(
            self.rows("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM acpkit_messages WHERE thread_id = %s", thread_id)[0][
                0
            ]
        )

    def stored_bytes(self, thread_id: str) -> int:
        """Bytes of everything stored for the thread: checkpoints, channel values, writes, messages."""
        if self.file is not None:
            sizes = (
                "SELECT SUM(LENGTH(checkpoint) + LENGTH(metadata)) FROM checkpoints WHERE thread_id = %s",
                "SELECT SUM(LENGTH(value)) FROM writes WHERE thread_id = %s",
                "SELECT SUM(LENGTH(value)) FROM acpkit_messages WHERE thread_id = %s",
            )
        else:
            sizes = (
                "SELECT SUM(octet_length(checkpoint::text) + octet_length(metadata::text)) FROM checkpoints"
                " WHERE thread_id = %s",
                "SELECT SUM(octet_length(blob)) FROM checkpoint_blobs WHERE thread_id = %s",
                "SELECT SUM(octet_length(blob)) FROM checkpoint_writes WHERE thread_id = %s",
                "SELECT SUM(octet_length(value)) FROM acpkit_messages WHERE thread_id = %s",
            )
        return sum(int(self.rows(sql, thread_id)[0][0] or 0) for sql in sizes)

    def checkpoint_payloads(self, thread_id: str) -> list[bytes]:
        """Everything the stock tables hold of the thread's checkpoints (channel values included)."""
        if self.file is not None:
            sql = "SELECT checkpoint FROM checkpoints WHERE thread_id = %s"
        else:
            sql = (
                "SELECT convert_to(checkpoint::text, 'UTF8') FROM checkpoints WHERE thread_id = %s"
                " UNION ALL SELECT blob FROM checkpoint_blobs WHERE thread_id = %s"
            )
            return [bytes(r[0]) for r in self.rows(sql, thread_id, thread_id)]
        return [bytes(r[0]) for r in self.rows(sql, thread_id)]

    @contextlib.asynccontextmanager
    async def saver(self) -> AsyncGenerator[MessagesOnce]:
        """A fresh saver on the database (nothing in memory, as in a new process), recording its inserts."""
        async with self._open(stock=False) as saver:
            assert isinstance(saver, MessagesOnce)
            self._record(saver)
            yield saver

    @contextlib.asynccontextmanager
    async def stock_saver(self) -> AsyncGenerator[BaseCheckpointSaver[str]]:
        """LangGraph's own saver on the database (what a thread was written with before ours)."""
        async with self._open(stock=True) as saver:
            yield saver

    @contextlib.asynccontextmanager
    async def _open(self, *, stock: bool) -> AsyncGenerator[BaseCheckpointSaver[str]]:
        saver: BaseCheckpointSaver[str]
        if self.file is not None:
            conn = await aiosqlite.connect(str(self.file))
            try:
                saver = AsyncSqliteSaver(conn) if stock else MessageSqliteSaver(conn)
                await saver.setup()
                yield saver
            finally:
                await conn.close()
            return
        assert self.url is not None
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            self.url,
            min_size=1,
            max_size=4,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            open=False,
        )
        await pool.open(wait=True)
        try:
            saver = AsyncPostgresSaver(pool) if stock else MessagePostgresSaver(pool)
            await saver.setup()
            yield saver
        finally:
            await pool.close()

    def _record(self, saver: MessagesOnce) -> None:
        real = saver._insert_messages  # pyright: ignore[reportPrivateUsage]

        async def insert(rows: list[tuple[str, str, str, bytes]]) -> None:
            self.inserted.append([key for _, key, _, _ in rows])
            await real(rows)

        saver._insert_messages = insert  # pyright: ignore[reportPrivateUsage]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield Backend("sqlite", store=str(tmp_path / "sessions.sqlite3"), file=tmp_path / CHECKPOINT_FILE)
    else:
        url = str(request.getfixturevalue("postgres_url"))
        yield Backend("postgres", store=url, url=url)


def _texts(messages: list[BaseMessage]) -> list[str]:
    return [m.text for m in messages]


def _graph(saver: BaseCheckpointSaver[str], script: Any = recall) -> Any:
    return create_agent(FakeChatModel(script=[script], repeat_last=True), tools=[]).copy(update={"checkpointer": saver})


async def _put(saver: MessagesOnce, config: Any, messages: list[BaseMessage]) -> Any:
    """Write a checkpoint holding `messages` on top of the one `config` names; the next config."""
    version = uuid.uuid4().hex  # a new version of the channel: Postgres writes a channel's value per version
    checkpoint: Any = {
        **empty_checkpoint(),
        "channel_values": {"messages": messages},
        "channel_versions": {"messages": version},
    }
    return await saver.aput(config, checkpoint, {}, {"messages": version})


async def _turn(graph: Any, thread_id: str, text: str) -> str:
    config: Any = {"configurable": {"thread_id": thread_id}}
    state = await graph.ainvoke({"messages": [HumanMessage(content=text)]}, config, durability="exit")
    return str(state["messages"][-1].text)


async def test_each_turn_writes_only_its_new_messages_and_a_new_process_reads_them_back(backend: Backend) -> None:
    graph = create_agent(FakeChatModel(script=[recall], repeat_last=True), tools=[])
    rows: list[int] = []
    async with AcpTestClient.connect(create_acp_agent(graph, store=backend.store)) as c:
        await c.initialize()
        sid = await c.new_session()
        for word in ("alpha", "beta", "gamma"):
            await c.prompt(word, session_id=sid)
            rows.append(backend.count(sid))
    # The human message and the answer of each turn, once; earlier messages are not written again.
    assert rows == [2, 4, 6]
    # The checkpoints name their messages, they do not hold them.
    payloads = backend.checkpoint_payloads(sid)
    assert payloads and not any(b"alpha" in p for p in payloads)
    async with backend.saver() as saver:  # a fresh saver: nothing in memory, as in a new process
        saved = await saver.aget_tuple({"configurable": {"thread_id": sid}})
        assert saved is not None
        assert _texts(saved.checkpoint["channel_values"]["messages"]) == [
            "alpha",
            "turn 1: alpha",
            "beta",
            "turn 2: alpha | beta",
            "gamma",
            "turn 3: alpha | beta | gamma",
        ]
        history = [t async for t in saver.alist({"configurable": {"thread_id": sid}})]
        assert len(history) == 3
        assert all(isinstance(m, BaseMessage) for t in history for m in t.checkpoint["channel_values"]["messages"])
        await saver.adelete_thread(sid)
        assert await saver.aget_tuple({"configurable": {"thread_id": sid}}) is None
    assert backend.count(sid) == 0
    assert backend.checkpoint_payloads(sid) == []


async def test_rows_and_bytes_written_per_turn_stay_flat_as_the_session_grows(backend: Backend) -> None:
    def seen(messages: list[BaseMessage]) -> Reply:
        return Reply(text=f"seen {len(messages)}")

    rows: list[int] = []
    written: list[int] = []
    async with backend.saver() as saver:
        graph = _graph(saver, seen)
        for i in range(96):
            before, size = backend.count("t"), backend.stored_bytes("t")
            assert await _turn(graph, "t", f"word {i:02}") == f"seen {2 * i + 1}"  # the model saw every message
            rows.append(backend.count("t") - before)
            written.append(backend.stored_bytes("t") - size)
    # Each turn stores its two messages (the prompt and the answer), whatever came before; every
    # 32 turns (64 messages) one more row holds the keys of those 64 messages, once.
    whole_run = [(i + 1) % 32 == 0 for i in range(96)]
    assert [len(keys) for keys in backend.inserted] == [3 if run else 2 for run in whole_run]
    assert rows == [3 if run else 2 for run in whole_run]
    # Everything a turn writes (checkpoint, channel values, rows) is as large at turns 65-96 as at
    # turns 33-64: the checkpoint lists a key per run of 64 messages and the keys after them, and
    # would grow by 64 keys (about 2 KB a turn) from one period to the next if it listed them all.
    second, third = sum(written[32:64]) / 32, sum(written[64:96]) / 32
    assert abs(third - second) < 100, (second, third)


async def test_a_thread_written_by_langgraphs_own_saver_is_continued_and_stored_once_from_then_on(
    backend: Backend,
) -> None:
    async with backend.stock_saver() as stock:  # a deployment from before: whole lists in the checkpoints
        graph = _graph(stock)
        for word in ("alpha", "beta"):
            await _turn(graph, "t", word)
    async with backend.saver() as saver:
        graph = _graph(saver)
        assert await _turn(graph, "t", "gamma") == "turn 3: alpha | beta | gamma"
        assert await _turn(graph, "t", "delta") == "turn 4: alpha | beta | gamma | delta"
        # The first checkpoint of ours stores every message of the thread once; the next, its own two.
        assert [len(keys) for keys in backend.inserted] == [6, 2]
    async with backend.saver() as fresh:
        saved = await fresh.aget_tuple({"configurable": {"thread_id": "t"}})
        assert saved is not None
        assert _texts(saved.checkpoint["channel_values"]["messages"])[::2] == ["alpha", "beta", "gamma", "delta"]


async def test_two_savers_taking_turns_on_one_thread_see_each_others_messages(backend: Backend) -> None:
    async with backend.saver() as a, backend.saver() as b:  # two replicas (processes) on one database
        replicas = [_graph(a), _graph(b)]
        words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
        for i, word in enumerate(words):
            answer = await _turn(replicas[i % 2], "t", word)
            assert answer == f"turn {i + 1}: " + " | ".join(words[: i + 1])
        # Each turn wrote its own two messages: neither replica wrote again what the other had stored.
        assert [len(keys) for keys in backend.inserted] == [2] * 6
        assert backend.count("t") == 12
        # A replica's memory of the thread never hides the other's turns: back to A after B's turn.
        saved = await a.aget_tuple({"configurable": {"thread_id": "t"}})
        assert saved is not None and _texts(saved.checkpoint["channel_values"]["messages"])[-2:] == [
            "zeta",
            "turn 6: alpha | beta | gamma | delta | epsilon | zeta",
        ]


async def test_a_thread_deleted_and_started_again_elsewhere_gets_every_message_written_again(
    backend: Backend,
) -> None:
    start: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    question = HumanMessage(content="hi", id="h1")
    answer = AIMessage(content="hello", id="a1")
    async with backend.saver() as a, backend.saver() as b:
        await _put(a, start, [question, answer])
        await b.adelete_thread("t")  # another replica deletes the thread and starts it again
        await _put(b, start, [HumanMessage(content="hi", id="h1")])
        assert backend.count("t") == 1
        # A reads the thread: the newest checkpoint is not the one it wrote, so what it believed
        # stored (the answer too) is forgotten, and its next checkpoint writes the answer again.
        latest = await a.aget_tuple({"configurable": {"thread_id": "t"}})
        assert latest is not None
        await _put(a, latest.config, [question, answer, HumanMessage(content="again", id="h2")])
        assert backend.count("t") == 3
    async with backend.saver() as fresh:
        saved = await fresh.aget_tuple({"configurable": {"thread_id": "t"}})
        assert saved is not None
        assert _texts(saved.checkpoint["channel_values"]["messages"]) == ["hi", "hello", "again"]


async def test_a_message_changed_in_place_is_stored_again(backend: Backend) -> None:
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    question = HumanMessage(content="delete it?", id="h1")
    answer = AIMessage(content="", id="a1", tool_calls=[{"name": "rm", "args": {"path": "a"}, "id": "c1"}])
    async with backend.saver() as saver:
        config = await _put(saver, config, [question, answer])
        config = await _put(saver, config, [question, answer])
        assert backend.count() == 2  # the same objects: nothing new
        assert [len(keys) for keys in backend.inserted] == [2]
        # What the human-in-the-loop middleware does with an edited call: the field is assigned in place.
        answer.tool_calls = [{"name": "rm", "args": {"path": "b"}, "id": "c1", "type": "tool_call"}]
        await _put(saver, config, [question, answer])
        assert backend.count() == 3
        assert [len(keys) for keys in backend.inserted] == [2, 1]
    async with backend.saver() as saver:
        saved = await saver.aget_tuple({"configurable": {"thread_id": "t"}})
        assert saved is not None
        last = saved.checkpoint["channel_values"]["messages"][-1]
        assert isinstance(last, AIMessage) and last.tool_calls[0]["args"] == {"path": "b"}


async def test_a_message_replaced_inside_a_long_list_rewrites_only_its_run_of_keys(backend: Backend) -> None:
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    messages: list[BaseMessage] = [HumanMessage(content=f"m{i}", id=f"m{i}") for i in range(130)]
    async with backend.saver() as saver:
        config = await _put(saver, config, messages)
        assert [len(keys) for keys in backend.inserted] == [130 + 2]  # the messages, and two runs of 64 keys
        # A node replaces message 10 (what a summarizing or redacting middleware does).
        messages = [*messages[:10], HumanMessage(content="redacted", id="m10"), *messages[11:]]
        await _put(saver, config, messages)
        assert [len(keys) for keys in backend.inserted] == [132, 2]  # the new message and its run
    async with backend.saver() as fresh:
        saved = await fresh.aget_tuple({"configurable": {"thread_id": "t"}})
        assert saved is not None
        texts = _texts(saved.checkpoint["channel_values"]["messages"])
        assert texts == [f"m{i}" for i in range(10)] + ["redacted"] + [f"m{i}" for i in range(11, 130)]
        # A run of keys that went missing is refused as clearly as a message.
        backend.rows("DELETE FROM acpkit_messages WHERE type = %s", "acpkit-keys")
    async with backend.saver() as fresh:
        with pytest.raises(LookupError, match=r"names 2 run\(s\) of message keys missing from acpkit_messages"):
            await fresh.aget_tuple({"configurable": {"thread_id": "t"}})


async def test_a_checkpoint_naming_a_lost_message_is_refused_with_a_clear_error(backend: Backend) -> None:
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    async with backend.saver() as saver:
        await _put(saver, config, [HumanMessage(content="hi", id="h1")])
    backend.rows("DELETE FROM acpkit_messages")
    async with backend.saver() as saver:
        with pytest.raises(LookupError, match="missing from acpkit_messages"):
            await saver.aget_tuple({"configurable": {"thread_id": "t"}})


def _turns(n: int) -> list[BaseMessage]:
    return [
        m for i in range(n) for m in (HumanMessage(content=f"q{i}", id=f"h{i}"), AIMessage(content=f"a{i}", id=f"a{i}"))
    ]


async def test_a_long_list_is_stored_right_whatever_changes_between_checkpoints(backend: Backend) -> None:
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    messages = _turns(20)
    async with backend.saver() as saver:
        config = await _put(saver, config, messages)
        messages = [*messages, HumanMessage(content="q20", id="h20")]
        config = await _put(saver, config, messages)  # the 40 already stored are not written again
        assert [len(keys) for keys in backend.inserted] == [40, 1]
        messages[7].content = "changed in place"  # a field assigned on a message far back in the list
        config = await _put(saver, config, messages)
        assert [len(keys) for keys in backend.inserted] == [40, 1, 1]
        messages = [*messages[:3], AIMessage(content="replaced", id="a1"), *messages[4:10]]  # replaced, removed
        await _put(saver, config, messages)
        expected = _texts(messages)
    async with backend.saver() as saver:  # a new process reads the latest list back
        saved = await saver.aget_tuple({"configurable": {"thread_id": "t"}})
        assert saved is not None
        assert _texts(saved.checkpoint["channel_values"]["messages"]) == expected
    assert expected[3] == "replaced" and expected[7] == "changed in place" and len(expected) == 10


async def test_a_message_made_too_big_to_keep_then_changed_back_is_read_back_as_it_is(backend: Backend) -> None:
    # Past one run of 64 keys: the runs of the kept prefix are reused only while they hold its keys.
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    messages = _turns(35)
    async with backend.saver() as saver:
        config = await _put(saver, config, messages)
        messages[0].content = "x" * 300_000  # assigned in place, too big to keep in memory
        config = await _put(saver, config, messages)
        messages[0].content = "q0"  # and back
        await _put(saver, config, messages)
    async with backend.saver() as fresh:
        saved = await fresh.aget_tuple({"configurable": {"thread_id": "t"}})
        assert saved is not None
        assert _texts(saved.checkpoint["channel_values"]["messages"]) == _texts(_turns(35))


async def test_a_run_that_changes_messages_in_place_and_fails_leaves_the_stored_ones(backend: Backend) -> None:
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    read: Any = {"configurable": {"thread_id": "t"}}
    async with backend.saver() as saver:
        await _put(saver, config, _turns(30))
        saver.settle("t")  # the run that wrote it ended normally
        for attempt in range(2):
            saved = await saver.aget_tuple(read)  # a run starts from the kept messages...
            assert saved is not None
            messages = saved.checkpoint["channel_values"]["messages"]
            assert _texts(messages)[:3] == ["q0", "a0", "q1"], attempt
            messages[1].content = f"changed by failed run {attempt}"  # ...changes one in place, then fails: no settle
        saved = await saver.aget_tuple(read)
        assert saved is not None
        assert _texts(saved.checkpoint["channel_values"]["messages"]) == _texts(_turns(30))
