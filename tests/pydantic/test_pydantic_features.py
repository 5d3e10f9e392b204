"""Modes, models, commands, client tools and client MCP servers through a real ACP connection."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest
from acp.schema import AgentPlanUpdate, FileEditToolCallContent, McpServerStdio, TerminalToolCallContent
from acpkit_core.permissions import STANDARD_MODES, Mode
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import Session
from acpkit_core.testing import AcpTestClient
from pyd_script import Script, call
from pydantic_acp import PLAN_TOOL_NAME, create_acp_agent
from pydantic_acp._modes import PLANNING_INSTRUCTIONS
from pydantic_ai import Agent, RunContext

pytestmark = pytest.mark.timeout(60)


def project_agent(script: Script, ran: list[str]) -> Agent[None, str]:
    agent = Agent(script.model)

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file."""
        ran.append(f"read {path}")
        return "text"

    @agent.tool_plain
    def grep_files(pattern: str) -> str:
        """Search the files."""
        return "no match"

    @agent.tool_plain
    def edit_file(path: str, text: str) -> str:
        """Edit a file."""
        ran.append(f"edit {path}")
        return "edited"

    @agent.tool_plain
    def run_shell(command: str) -> str:
        """Run a shell command."""
        ran.append(f"run {command}")
        return "ok"

    return agent


def offered(script: Script, index: int = -1) -> list[str]:
    return sorted(t.name for t in script.infos[index].function_tools)


async def test_readonly_mode_hides_tools_that_change_things() -> None:
    script = Script([["looked"], ["agentic"]])
    acp_agent = create_acp_agent(
        project_agent(script, []), store="memory", modes=STANDARD_MODES, default_mode="readonly"
    )
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("look", session_id=sid)
        await c.set_mode(sid, "agentic")
        await c.prompt("do", session_id=sid)
    assert offered(script, 0) == ["grep_files", "read_file"]
    assert offered(script, 1) == ["edit_file", "grep_files", "read_file", "run_shell"]


async def test_interactive_mode_asks_before_edit_and_execute_only() -> None:
    ran: list[str] = []
    script = Script(
        [
            [
                call("read_file", '{"path": "a.py"}', id="r", index=1),
                call("edit_file", '{"path": "a.py", "text": "x"}', id="e", index=2),
                call("run_shell", '{"command": "make"}', id="x", index=3),
            ],
            ["done"],
        ]
    )
    acp_agent = create_acp_agent(
        project_agent(script, ran), store="memory", modes=STANDARD_MODES, default_mode="interactive"
    )
    async with AcpTestClient.connect(acp_agent, permission_answers=["allow_once", "reject_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("change", session_id=sid)
    assert [p.tool_call.tool_call_id for p in r.permission_requests] == ["e", "x"]
    assert sorted(ran) == ["edit a.py", "read a.py"]
    assert {k: v.status for k, v in r.tool_calls.items()} == {"r": "completed", "e": "completed", "x": "failed"}


async def test_planning_mode_projects_the_plan_tool_and_hides_mutating_tools() -> None:
    steps = json.dumps(
        {"steps": [{"content": "Read the code", "status": "completed"}, {"content": "Fix the bug", "priority": "high"}]}
    )
    script = Script([[call(PLAN_TOOL_NAME, steps, id="p1")], ["Here is the plan."]])
    acp_agent = create_acp_agent(
        project_agent(script, []), store="memory", modes=STANDARD_MODES, default_mode="planning"
    )
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("plan it", session_id=sid)
    assert offered(script, 0) == ["grep_files", "read_file", PLAN_TOOL_NAME, "update_plan_step"]
    assert PLANNING_INSTRUCTIONS in (script.infos[0].instructions or "")
    plans = [u for u in r.updates if isinstance(u, AgentPlanUpdate)]
    assert [[(e.content, e.status, e.priority) for e in p.entries] for p in plans] == [
        [("Read the code", "completed", "medium"), ("Fix the bug", "pending", "high")]
    ]
    assert r.tool_calls == {}  # the plan tool is shown as a plan, not as a tool call
    assert r.text == "Here is the plan."


async def test_custom_mode() -> None:
    script = Script([["ok"]])
    search_only = Mode(id="search", name="Search only", allowed_kinds=frozenset({"search"}))
    acp_agent = create_acp_agent(project_agent(script, []), store="memory", modes=[search_only])
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("find", session_id=sid)
    assert offered(script) == ["grep_files"]


async def test_model_switching_changes_the_model_for_the_session_only() -> None:
    fast, smart = Script([["fast 1"], ["fast 2"]], name="fast"), Script([["smart 1"]], name="smart")
    acp_agent = create_acp_agent(Agent(fast.model), store="memory", models=[fast.model, smart.model])
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        s1 = await c.new_session()
        s2 = await c.new_session()
        options = await c.set_config_option(s1, "model", "function:smart")
        model_option = next(o for o in options.config_options if o.id == "model")
        assert model_option.current_value == "function:smart"
        r1 = await c.prompt("hi", session_id=s1)
        r2 = await c.prompt("hi", session_id=s2)
    assert (r1.text, r2.text) == ("smart 1", "fast 1")


async def test_tools_command_lists_the_agent_tools() -> None:
    script = Script([])
    acp_agent = create_acp_agent(project_agent(script, []), store="memory", tool_kinds={"run_shell": "other"})
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("/tools", session_id=sid)
    assert "- `read_file` (read) — allowed — Read a file." in r.text.splitlines()
    assert "- `run_shell` (other) — allowed — Run a shell command." in r.text.splitlines()  # the developer's kind
    assert script.requests == []  # listing tools never calls the model


async def test_client_tools_read_write_and_run_through_the_client() -> None:
    script = Script(
        [
            [call("read_file", '{"path": "notes.txt"}', id="r1")],
            [call("write_file", '{"path": "notes.txt", "content": "new text\\n"}', id="w1")],
            [call("run_command", '{"command": "cat", "args": ["notes.txt"]}', id="x1")],
            ["all done"],
        ]
    )
    acp_agent = create_acp_agent(Agent(script.model), store="memory", client_tools=True)
    async with AcpTestClient.connect(acp_agent) as c:
        (c.root / "notes.txt").write_text("old text\n")
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("edit notes", session_id=sid)
        assert (c.root / "notes.txt").read_text() == "new text\n"
        root = c.root
    assert offered(script, 0) == ["read_file", "run_command", "write_file"]
    returns = {p.tool_call_id: p for p in script.tool_returns()}
    assert returns["r1"].content == "old text\n"
    read, write, run = r.tool_calls["r1"], r.tool_calls["w1"], r.tool_calls["x1"]
    assert (read.kind, write.kind, run.kind) == ("read", "edit", "execute")
    diff = next(c for c in write.content if isinstance(c, FileEditToolCallContent))
    assert (diff.path, diff.old_text, diff.new_text) == (str(root / "notes.txt"), "old text\n", "new text\n")
    assert write.status == "completed"
    assert any(isinstance(c, TerminalToolCallContent) for c in run.content)
    assert "exit code 0" in str(returns["x1"].content) and "new text" in str(returns["x1"].content)


async def test_writing_a_new_file_reads_nothing_first(caplog: pytest.LogCaptureFixture) -> None:
    script = Script(
        [
            [call("write_file", '{"path": "fresh.txt", "content": "first words\\n"}', id="w1")],
            [call("save_file", '{"path": "other.txt", "text": "more\\n"}', id="s1")],
            ["done"],
        ]
    )
    agent = Agent(script.model)

    @agent.tool_plain
    def save_file(path: str, text: str) -> str:
        """Write a file on disk."""
        Path(root, path).write_text(text)
        return "saved"

    acp_agent = create_acp_agent(agent, store="memory", client_tools=True, tool_kinds={"save_file": "edit"})
    async with AcpTestClient.connect(acp_agent) as c:
        root = c.root
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("write two new files", session_id=sid)
        requests = [method for method, _ in c.requests]
    assert r.stop_reason == "end_turn"
    assert "fs/read_text_file" not in requests  # nothing the client would show as a failed read
    assert requests == ["fs/write_text_file"]
    for call_id, name, text in (("w1", "fresh.txt", "first words\n"), ("s1", "other.txt", "more\n")):
        tool_call = r.tool_calls[call_id]
        diff = next(x for x in tool_call.content if isinstance(x, FileEditToolCallContent))
        assert (tool_call.status, diff.path, diff.old_text, diff.new_text) == (
            "completed",
            str(root / name),
            None,
            text,
        )
    assert [rec.getMessage() for rec in caplog.records if rec.levelno >= logging.WARNING] == []


async def test_client_tools_refuse_paths_outside_the_project() -> None:
    script = Script([[call("read_file", '{"path": "/etc/hostname"}', id="r1")], ["refused"]])
    acp_agent = create_acp_agent(Agent(script.model), store="memory", client_tools=True)
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("read", session_id=sid)
    assert r.tool_calls["r1"].status == "failed"
    returned = script.tool_returns()[0]
    assert returned.outcome == "failed" and "outside" in str(returned.content)


async def test_client_tools_follow_what_the_client_advertised() -> None:
    script = Script([["ok"]])
    acp_agent = create_acp_agent(Agent(script.model), store="memory", client_tools=True)
    async with AcpTestClient.connect(acp_agent, fs=False, terminal=True) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("hi", session_id=sid)
    assert offered(script) == ["run_command"]


async def test_client_mcp_server_tools_are_offered_and_called() -> None:
    script = Script([[call("lookup_word", '{"word": "ketchup"}', id="m1")], ["found it"]])
    acp_agent = create_acp_agent(Agent(script.model), store="memory")
    server = McpServerStdio(
        name="notes", command=sys.executable, args=[str(Path(__file__).with_name("pyd_mcp_server.py"))], env=[]
    )
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session(mcp_servers=[server])
        r = await c.prompt("look up", session_id=sid)
        listed = await c.prompt("/tools", session_id=sid)
        await c.close_session(sid)
    assert "lookup_word" in offered(script, 0)
    tc = r.tool_calls["m1"]
    assert tc.statuses == ["pending", "in_progress", "completed"]
    assert "ketchup: a word the MCP server knows" in str(script.tool_returns()[0].content)
    assert "`lookup_word`" in listed.text


async def test_agent_factory_builds_the_agent_per_session_with_deps() -> None:

    scripts: dict[str, Script] = {}
    made: list[str] = []

    def agent_for(session: Session) -> Agent[str, str]:
        made.append(session.cwd)
        script = scripts.setdefault(session.id, Script([[call("whoami", id="w")], ["ok"]] * 2))
        agent = Agent(script.model, deps_type=str, instructions=f"Work in {session.cwd}.")

        @agent.tool
        def whoami(ctx: RunContext[str]) -> str:
            return ctx.deps

        return agent

    def deps_for(turn: Turn) -> str:
        return f"user of {turn.session.id}"

    acp_agent = create_acp_agent(agent_factory=agent_for, deps_factory=deps_for, store="memory")
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sub = c.root / "sub"
        sub.mkdir()
        sid = await c.new_session(cwd=sub)
        await c.prompt("who?", session_id=sid)
    script = scripts[sid]
    assert f"Work in {sub}." in (script.infos[0].instructions or "")
    assert script.tool_returns()[0].content == f"user of {sid}"
    assert str(sub) in made


async def test_an_edit_tool_of_the_agent_gets_a_diff_of_its_file() -> None:
    script = Script([[call("edit_file", '{"path": "app.py", "text": "print(2)\\n"}', id="e1")], ["edited"]])
    agent = Agent(script.model)
    root: list[Path] = []

    @agent.tool_plain
    def edit_file(path: str, text: str) -> str:
        """Replace a file's text."""
        (root[0] / path).write_text(text)
        return "edited"

    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        root.append(c.root)
        (c.root / "app.py").write_text("print(1)\n")
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("edit", session_id=sid)
    tc = r.tool_calls["e1"]
    assert tc.kind == "edit" and tc.status == "completed"
    diff = next(x for x in tc.content if isinstance(x, FileEditToolCallContent))
    assert (diff.path, diff.old_text, diff.new_text) == (str(root[0] / "app.py"), "print(1)\n", "print(2)\n")


@pytest.mark.parametrize(("transport", "path"), [("http", "/mcp"), ("sse", "/sse")])
async def test_client_mcp_server_over_http_and_sse(transport: str, path: str) -> None:
    import asyncio
    import socket

    from acp.schema import HttpHeader, HttpMcpServer, SseMcpServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(Path(__file__).with_name("pyd_mcp_server.py")),
        transport,
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        for _ in range(600):  # up to a minute: a loaded machine starts Python slowly
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.1)
        url = f"http://127.0.0.1:{port}{path}"
        headers = [HttpHeader(name="x-test", value="1")]
        server = (
            HttpMcpServer(type="http", name="notes", url=url, headers=headers)
            if transport == "http"
            else SseMcpServer(type="sse", name="notes", url=url, headers=headers)
        )
        script = Script([[call("lookup_word", '{"word": "pickle"}', id="m1")], ["found"]])
        async with AcpTestClient.connect(create_acp_agent(Agent(script.model), store="memory")) as c:
            init = await c.initialize()
            assert init.agent_capabilities is not None and init.agent_capabilities.mcp_capabilities is not None
            sid = await c.new_session(mcp_servers=[server])
            r = await c.prompt("look up", session_id=sid)
            await c.close_session(sid)
        assert r.tool_calls["m1"].status == "completed", script.tool_returns()
        assert "pickle: a word the MCP server knows" in str(script.tool_returns()[0].content)
    finally:
        process.terminate()
        await process.wait()


async def test_model_and_clear_commands() -> None:
    fast, smart = Script([["fast 1"]], name="fast"), Script([["smart 1"], ["smart 2"]], name="smart")
    acp_agent = create_acp_agent(Agent(fast.model), store="memory", models=[fast.model, smart.model])
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("one", session_id=sid)
        switched = await c.prompt("/model function:smart", session_id=sid)
        await c.prompt("two", session_id=sid)
        await c.prompt("/clear", session_id=sid)
        await c.prompt("three", session_id=sid)
    assert "function:smart" in switched.text
    assert [p.content for p in smart.user_prompts(0)] == ["one", "two"]  # the history moved to the new model
    assert [p.content for p in smart.user_prompts(1)] == ["three"]  # /clear forgot it
