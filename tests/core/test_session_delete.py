"""`session/delete`: served although the SDK does not route it, and it forgets everything."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import AgentMessageChunk
from acpkit_core.config import AgentOptions
from acpkit_core.errors import SessionNotFoundError
from acpkit_core.runner import Session, StopReason, Turn
from acpkit_core.server import AcpAgent
from acpkit_core.store import SqliteStore
from acpkit_core.testing import AcpTestClient, ScriptedRunner


class Forgetful(ScriptedRunner):
    """A scripted runner with per-session resources outside `session.state`."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, str]] = []

    async def open_session(self, session: Session) -> None:
        self.events.append(("open", session.id))

    async def close_session(self, session: Session) -> None:
        self.events.append(("close", session.id))

    async def delete_session(self, session: Session) -> None:
        self.events.append(("delete", session.id))


async def test_delete_forgets_the_session_state_and_transcript(tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite3")
    runner = Forgetful()
    async with AcpTestClient.connect(AcpAgent(runner, AgentOptions(store=store))) as c:
        init = await c.initialize()
        keep = await c.new_session()
        drop = await c.new_session()
        await c.prompt("say hello", session_id=drop)
        await c.delete_session(drop)
        listed = await c.list_sessions()
        with pytest.raises(RequestError) as again:
            await c.delete_session(drop)
        with pytest.raises(RequestError) as load:
            await c.load_session(drop)
    caps = init.agent_capabilities
    assert caps is not None and caps.session_capabilities is not None
    assert caps.session_capabilities.delete is not None
    assert [s.session_id for s in listed.sessions] == [keep]
    assert again.value.code == load.value.code == -32002
    assert drop in str(again.value)
    assert [e for e in runner.events if e[1] == drop] == [("open", drop), ("close", drop), ("delete", drop)]
    reopened = SqliteStore(tmp_path / "s.sqlite3")
    try:
        assert [s.id for s in (await reopened.list()).sessions] == [keep]
        with pytest.raises(SessionNotFoundError):
            await reopened.transcript(drop)
    finally:
        await reopened.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "s.sqlite3")) as db:  # nothing of it is left in the file
        rows = db.execute("SELECT COUNT(*) FROM transcript WHERE session_id = ?", (drop,)).fetchone()[0]
    assert rows == 0


class Endless:
    async def run_turn(self, turn: Turn) -> StopReason:
        await turn.emit.text("working")
        await asyncio.sleep(30)
        return "end_turn"


async def test_deleting_a_session_mid_turn_cancels_the_turn_first() -> None:
    async with AcpTestClient.connect(AcpAgent(Endless(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        turn = asyncio.ensure_future(c.prompt("go", session_id=sid))
        while not any(isinstance(u, AgentMessageChunk) for u in c.updates.get(sid, [])):
            await asyncio.sleep(0.01)
        await c.delete_session(sid)
        r = await turn
        listed = await c.list_sessions()
    assert r.stop_reason == "cancelled"
    assert listed.sessions == []
