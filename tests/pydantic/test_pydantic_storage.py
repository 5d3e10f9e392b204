"""How a pydantic agent's sessions are stored: incremental history, a full disk, attachments, secrets."""

from __future__ import annotations

import base64
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import ImageContentBlock, UserMessageChunk
from acpkit_core.runner.types import HistoryLog, HttpMcpServer, StdioMcpServer
from acpkit_core.store import SqliteStore
from acpkit_core.testing import AcpTestClient
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import BinaryContent, ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.timeout(60)

seen_images: list[int] = []


def _prompts(messages: list[ModelMessage]) -> list[str]:
    out: list[str] = []
    for m in messages:
        if isinstance(m, ModelRequest):
            for p in m.parts:
                if isinstance(p, UserPromptPart):
                    content = p.content
                    if isinstance(content, str):
                        out.append(content)
                    else:
                        out.extend(c for c in content if isinstance(c, str))
                        seen_images.extend(len(c.data) for c in content if isinstance(c, BinaryContent))
    return out


async def recall(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    said = _prompts(messages)
    if said[-1] == "big":
        for _ in range(40):
            yield "x" * 10_000
        return
    yield f"turn {len(said)}: " + " | ".join(said)


def _agent(store: SqliteStore | str) -> object:
    return create_acp_agent(Agent(FunctionModel(stream_function=recall)), store=store, connect_mcp_servers=False)


async def test_a_turn_that_cannot_be_saved_is_reported_and_not_built_on(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = SqliteStore(path)
    async with AcpTestClient.connect(create_acp_agent(Agent(FunctionModel(stream_function=recall)), store=store)) as c:
        await c.initialize()
        sid = await c.new_session()
        assert (await c.prompt("alpha", session_id=sid)).text == "turn 1: alpha"
        pages = sqlite3.connect(path).execute("PRAGMA page_count").fetchone()[0]
        # A full disk: the store's connection may not grow the file beyond a few more pages.
        await store._call(lambda db: db.execute(f"PRAGMA max_page_count={pages + 3}"))  # pyright: ignore[reportPrivateUsage]
        with pytest.raises(RequestError) as failed:
            await c.prompt("big", session_id=sid)
        assert failed.value.code == -32603
        assert "The turn could not be saved (" in str(failed.value)
        assert "this turn is not part of its history" in str(failed.value)
        await store._call(lambda db: db.execute("PRAGMA max_page_count=1073741823"))  # pyright: ignore[reportPrivateUsage]
        # The next turn builds on what is stored: the unsaved turn is not in the model's history.
        assert (await c.prompt("gamma", session_id=sid)).text == "turn 2: alpha | gamma"
    async with AcpTestClient.connect(_agent(str(path))) as c:  # pyright: ignore[reportArgumentType]
        await c.initialize()
        await c.load_session(sid)
        assert (await c.prompt("delta", session_id=sid)).text == "turn 3: alpha | gamma | delta"


async def test_a_large_attachment_is_stored_as_a_note(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sqlite3")
    image = base64.b64encode(b"\x89PNG" + b"\x00" * 1_500_000).decode()
    seen_images.clear()
    async with AcpTestClient.connect(_agent(path)) as c:  # pyright: ignore[reportArgumentType]
        await c.initialize()
        sid = await c.new_session()
        block = ImageContentBlock(type="image", mime_type="image/png", data=image)
        await c.prompt("look", session_id=sid, attachments=[block])
        assert seen_images == [1_500_004]  # the model got the whole image
        await c.prompt("again", session_id=sid)
        assert seen_images == [1_500_004]  # later turns see a note in its place
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("s.sqlite3"))
    assert b"A" * 10_000 not in stored  # neither the transcript nor the model history keeps it
    async with AcpTestClient.connect(_agent(path)) as c:  # pyright: ignore[reportArgumentType]
        await c.initialize()
        _, replayed = await c.load_session(sid)
    chunks = [u.content for u in replayed if isinstance(u, UserMessageChunk)]
    assert [c.type for c in chunks] == ["text", "text"]  # the replay joins the note to the prompt text
    assert chunks[0].text == "look" + (
        f"[image (image/png) of {len(image):,} characters not stored: larger than the 1,000,000-character limit "
        "for stored attachments (max_stored_attachment)]"
    )


async def test_mcp_secrets_from_session_new_are_not_stored(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    servers = [
        StdioMcpServer(name="fs", command="/bin/true", env={"GITHUB_TOKEN": "ghp-secret-value-77"}),
        HttpMcpServer(name="web", url="https://mcp.example", headers={"Authorization": "Bearer tok-secret-88"}),
    ]
    async with AcpTestClient.connect(_agent(str(path))) as c:  # pyright: ignore[reportArgumentType]
        await c.initialize()
        sid = await c.new_session(mcp_servers=servers)
        await c.prompt("alpha", session_id=sid)
        data = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("s.sqlite3"))
    assert b"GITHUB_TOKEN" in data and b"/bin/true" in data
    assert b"ghp-secret-value-77" not in data and b"tok-secret-88" not in data


async def test_a_history_too_big_to_keep_is_read_back_at_each_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic_acp import _history as history

    monkeypatch.setattr(history, "KEPT_HISTORY_CHARS", 30)
    agent = create_acp_agent(Agent(FunctionModel(stream_function=recall)), store=str(tmp_path / "s.sqlite3"))

    def log() -> HistoryLog:
        live = agent.sessions.open_session(sid)
        assert live is not None
        return live.session.history

    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        assert (await c.prompt("alpha", session_id=sid)).text == "turn 1: alpha"
        assert log().memo is not None and not log().unloaded  # "alpha" and "turn 1: alpha" fit in 30
        # Over 30 characters: nothing is kept in memory, each turn starts from the history as stored.
        assert (await c.prompt("beta", session_id=sid)).text == "turn 2: alpha | beta"
        assert log().memo is None and log().unloaded
        assert (await c.prompt("gamma", session_id=sid)).text == "turn 3: alpha | beta | gamma"
        assert (await c.prompt("delta", session_id=sid)).text == "turn 4: alpha | beta | gamma | delta"
        assert log().memo is None


def _keep_last(messages: list[ModelMessage]) -> list[ModelMessage]:
    return messages[-1:]


async def test_a_turn_appends_what_it_added_and_a_rewritten_history_replaces_the_stored_one(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"

    def rows(sid: str) -> list[str]:
        with sqlite3.connect(path) as db:
            query = "SELECT item FROM history WHERE session_id = ? ORDER BY seq"
            return [item for (item,) in db.execute(query, (sid,))]

    def deleted(sid: str) -> list[int]:
        with sqlite3.connect(path) as db:
            return [seq for (seq,) in db.execute("SELECT seq FROM deleted WHERE session_id = ?", (sid,))]

    async with AcpTestClient.connect(_agent(str(path))) as c:  # pyright: ignore[reportArgumentType]
        await c.initialize()
        sid = await c.new_session()
        assert (await c.prompt("alpha", session_id=sid)).text == "turn 1: alpha"
        with sqlite3.connect(path) as db:  # from now on SQLite notes every history row deleted
            db.execute("CREATE TABLE deleted (session_id TEXT, seq INTEGER)")
            db.execute(
                "CREATE TRIGGER note_deleted AFTER DELETE ON history "
                "BEGIN INSERT INTO deleted VALUES (old.session_id, old.seq); END"
            )
        first = rows(sid)
        assert (await c.prompt("beta", session_id=sid)).text == "turn 2: alpha | beta"
        second = rows(sid)
    # The second turn appended its request and response; the first turn's rows were not written again.
    assert len(first) == 2 and second[:2] == first and len(second) == 4 and deleted(sid) == []
    assert '"beta"' in second[2] and '"turn 2: alpha | beta"' in second[3]

    # A history processor that keeps only the last message: the run's history is no longer the stored
    # one followed by new messages, so the stored history is replaced by what the run kept.
    trimmed = Agent(FunctionModel(stream_function=recall), capabilities=[ProcessHistory(_keep_last)])
    async with AcpTestClient.connect(create_acp_agent(trimmed, store=str(path)), unstable=["sessionCompaction"]) as c:
        await c.initialize()
        sid = await c.new_session()
        assert (await c.prompt("alpha", session_id=sid)).text == "turn 1: alpha"
        assert deleted(sid) == []
        assert (await c.prompt("beta", session_id=sid)).text == "turn 1: beta"
        after = rows(sid)
    assert sorted(deleted(sid)) == [0, 1]
    assert len(after) == 2 and '"beta"' in after[0] and '"turn 1: beta"' in after[1]
    assert not any("alpha" in item for item in after)
    # A new process continues from the replaced history.
    async with AcpTestClient.connect(_agent(str(path))) as c:  # pyright: ignore[reportArgumentType]
        await c.initialize()
        await c.load_session(sid)
        assert (await c.prompt("gamma", session_id=sid)).text == "turn 2: beta | gamma"
