"""Memory across turns and restarts, golden prompts, client MCP servers, stdio."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import image_block, text_block
from acp.schema import ImageContentBlock, TextContentBlock
from acpkit_core.prompt import parse_prompt
from acpkit_core.runner.types import StdioMcpServer
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import SessionContext, create_acp_agent, render_prompt
from langchain_acp._checkpoint import CHECKPOINT_FILE
from langchain_core.messages import HumanMessage, ToolMessage
from lc_agent_script import recall
from lc_helpers import Call, FakeChatModel, Reply, message_content

pytestmark = pytest.mark.timeout(60)

HERE = Path(__file__).parent
REFERENCES = HERE.parents[1] / "references" / "prompts"
CASES = [p for p in sorted(REFERENCES.glob("*.json")) if "error" not in json.loads(p.read_text(encoding="utf-8"))]


def memory_graph() -> Any:
    return create_agent(FakeChatModel(script=[recall], repeat_last=True), tools=[])


async def test_conversation_survives_three_turns_and_a_restart(tmp_path: Path) -> None:
    store = str(tmp_path / "sessions.sqlite3")
    graph = memory_graph()
    async with AcpTestClient.connect(create_acp_agent(graph, store=store)) as c:
        await c.initialize()
        sid = await c.new_session()
        for word in ("one", "two", "three"):
            r = await c.prompt(word, session_id=sid)
        assert r.text == "turn 3: one | two | three"
    assert (tmp_path / CHECKPOINT_FILE).exists()
    assert graph.checkpointer is None  # the user's graph was not touched
    async with AcpTestClient.connect(create_acp_agent(memory_graph(), store=store)) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        assert any(u.session_update == "agent_message_chunk" for u in replayed)
        r = await c.prompt("four", session_id=sid)
    assert r.text == "turn 4: one | two | three | four"


async def test_restart_of_a_real_agent_process(tmp_path: Path) -> None:
    script = str(HERE / "lc_agent_script.py")
    async with AcpTestClient.spawn(sys.executable, script) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("alpha", session_id=sid)
        r = await c.prompt("beta", session_id=sid)
        assert r.text == "turn 2: alpha | beta"
    async with AcpTestClient.spawn(sys.executable, script) as c:
        await c.initialize()
        await c.resume_session(sid)
        r = await c.prompt("gamma", session_id=sid)
    assert r.text == "turn 3: alpha | beta | gamma"


async def test_graph_own_checkpointer_is_used() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    graph = create_agent(FakeChatModel(script=[recall], repeat_last=True), tools=[], checkpointer=saver)
    async with AcpTestClient.connect(create_acp_agent(graph, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("x", session_id=sid)
    assert saver.get({"configurable": {"thread_id": sid}}) is not None


def test_there_are_golden_prompts() -> None:
    assert len(CASES) >= 40


async def test_every_golden_prompt_reaches_the_model_as_rendered() -> None:
    model = FakeChatModel(script=[Reply(text="ok")], repeat_last=True)
    agent = create_acp_agent(create_agent(model, tools=[]), store="memory")
    mismatched: list[str] = []
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        for path in CASES:
            case = json.loads(path.read_text(encoding="utf-8"))
            expected = case["langchain"]
            cwd = case.get("root_dir") or c.root
            if not Path(cwd).is_absolute():  # a Windows cwd is not a path on this machine: render with ours
                cwd = c.root
                expected = render_prompt(parse_prompt(case["prompt"]), root_dir=cwd)
            expected = message_content(case["prompt"], expected)
            sid = await c.new_session(cwd=cwd)
            calls = len(model.seen)
            r = await c.prompt(case["prompt"], session_id=sid)
            assert r.stop_reason == "end_turn", path.name
            if len(model.seen) == calls:  # a slash command served by the server
                continue
            last = model.seen[-1][-1]
            assert isinstance(last, HumanMessage)
            if last.content != expected:
                mismatched.append(path.name)
    assert mismatched == []


def test_render_matches_the_references() -> None:
    from acpkit_core.prompt.parse import parse_prompt

    case = json.loads((REFERENCES / "audio-mp3.json").read_text(encoding="utf-8"))
    assert render_prompt(parse_prompt(case["prompt"])) == case["langchain"]


async def test_client_stdio_mcp_server_tools_reach_the_graph() -> None:
    models: list[FakeChatModel] = []

    def factory(ctx: SessionContext) -> Any:
        model = FakeChatModel(script=[Reply(calls=[Call("shout", {"text": "hi"}, "m1")]), Reply(text="done")])
        models.append(model)
        return create_agent(model, tools=list(ctx.mcp_tools))

    server = StdioMcpServer(name="notes", command=sys.executable, args=(str(HERE / "lc_mcp_server.py"),))
    agent = create_acp_agent(graph_factory=factory, store="memory")
    async with AcpTestClient.connect(agent) as c:
        init = await c.initialize()
        sid = await c.new_session(mcp_servers=[server])
        r = await c.prompt("shout", session_id=sid)
    assert init.agent_capabilities is not None
    mcp = init.agent_capabilities.mcp_capabilities
    assert mcp is not None and mcp.http and mcp.sse
    assert models[0].bound_tools[0] == ["shout"]
    assert r.tool_calls["m1"].status == "completed"
    results = [m for m in models[0].seen[1] if isinstance(m, ToolMessage)]
    assert "HI!" in str(results[0].content)


async def test_static_graph_does_not_advertise_mcp_http() -> None:
    agent = create_acp_agent(memory_graph(), store="memory")
    async with AcpTestClient.connect(agent) as c:
        init = await c.initialize()
    mcp = init.agent_capabilities.mcp_capabilities if init.agent_capabilities else None
    assert mcp is None or not (mcp.http or mcp.sse)


async def test_deleting_a_session_deletes_its_checkpoints(tmp_path: Path) -> None:
    store = str(tmp_path / "sessions.sqlite3")

    def rows(thread_id: str) -> int:
        with contextlib.closing(sqlite3.connect(tmp_path / CHECKPOINT_FILE)) as db:
            return int(db.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", (thread_id,)).fetchone()[0])

    async with AcpTestClient.connect(create_acp_agent(memory_graph(), store=store)) as c:
        await c.initialize()
        keep = await c.new_session()
        drop = await c.new_session()
        for sid in (keep, drop):
            await c.prompt("one", session_id=sid)
            await c.prompt("two", session_id=sid)
        assert rows(drop) > 0 and rows(keep) > 0
        await c.delete_session(drop)
        assert rows(drop) == 0 and rows(keep) > 0
        r = await c.prompt("three", session_id=keep)
    assert r.text == "turn 3: one | two | three"
    async with AcpTestClient.connect(create_acp_agent(memory_graph(), store=store)) as c:
        await c.initialize()
        assert [s.session_id for s in (await c.list_sessions()).sessions] == [keep]


async def test_a_one_text_prompt_reaches_the_model_as_a_str_and_load_replays_every_prompt_as_sent(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "sessions.sqlite3")
    png = "iVBORw0KGgo="
    prompts: list[list[TextContentBlock | ImageContentBlock]] = [
        [text_block("just text")],
        [text_block("look"), image_block(png, "image/png")],
        [text_block(""), text_block("after an empty block")],
        [text_block("one"), text_block("two")],
    ]
    first = FakeChatModel(script=[Reply(text="ok")], repeat_last=True)
    async with AcpTestClient.connect(create_acp_agent(create_agent(first, tools=[]), store=store)) as c:
        await c.initialize()
        sid = await c.new_session()
        for blocks in prompts:
            assert (await c.prompt(blocks, session_id=sid)).stop_reason == "end_turn"
    # a new process on the same store: the history read back from SQLite keeps each form
    second = FakeChatModel(script=[Reply(text="ok")], repeat_last=True)
    async with AcpTestClient.connect(create_acp_agent(create_agent(second, tools=[]), store=store)) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
        await c.prompt("again", session_id=sid)
    said = [
        u.content.model_dump(by_alias=True, exclude_none=True)
        for u in replayed
        if u.session_update == "user_message_chunk"
    ]
    # the replay is the transcript's, whatever the graph got (as before: the empty block left out,
    # a prompt's adjacent text chunks coalesced)
    assert said == [
        {"type": "text", "text": "just text"},
        {"type": "text", "text": "look"},
        {"type": "image", "mimeType": "image/png", "data": png},
        {"type": "text", "text": "after an empty block"},
        {"type": "text", "text": "onetwo"},
    ]
    # what the graph's model received as the turn's own message
    assert [call[-1].content for call in first.seen] == [
        "just text",
        [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}}],
        "after an empty block",
        [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],  # text blocks are never joined
    ]
    humans = [m.content for m in second.seen[-1] if isinstance(m, HumanMessage)]
    assert humans == [call[-1].content for call in first.seen] + ["again"]
