"""The core server over an in-process connection: sessions, turns, errors, cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AvailableCommandsUpdate,
    RequestPermissionRequest,
    SessionInfoUpdate,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)
from acpkit_core.config import AgentOptions
from acpkit_core.errors import SessionNotFoundError
from acpkit_core.runner.capabilities import RunnerCapabilities
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import Session, StopReason
from acpkit_core.runner.unstable import UNSTABLE_SURFACES
from acpkit_core.server import AcpAgent
from acpkit_core.store import SqliteStore
from acpkit_core.testing import AcpTestClient, ScriptedRunner


def scripted(**options: object) -> AcpAgent:
    return AcpAgent(ScriptedRunner(), AgentOptions(store="memory", **options))  # type: ignore[arg-type]


# --- initialize -----------------------------------------------------------------------------------


REWIND_META = {"methods": ["acpkit/session/prompts", "acpkit/session/rewind"], "forkMeta": "acpkit.fork"}


class ImageRunner(ScriptedRunner):
    @property
    def capabilities(self) -> RunnerCapabilities:
        return RunnerCapabilities(image=True, audio=False, mcp_http=True)


async def test_initialize_advertises_exactly_what_works() -> None:
    agent = AcpAgent(ImageRunner(), AgentOptions(store="memory", name="n", title="T", version="9"))
    async with AcpTestClient.connect(agent) as c:
        init = await c.initialize()
        again = await c.initialize(protocol_version=99)
    wire = init.model_dump(by_alias=True, exclude_none=True)
    assert wire["protocolVersion"] == 1 and again.protocol_version == 1
    assert wire["agentInfo"] == {"name": "n", "title": "T", "version": "9"}
    caps = wire["agentCapabilities"]
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"] == {"image": True, "audio": False, "embeddedContext": True}
    assert caps["mcpCapabilities"] == {"http": True, "sse": False, "acp": False}
    assert caps["sessionCapabilities"] == {
        "list": {},
        "resume": {},
        "close": {},
        "delete": {},
        "additionalDirectories": {},
    }  # no `fork`: it exists only in the unstable schema (see the opt-in test below)
    assert caps["_meta"] == {"acpkit.rewind": REWIND_META}  # the memory store can rewind
    assert wire["authMethods"] == []
    assert agent.client.read_text_file and agent.client.terminal and not agent.client.boolean_config_options
    assert agent.client.unstable == frozenset()


@pytest.mark.parametrize("opt_in", [True, ["sessionFork", "notAThing"]])
async def test_a_client_that_opts_into_unstable_surfaces_is_told_which_it_gets(opt_in: bool | list[str]) -> None:
    agent = AcpAgent(ImageRunner(), AgentOptions(store="memory"))
    async with AcpTestClient.connect(agent, unstable=opt_in) as c:
        await c.initialize()
        sid = await c.new_session()
        forked = await c.fork_session(sid)
    answer = next(m for d, m in c.wire if d == "received" and m.get("id") == 0)
    caps = answer["result"]["agentCapabilities"]
    assert caps["sessionCapabilities"]["fork"] == {}
    agreed = {s.name: {} for s in UNSTABLE_SURFACES} if opt_in is True else {"sessionFork": {}}
    assert caps["_meta"] == {"acpkit.unstable": agreed, "acpkit.rewind": REWIND_META}
    assert agent.client.uses("sessionFork") and forked != sid


# --- session lifecycle ----------------------------------------------------------------------------


async def test_new_prompt_list_and_title() -> None:
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        sid = await c.new_session()
        assert isinstance(c.updates[sid][0], AvailableCommandsUpdate)
        r = await c.prompt("  Fix   the\nlogin bug please ", session_id=sid)
        assert r.text == "echo:   Fix   the\nlogin bug please "
        info = next(u for u in r.updates if isinstance(u, SessionInfoUpdate))
        assert info.title == "Fix the login bug please"
        r2 = await c.prompt("second", session_id=sid)
        assert not any(isinstance(u, SessionInfoUpdate) for u in r2.updates)
        listed = await c.list_sessions()
    (s,) = listed.sessions
    assert s.session_id == sid and s.title == "Fix the login bug please" and s.cwd == str(c.root)
    assert s.updated_at and s.updated_at.endswith("Z")


async def test_load_replays_whole_transcript_in_final_state() -> None:
    agent = scripted()
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt('think hmm\nsay one two\ntool read_file ok {"path": "a.txt"}\nplan x | y', session_id=sid)
        await c.prompt("say three", session_id=sid)
        _, replayed = await c.load_session(sid)
    kinds = [u.session_update for u in replayed]
    assert kinds == [
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "plan",
        "user_message_chunk",
        "agent_message_chunk",
        "available_commands_update",
    ]
    assert replayed[2].content.text == "one two"
    tool = replayed[3]
    assert isinstance(tool, ToolCallStart)
    assert tool.status == "completed" and tool.raw_output == {"output": "read_file done"} and tool.kind == "read"
    assert tool.locations and tool.locations[0].path == str(c.root / "a.txt")
    assert isinstance(replayed[4], AgentPlanUpdate) and [e.content for e in replayed[4].entries] == ["x", "y"]


async def test_resume_does_not_replay_and_fork_copies(tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite3")
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=store))) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("remember this", session_id=sid)
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=store))) as c:
        await c.initialize()
        await c.resume_session(sid)
        assert [u.session_update for u in c.updates[sid]] == ["available_commands_update"]
        r = await c.prompt("history", session_id=sid)
        assert r.text == "remember this"
        fork = await c.fork_session(sid)
        assert fork != sid
        r = await c.prompt("history", session_id=fork)
        assert r.text == "remember this | history"
        r = await c.prompt("history", session_id=sid)
        assert r.text == "remember this | history"
        _, replayed = await c.load_session(fork)
        listed = await c.list_sessions()
    users = [u.content.text for u in replayed if isinstance(u, UserMessageChunk)]
    assert users == ["remember this", "history", "history"]
    assert {s.session_id for s in listed.sessions} == {sid, fork}


async def test_list_cwd_filter_and_paging(tmp_path: Path) -> None:
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        a = [await c.new_session(cwd=tmp_path / "a") for _ in range(3)]
        await c.new_session(cwd=tmp_path / "b")
        only_a = await c.list_sessions(cwd=tmp_path / "a")
        none = await c.list_sessions(cwd=tmp_path / "zzz")
        with pytest.raises(RequestError) as info:
            await c.list_sessions(cursor="!!")
    assert sorted(s.session_id for s in only_a.sessions) == sorted(a)
    assert only_a.next_cursor is None
    assert none.sessions == []
    assert info.value.code == -32602


async def test_list_paging_over_the_wire() -> None:
    agent = scripted()
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        ids = {await c.new_session() for _ in range(55)}
        first = await c.list_sessions()
        assert first.next_cursor is not None
        second = await c.list_sessions(cursor=first.next_cursor)
    assert len(first.sessions) == 50 and len(second.sessions) == 5 and second.next_cursor is None
    assert {s.session_id for s in [*first.sessions, *second.sessions]} == ids


# --- errors ---------------------------------------------------------------------------------------


async def test_unknown_session_is_32002_with_the_id() -> None:
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        calls = [
            c.prompt("hi", session_id="ghost"),
            c.load_session("ghost"),
            c.resume_session("ghost"),
            c.fork_session("ghost"),
            c.close_session("ghost"),
            c.set_mode("ghost", "x"),
            c.set_config_option("ghost", "x", "y"),
        ]
        for call in calls:
            with pytest.raises(RequestError) as info:
                await call
            assert info.value.code == -32002
            assert "ghost" in str(info.value)
        await c.cancel("ghost")  # a notification: no error


async def test_relative_cwd_is_invalid_params() -> None:
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        with pytest.raises(RequestError) as info:
            await c.new_session(cwd="relative/dir")
    assert info.value.code == -32602


async def test_busy_session_refuses_a_second_prompt() -> None:
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        sid = await c.new_session()
        first = asyncio.ensure_future(c.prompt("sleep 0.3\nsay done", session_id=sid))
        await asyncio.sleep(0.05)
        with pytest.raises(RequestError) as info:
            await c.prompt("say again", session_id=sid)
        r = await first
    assert info.value.code == -32600
    assert "still running a turn" in str(info.value)
    assert r.text == "done" and r.stop_reason == "end_turn"


async def test_runner_exception_is_visible_logged_and_harmless(caplog: pytest.LogCaptureFixture) -> None:
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("say first", session_id=sid)
        seen = len(c.updates[sid])
        with caplog.at_level(logging.ERROR, logger="acpkit_core.server"), pytest.raises(RequestError) as failed:
            await c.prompt("say partial\ntool bash open\nfail disk on fire\nsecret", session_id=sid)
        during = c.updates[sid][seen:]
        after = await c.prompt("history", session_id=sid)
        _, replayed = await c.load_session(sid)
    # the answer is a JSON-RPC error with the one-line cause, so an editor can tell failure from success
    assert failed.value.code == -32603
    assert str(failed.value) == "The agent failed: RuntimeError: disk on fire"
    assert failed.value.data == {"sessionId": sid, "cause": "RuntimeError: disk on fire"}
    # sent before the answer: the partial text, and the tool call closed failed with the cause
    assert [u.content.text for u in during if isinstance(u, AgentMessageChunk)] == ["partial"]  # type: ignore[union-attr]
    closing = [u for u in during if isinstance(u, ToolCallProgress)]
    assert [(u.status, u.raw_output) for u in closing][-1][0] == "failed"
    assert "RuntimeError: disk on fire" in str(closing[-1].raw_output)
    assert sid in caplog.text and "RuntimeError" in caplog.text
    assert after.text == "say first"  # state from before the failed turn, no traceback in it
    # recorded: a reload shows the failed turn's prompt, its partial answer and its closed tool call
    user = [u.content.text for u in replayed if isinstance(u, UserMessageChunk)]  # type: ignore[union-attr]
    assert user == ["say first", "say partial\ntool bash open\nfail disk on fire\nsecret", "history"]
    assert [u.status for u in replayed if isinstance(u, ToolCallStart)] == ["failed"]


# --- turns: emitter guarantees ----------------------------------------------------------------------


class EmitterRunner:
    async def run_turn(self, turn: Turn) -> StopReason:
        await turn.emit.text("a")
        await turn.emit.text("b")
        turn.emit.new_message()
        await turn.emit.text("c")
        await turn.emit.tool_call("left-open", title="x")
        from acpkit_core.runner.types import PlanItem, TurnUsage

        plan = [PlanItem(content="p1"), PlanItem(content="p2", status="completed")]
        await turn.emit.plan(plan)
        await turn.emit.plan(plan)
        await turn.emit.plan([*plan, PlanItem(content="p3")])
        await turn.emit.usage(TurnUsage(input_tokens=10, output_tokens=2, context_size=1000))
        await turn.emit.usage(TurnUsage(input_tokens=20, output_tokens=3, thought_tokens=1))
        return "max_tokens"


async def test_emitter_message_ids_plans_usage_and_open_tool_calls() -> None:
    async with AcpTestClient.connect(AcpAgent(EmitterRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
    chunks = [u for u in r.updates if isinstance(u, AgentMessageChunk)]
    assert [u.content.text for u in chunks] == ["a", "b", "c"]
    assert chunks[0].message_id == chunks[1].message_id != chunks[2].message_id
    plans = [u for u in r.updates if isinstance(u, AgentPlanUpdate)]
    assert [len(p.entries) for p in plans] == [2, 3]
    (usage_update,) = [u for u in r.updates if isinstance(u, UsageUpdate)]
    assert (usage_update.used, usage_update.size) == (12, 1000)
    assert r.usage is not None
    assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.thought_tokens, r.usage.total_tokens) == (30, 5, 1, 36)
    assert r.stop_reason == "max_tokens"
    assert r.tool_calls["left-open"].statuses == ["pending", "failed"]


class BurstRunner:
    async def run_turn(self, turn: Turn) -> StopReason:
        for i in range(200):
            await turn.emit.text(f"{i},")
        await turn.emit.thought("t")
        await turn.emit.text("end")
        return "end_turn"


@pytest.mark.parametrize("coalesce_ms", [0, 50])
async def test_coalescing(coalesce_ms: float) -> None:
    agent = AcpAgent(BurstRunner(), AgentOptions(store="memory", coalesce_ms=coalesce_ms))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
    assert r.text == "".join(f"{i}," for i in range(200)) + "end"
    n = len([u for u in r.updates if isinstance(u, AgentMessageChunk)])
    if coalesce_ms:
        assert n < 20
        assert r.kinds.index("agent_thought_chunk") < len(r.kinds) - 1
    else:
        assert n == 201


# --- cancellation ----------------------------------------------------------------------------------


async def _wait_for(c: AcpTestClient, sid: str, kind: type) -> None:
    for _ in range(300):
        if any(isinstance(u, kind) for u in c.updates.get(sid, [])) or (
            kind is RequestPermissionRequest and c.permission_requests
        ):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"no {kind.__name__}")


async def test_cancel_during_tool_call_is_fast_and_closes_it() -> None:
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.ensure_future(c.prompt("say start\ntool bash open\nsleep 30", session_id=sid))
        await _wait_for(c, sid, ToolCallStart)
        t0 = time.monotonic()
        await c.cancel(sid)
        r = await task
        elapsed = time.monotonic() - t0
        _, replayed = await c.load_session(sid)
    assert r.stop_reason == "cancelled"
    assert elapsed < 0.3
    assert r.text == "start"
    (call,) = r.tool_calls.values()
    assert call.statuses == ["pending", "in_progress", "failed"]
    assert any(isinstance(u, ToolCallStart) and u.status == "failed" for u in replayed)


async def test_cancel_during_permission_request() -> None:
    never = asyncio.Event()

    async def hold(request: RequestPermissionRequest) -> str:
        await never.wait()
        return "allow_once"

    async with AcpTestClient.connect(scripted(), permission_answers=hold) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.ensure_future(c.prompt("ask delete_file", session_id=sid))
        await _wait_for(c, sid, RequestPermissionRequest)
        await c.cancel(sid)
        r = await asyncio.wait_for(task, 2)
    assert r.stop_reason == "cancelled"
    assert r.tool_calls[r.permission_requests[0].tool_call.tool_call_id].status == "failed"


class StubbornRunner:
    """Ignores cancellation flags and sleeps: the server must still end the turn."""

    async def run_turn(self, turn: Turn) -> StopReason:
        await turn.emit.text("working")
        await asyncio.sleep(30)
        return "end_turn"


async def test_close_session_cancels_the_running_turn() -> None:
    async with AcpTestClient.connect(AcpAgent(StubbornRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.ensure_future(c.prompt("go", session_id=sid))
        await _wait_for(c, sid, AgentMessageChunk)
        t0 = time.monotonic()
        await c.close_session(sid)
        r = await task
    assert r.stop_reason == "cancelled"
    assert time.monotonic() - t0 < 0.3


# --- permissions ------------------------------------------------------------------------------------


async def test_always_answers_are_remembered_and_persisted(tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite3")
    async with AcpTestClient.connect(
        AcpAgent(ScriptedRunner(), AgentOptions(store=store)), permission_answers=["allow_always", "reject_always"]
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        r1 = await c.prompt("ask delete_file", session_id=sid)
        r2 = await c.prompt("ask delete_file\nask rm_all", session_id=sid)
    assert len(r1.permission_requests) == 1 and len(r2.permission_requests) == 1
    assert [t.status for t in r2.tool_calls.values()] == ["completed", "failed"]
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=store))) as c:
        await c.initialize()
        await c.resume_session(sid)
        r3 = await c.prompt("ask delete_file\nask rm_all", session_id=sid)
    assert r3.permission_requests == []
    assert [t.status for t in r3.tool_calls.values()] == ["completed", "failed"]


# --- concurrency and hooks --------------------------------------------------------------------------


async def test_two_sessions_run_concurrently_on_one_connection() -> None:
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        a, b = await c.new_session(), await c.new_session()
        t0 = time.monotonic()
        ra, rb = await asyncio.gather(
            c.prompt("sleep 0.3\nsay from a", session_id=a), c.prompt("sleep 0.3\nsay from b", session_id=b)
        )
        elapsed = time.monotonic() - t0
    assert (ra.text, rb.text) == ("from a", "from b")
    assert elapsed < 0.55


async def test_fifty_sessions_at_once() -> None:
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        ids = await asyncio.gather(*(c.new_session() for _ in range(50)))
        results = await asyncio.gather(*(c.prompt(f"say n{i}", session_id=s) for i, s in enumerate(ids)))
        listed = await c.list_sessions()
    assert [r.text for r in results] == [f"n{i}" for i in range(50)]
    assert len(listed.sessions) == 50


class HookRunner(ScriptedRunner):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, str]] = []

    async def open_session(self, session: Session) -> None:
        self.events.append(("open", session.id))

    async def close_session(self, session: Session) -> None:
        self.events.append(("close", session.id))


async def test_session_hooks() -> None:
    runner = HookRunner()
    async with AcpTestClient.connect(AcpAgent(runner, AgentOptions(store="memory"))) as c:
        await c.initialize()
        a = await c.new_session()
        b = await c.new_session()
        await c.close_session(a)
        await c.load_session(a)
        f = await c.fork_session(b)
    assert runner.events[:5] == [("open", a), ("open", b), ("close", a), ("open", a), ("open", f)]
    assert sorted(runner.events[5:]) == sorted([("close", a), ("close", b), ("close", f)])


# --- session/delete (served although the SDK does not route it) ----------------------------


class Forgetful(HookRunner):
    """Also keeps data outside `session.state`, forgotten by `session/delete`."""

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
        await c.delete_session(drop)  # already gone: succeeds silently, as the spec asks
        await c.delete_session("no-such-session")
        with pytest.raises(RequestError) as load:
            await c.load_session(drop)
    caps = init.agent_capabilities
    assert caps is not None and caps.session_capabilities is not None
    assert caps.session_capabilities.delete is not None
    assert [s.session_id for s in listed.sessions] == [keep]
    assert load.value.code == -32002
    assert drop in str(load.value)
    # the second delete touched nothing: the runner was asked to forget the session once
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


async def test_deleting_a_session_mid_turn_cancels_the_turn_first() -> None:
    async with AcpTestClient.connect(AcpAgent(StubbornRunner(), AgentOptions(store="memory"))) as c:
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


async def test_host_reads_and_runs_through_the_client() -> None:
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        sid = await c.new_session()
        (c.root / "f.txt").write_text("file body")
        r = await c.prompt(f"read {c.root / 'f.txt'}", session_id=sid)
        w = await c.prompt(f"write {c.root / 'g.txt'} hello", session_id=sid)
        run = await c.prompt("run echo hi", session_id=sid)
        assert (c.root / "g.txt").read_text() == "hello"
    assert r.text == "file body"
    assert w.text.startswith("wrote")
    assert run.text == "exit 0: hi"
    assert [m for m, _ in c.requests] == [
        "fs/read_text_file",
        "fs/write_text_file",
        "terminal/create",
        "terminal/release",
    ]


async def test_additional_directories_widen_the_host_path_policy(tmp_path: Path) -> None:
    extra, outside = tmp_path / "extra", tmp_path / "outside"
    extra.mkdir()
    outside.mkdir()
    (extra / "in.txt").write_text("inside")
    (outside / "out.txt").write_text("secret")
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        sid = await c.new_session(additional_directories=[str(extra)])
        ok = await c.prompt(f"read {extra / 'in.txt'}", session_id=sid)
        with pytest.raises(RequestError) as refused:
            await c.prompt(f"read {outside / 'out.txt'}", session_id=sid)
    assert ok.text == "inside"
    assert str(refused.value).startswith("The agent failed: PathPolicyError")
    assert "secret" not in str(refused.value)


class McpEcho:
    async def run_turn(self, turn: Turn) -> StopReason:
        await turn.emit.text(repr(turn.session.mcp_servers))
        return "end_turn"


async def test_client_mcp_servers_reach_the_session_typed() -> None:
    from acpkit_core.runner.types import HttpMcpServer, SseMcpServer, StdioMcpServer

    servers = (
        StdioMcpServer(name="fs", command="/usr/bin/fs", args=("-x",), env={"K": "v"}),
        HttpMcpServer(name="web", url="https://mcp.example/http", headers={"Auth": "t"}),
        SseMcpServer(name="events", url="https://mcp.example/sse"),
    )
    async with AcpTestClient.connect(AcpAgent(McpEcho(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session(mcp_servers=servers)
        r = await c.prompt("which?", session_id=sid)
    assert r.text == repr(servers)


async def test_a_failed_turn_s_cause_keeps_a_provider_s_whole_advice() -> None:
    """pydantic-ai's missing-key message (one line, about 300 characters) reaches the client whole, advice
    included; past 1000 characters a first line is cut."""
    advice = (
        "Set the `OPENAI_API_KEY` environment variable or pass it via `OpenAIProvider(api_key=...)` to use the "
        "OpenAI provider. To try Pydantic AI without an API key, use the built-in test model: `Agent('test')`. "
        "See https://pydantic.dev/docs/ai/guides/testing/"
    )
    async with AcpTestClient.connect(scripted()) as c:
        await c.initialize()
        sid = await c.new_session()
        with pytest.raises(RequestError) as failed:
            await c.prompt(f"fail {advice}", session_id=sid)
        with pytest.raises(RequestError) as huge:
            await c.prompt(f"fail {'x' * 5000}", session_id=sid)
    assert str(failed.value) == f"The agent failed: RuntimeError: {advice}"
    cause = huge.value.data["cause"]  # pyright: ignore[reportOptionalSubscript, reportIndexIssue]
    assert len(cause) == len("RuntimeError: ") + 1000 and cause.endswith("…")
