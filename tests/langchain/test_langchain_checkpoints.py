"""The embedded checkpointer stores each message once: a turn writes what it added, nothing more."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import create_acp_agent
from langchain_acp._checkpoint import CHECKPOINT_FILE
from langchain_acp._message_saver import MessageSqliteSaver
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from lc_agent_script import recall
from lc_helpers import FakeChatModel

pytestmark = pytest.mark.timeout(60)


def _count(path: Path, sql: str, *args: Any) -> int:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return int(db.execute(sql, args).fetchone()[0])


def _latest_blob(path: Path, thread_id: str) -> bytes:
    with contextlib.closing(sqlite3.connect(path)) as db:
        row = db.execute(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1", (thread_id,)
        ).fetchone()
    return bytes(row[0])


@contextlib.asynccontextmanager
async def _saver(path: Path) -> AsyncGenerator[MessageSqliteSaver]:
    conn = await aiosqlite.connect(str(path))
    try:
        saver = MessageSqliteSaver(conn)
        await saver.setup()
        yield saver
    finally:
        await conn.close()


def _texts(messages: list[BaseMessage]) -> list[str]:
    return [m.text for m in messages]


async def test_each_turn_writes_only_its_new_messages_and_a_new_process_reads_them_back(tmp_path: Path) -> None:
    store = str(tmp_path / "sessions.sqlite3")
    db = tmp_path / CHECKPOINT_FILE
    graph = create_agent(FakeChatModel(script=[recall], repeat_last=True), tools=[])
    rows: list[int] = []
    async with AcpTestClient.connect(create_acp_agent(graph, store=store)) as c:
        await c.initialize()
        sid = await c.new_session()
        for word in ("alpha", "beta", "gamma"):
            await c.prompt(word, session_id=sid)
            rows.append(_count(db, "SELECT COUNT(*) FROM acpkit_messages WHERE thread_id = ?", sid))
    # The human message and the answer of each turn, once; earlier messages are not written again.
    assert rows == [2, 4, 6]
    # The checkpoint names its messages, it does not hold them.
    assert b"alpha" not in _latest_blob(db, sid)
    async with _saver(db) as saver:  # a fresh saver: nothing in memory, as in a new process
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
        assert all(isinstance(m, BaseMessage) for t in history for m in t.checkpoint["channel_values"]["messages"])
        await saver.adelete_thread(sid)
    assert _count(db, "SELECT COUNT(*) FROM acpkit_messages WHERE thread_id = ?", sid) == 0


async def test_a_message_changed_in_place_is_stored_again(tmp_path: Path) -> None:
    db = tmp_path / CHECKPOINT_FILE
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    question = HumanMessage(content="delete it?", id="h1")
    answer = AIMessage(content="", id="a1", tool_calls=[{"name": "rm", "args": {"path": "a"}, "id": "c1"}])

    def checkpoint(messages: list[BaseMessage]) -> Any:
        return {**empty_checkpoint(), "channel_values": {"messages": messages}}

    async with _saver(db) as saver:
        config = await saver.aput(config, checkpoint([question, answer]), {}, {})
        config = await saver.aput(config, checkpoint([question, answer]), {}, {})
        assert _count(db, "SELECT COUNT(*) FROM acpkit_messages") == 2  # the same objects: nothing new
        # What the human-in-the-loop middleware does with an edited call: the field is assigned in place.
        answer.tool_calls = [{"name": "rm", "args": {"path": "b"}, "id": "c1", "type": "tool_call"}]
        await saver.aput(config, checkpoint([question, answer]), {}, {})
        assert _count(db, "SELECT COUNT(*) FROM acpkit_messages") == 3
    async with _saver(db) as saver:
        saved = await saver.aget_tuple({"configurable": {"thread_id": "t"}})
        assert saved is not None
        last = saved.checkpoint["channel_values"]["messages"][-1]
        assert isinstance(last, AIMessage) and last.tool_calls[0]["args"] == {"path": "b"}


async def test_a_checkpoint_naming_a_lost_message_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / CHECKPOINT_FILE
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    async with _saver(db) as saver:
        values = {"messages": [HumanMessage(content="hi", id="h1")]}
        await saver.aput(config, {**empty_checkpoint(), "channel_values": values}, {}, {})
    with contextlib.closing(sqlite3.connect(db)) as raw:
        raw.execute("DELETE FROM acpkit_messages")
        raw.commit()
    async with _saver(db) as saver:
        with pytest.raises(LookupError, match="missing from acpkit_messages"):
            await saver.aget_tuple({"configurable": {"thread_id": "t"}})
