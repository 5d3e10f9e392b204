"""The `tool_presentation` option: the same tools, presented the same way, on both adapters.

Each adapter gets a real agent (a pydantic-ai `FunctionModel`, a LangGraph `create_agent` graph with
the scripted fake chat model) calling the same five tools with the same arguments; the test asserts
the exact `tool_call` and final `tool_call_update` the client sees.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import langchain_acp
import pydantic_acp
import pytest
from acp.helpers import text_block, tool_content
from acp.schema import FileEditToolCallContent, ResourceContentBlock, ToolCallProgress, ToolCallStart
from acpkit_core import AcpAgent
from acpkit_core.errors import UserError
from acpkit_core.permissions import STANDARD_MODES, PermissionPolicy
from acpkit_core.runner.tool_presentation import ToolCallView, ToolPresentation
from acpkit_core.runner.tool_presets import TOOL_PRESETS
from acpkit_core.testing import AcpTestClient
from acpkit_core.testing.results import ToolCallState, fold_tool_calls
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
from fake_model import Call, FakeChatModel, Reply

CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("e1", "edit_file", {"path": "app.py", "old_string": "return 1", "new_string": "return 2"}),
    ("b1", "bash", {"command": "echo hello"}),
    ("w1", "web_search", {"query": "agent client protocol"}),
    ("s1", "run_sql", {"table": "users", "sql": "select count(*) from users"}),
    ("r1", "lookup", {"key": "k"}),
]
RESULTS = {"results": [{"title": "ACP", "url": "https://agentclientprotocol.com", "snippet": "The protocol."}]}


def _sql_output(call: ToolCallView, output: Any) -> list[Any]:
    return [tool_content(text_block(f"{call.args['table']}: {output}"))]


PRESENTATION = {
    **TOOL_PRESETS,
    "run_*": ToolPresentation(kind="read", title="Query {table}", output=_sql_output),
    "lookup": ToolPresentation(title="Look up {missing}", output="none"),
}


def _edit(cwd: str, path: str, old_string: str, new_string: str) -> str:
    file = Path(cwd) / path
    file.write_text(file.read_text().replace(old_string, new_string))
    return "edited"


# --- the same tools on both adapters ---------------------------------------------------------------


def _pydantic_agent(cwd: str, **options: Any) -> AcpAgent:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[dict[int, DeltaToolCall] | str]:
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
            yield "done"
            return
        for index, (call_id, name, args) in enumerate(CALLS):
            yield {index: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=call_id)}

    agent = Agent(FunctionModel(stream_function=stream))

    @agent.tool_plain
    def edit_file(path: str, old_string: str, new_string: str) -> str:
        """Replace text in a file."""
        return _edit(cwd, path, old_string, new_string)

    @agent.tool_plain
    def bash(command: str) -> str:
        """Run a shell command."""
        return "hello\n"

    @agent.tool_plain
    def web_search(query: str) -> dict[str, Any]:
        """Search the web."""
        return RESULTS

    @agent.tool_plain
    def run_sql(table: str, sql: str) -> int:
        """Run a query."""
        return 42

    @agent.tool_plain
    def lookup(key: str) -> str:
        """Look a key up."""
        return "value"

    return pydantic_acp.create_acp_agent(agent, store="memory", **options)


def _langchain_agent(cwd: str, **options: Any) -> AcpAgent:
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    @tool
    def edit_file(path: str, old_string: str, new_string: str) -> str:
        """Replace text in a file."""
        return _edit(cwd, path, old_string, new_string)

    @tool
    def bash(command: str) -> str:
        """Run a shell command."""
        return "hello\n"

    @tool
    def web_search(query: str) -> dict[str, Any]:
        """Search the web."""
        return RESULTS

    @tool
    def run_sql(table: str, sql: str) -> int:
        """Run a query."""
        return 42

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return "value"

    script = [Reply(calls=[Call(name, args, call_id) for call_id, name, args in CALLS]), Reply(text="done")]
    graph = create_agent(FakeChatModel(script=script), tools=[edit_file, bash, web_search, run_sql, lookup])
    return langchain_acp.create_acp_agent(graph, store="memory", **options)


ADAPTERS: dict[str, Callable[..., AcpAgent]] = {"pydantic": _pydantic_agent, "langchain": _langchain_agent}


def _pending(updates: list[Any], call_id: str) -> ToolCallState:
    """The call as the client holds it when it starts running (a permission question would show this)."""
    mine = [u for u in updates if isinstance(u, ToolCallStart | ToolCallProgress) and u.tool_call_id == call_id]
    running = next(i for i, u in enumerate(mine) if u.status == "in_progress")
    return fold_tool_calls(mine[:running])[call_id]


def _final(updates: list[Any], call_id: str) -> ToolCallProgress:
    return next(
        u
        for u in updates
        if isinstance(u, ToolCallProgress) and u.tool_call_id == call_id and u.status in ("completed", "failed")
    )


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
async def test_presented_tool_calls_look_the_same_on_both_adapters(adapter: str, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def f():\n    return 1\n")
    agent = ADAPTERS[adapter](
        str(tmp_path), tool_presentation=PRESENTATION, modes=STANDARD_MODES, default_mode="readonly"
    )
    async with AcpTestClient.connect(agent, root=tmp_path) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.set_mode(sid, "agentic")
        r = await c.prompt("Go.", session_id=sid)
    assert r.stop_reason == "end_turn"
    app = str(tmp_path / "app.py")
    whole_file_diff = FileEditToolCallContent(
        type="diff", path=app, old_text="def f():\n    return 1\n", new_text="def f():\n    return 2\n"
    )

    # the edit preset: kind, location and the whole-file diff from the arguments, from the first update on
    edit = _pending(r.updates, "e1")
    assert (edit.title, edit.kind, edit.status) == ("Edit app.py", "edit", "pending")
    assert edit.locations == [(app, None)]
    assert edit.content == [whole_file_diff]
    assert _final(r.updates, "e1").content == [whole_file_diff, tool_content(text_block("edited"))]
    assert (tmp_path / "app.py").read_text() == "def f():\n    return 2\n"

    # the shell preset: the command and its output as a console block
    bash = _pending(r.updates, "b1")
    assert (bash.title, bash.kind, bash.content) == ("Run echo hello", "execute", [])
    assert _final(r.updates, "b1").content == [tool_content(text_block("```console\n$ echo hello\nhello\n```"))]

    # the web search preset: the results as resource links
    search = _pending(r.updates, "w1")
    assert (search.title, search.kind) == ('Search the web for "agent client protocol"', "search")
    assert _final(r.updates, "w1").content == [
        tool_content(
            ResourceContentBlock(
                type="resource_link",
                uri="https://agentclientprotocol.com",
                name="https://agentclientprotocol.com",
                title="ACP",
                description="The protocol.",
            )
        )
    ]

    # a custom presentation by pattern: title template, kind, output function
    sql = _pending(r.updates, "s1")
    assert (sql.title, sql.kind) == ("Query users", "read")
    assert _final(r.updates, "s1").content == [tool_content(text_block("users: 42"))]

    # a template naming a missing argument keeps the default title; `none` shows no output
    lookup = _final(r.updates, "r1")
    assert _pending(r.updates, "r1").title == "lookup"
    assert lookup.content == [] and lookup.status == "completed"
    assert json.loads(json.dumps(lookup.raw_output)) == {"output": "value"}


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
async def test_a_presented_kind_is_the_kind_the_modes_see(adapter: str, tmp_path: Path) -> None:
    """`run_sql` is `execute` by its name, hidden in the read-only mode; presented as `read`, it runs there."""
    (tmp_path / "app.py").write_text("def f():\n    return 1\n")
    agent = ADAPTERS[adapter](
        str(tmp_path),
        tool_presentation={"run_*": ToolPresentation(kind="read")},
        modes=STANDARD_MODES,
        default_mode="readonly",
    )
    async with AcpTestClient.connect(agent, root=tmp_path) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Go.", session_id=sid)
    calls = r.tool_calls
    assert calls["s1"].kind == "read" and calls["s1"].status == "completed"
    assert calls["b1"].status == "failed"  # `bash` is still hidden in the read-only mode
    assert (tmp_path / "app.py").read_text() == "def f():\n    return 1\n"  # and so is the edit


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_a_bad_presentation_is_refused_when_the_agent_is_built(adapter: str, tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"tool_presentation\['bash'\]: expected a ToolPresentation, got str"):
        ADAPTERS[adapter](str(tmp_path), tool_presentation={"bash": "terminal"})


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
async def test_a_permission_question_shows_the_presented_title(adapter: str, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def f():\n    return 1\n")
    agent = ADAPTERS[adapter](
        str(tmp_path),
        tool_presentation={"run_*": ToolPresentation(title="Query {table}")},
        permission_policy=PermissionPolicy(ask=("run_sql",)),
    )
    async with AcpTestClient.connect(agent, root=tmp_path, permission_answers=["reject_once"]) as c:
        await c.initialize()
        r = await c.prompt("Go.", session_id=await c.new_session())
    (question,) = r.permission_requests
    assert (question.tool_call.tool_call_id, question.tool_call.title) == ("s1", "Query users")
    assert r.tool_calls["s1"].status == "failed"
