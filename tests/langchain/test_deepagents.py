"""A real DeepAgents graph (`deepagents.create_deep_agent`) served over a real ACP connection.

The graphs are built by DeepAgents itself around the scripted fake model: its filesystem middleware
(the virtual filesystem in the graph's `files` state), its `task` tool and subagents, its
human-in-the-loop middleware and its summarization middleware all run as they would with a real
model. Nothing here needs the network: every graph is given the fake model explicitly (DeepAgents'
default model is `ChatAnthropic`), summarization counts tokens approximately (no tokenizer
download) and the Anthropic prompt-caching middleware does nothing for a non-Anthropic model.
"""

from __future__ import annotations

from typing import Any

import pytest
from acp.schema import ToolCallStart
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient
from acpkit_core.testing.results import ToolCallState
from deepagents import create_deep_agent
from langchain.agents.middleware import TodoListMiddleware
from langchain_acp import create_acp_agent
from langchain_acp._approvals import plan_questions
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Interrupt
from lc_helpers import Call, FakeChatModel, Reply

pytestmark = pytest.mark.timeout(30)

# The tools DeepAgents 0.7.32 gives every agent (no `execute`: the default `StateBackend` is no sandbox).
BUILT_IN_TOOLS = ["ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep"]


def deep_agent(script: list[Any], **options: Any) -> tuple[AcpAgent, FakeChatModel]:
    """An `AcpAgent` over `create_deep_agent(fake model, **options)`, with a memory store."""
    model = FakeChatModel(script=script)
    graph = create_deep_agent(model=model, **options)
    return create_acp_agent(graph, store="memory"), model


def text_of(call: ToolCallState) -> str:
    """The text content of a tool call as the client shows it."""
    return "".join(c.content.text for c in call.content if c.type == "content" and c.content.type == "text")


def starts(updates: list[Any]) -> dict[str, ToolCallStart]:
    """The `tool_call` update that announced each call, by id."""
    return {u.tool_call_id: u for u in updates if isinstance(u, ToolCallStart)}


async def test_write_todos_becomes_one_plan_per_change() -> None:
    todos = [{"content": "Read the code", "status": "in_progress"}, {"content": "Fix the bug", "status": "pending"}]
    done = [{"content": "Read the code", "status": "completed"}, {"content": "Fix the bug", "status": "in_progress"}]
    # DeepAgents 0.7 no longer adds `write_todos` by default: the planning middleware is passed in.
    agent, model = deep_agent(
        [
            Reply(calls=[Call("write_todos", {"todos": todos}, "t1")]),
            Reply(calls=[Call("write_todos", {"todos": todos}, "t2")]),
            Reply(calls=[Call("write_todos", {"todos": done}, "t3")]),
            Reply(text="Planned."),
        ],
        middleware=[TodoListMiddleware()],
    )
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("fix the bug", session_id=sid)
    assert model.bound_tools[0] == [*BUILT_IN_TOOLS, "task", "write_todos"]
    plans = [u for u in r.updates if u.session_update == "plan"]
    assert [[(e.content, e.status, e.priority) for e in p.entries] for p in plans] == [
        [("Read the code", "in_progress", "medium"), ("Fix the bug", "pending", "medium")],
        [("Read the code", "completed", "medium"), ("Fix the bug", "in_progress", "medium")],
    ]
    # each plan follows the call that changed it; the unchanged t2 sends none
    order = [u.tool_call_id if u.session_update == "tool_call" else u.session_update for u in r.updates]
    assert [o for o in order if o in ("t1", "t2", "t3", "plan")] == ["t1", "plan", "t2", "t3", "plan"]
    for call_id, entries in (("t1", todos), ("t2", todos), ("t3", done)):
        call = r.tool_calls[call_id]
        assert (call.kind, call.title, call.statuses) == (
            "think",
            "Update plan",
            ["pending", "in_progress", "completed"],
        )
        assert text_of(call) == f"Updated todo list to {entries}"
        assert call.raw_output == {"output": f"Updated todo list to {entries}"}  # not the repr of the tool's `Command`
    assert r.text == "Planned."
    assert r.stop_reason == "end_turn"


async def test_built_in_file_tools_work_on_the_virtual_filesystem() -> None:
    agent, model = deep_agent(
        [
            Reply(
                text="Writing.", calls=[Call("write_file", {"file_path": "/notes.md", "content": "milk\neggs\n"}, "w1")]
            ),
            Reply(
                calls=[Call("edit_file", {"file_path": "/notes.md", "old_string": "eggs", "new_string": "bread"}, "e1")]
            ),
            Reply(calls=[Call("read_file", {"file_path": "/notes.md"}, "r1")]),
            Reply(calls=[Call("ls", {"path": "/"}, "l1"), Call("grep", {"pattern": "bread", "path": "/"}, "g1")]),
            Reply(text="The list has milk and bread."),
        ]
    )
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("make a shopping list", session_id=sid)
        on_disk = sorted(p.name for p in c.root.iterdir())
    expected = {
        "w1": ("edit", "Write /notes.md", "Updated file /notes.md"),
        "e1": ("edit", "Edit /notes.md", "Successfully replaced 1 instance(s) of the string in '/notes.md'"),
        "r1": ("read", "Read /notes.md", "@@ lines 1-2 of 2 @@\nmilk\nbread"),
        "l1": ("search", "List /", "['/notes.md']"),
        "g1": ("search", 'Search "bread" in /', "/notes.md"),
    }
    assert list(r.tool_calls) == list(expected)
    for call_id, (kind, title, output) in expected.items():
        call = r.tool_calls[call_id]
        assert (call.kind, call.title, text_of(call)) == (kind, title, output)
        assert call.statuses == ["pending", "in_progress", "completed"]
        assert starts(r.updates)[call_id].field_meta is None  # the main agent's own calls
    assert r.tool_calls["w1"].raw_input == {"file_path": "/notes.md", "content": "milk\neggs\n"}
    # the files live in the graph's state, not in the editor's workspace: no location to follow
    assert on_disk == []
    assert [r.tool_calls[i].locations for i in ("w1", "e1", "r1")] == [[], [], []]
    assert not [m for m, _ in c.requests if m.startswith("fs/")]
    assert r.text == "Writing.The list has milk and bread."
    # the model got each result back as the tool's message
    results = {m.tool_call_id: m.content for m in model.seen[-1] if isinstance(m, ToolMessage)}
    assert results["r1"] == expected["r1"][2]


@tool
def lookup(topic: str) -> str:
    """Look a topic up in the reference book."""
    return f"{topic}: 42"


async def test_task_runs_a_subagent_whose_calls_are_marked_and_whose_text_is_thought() -> None:
    researcher_model = FakeChatModel(
        script=[
            Reply(text="Looking it up.", calls=[Call("lookup", {"topic": "answer"}, "s1")]),
            Reply(calls=[Call("write_file", {"file_path": "/findings.md", "content": "answer: 42"}, "s2")]),
            Reply(text="The answer is 42."),
        ]
    )
    researcher = {
        "name": "researcher",
        "description": "Finds facts in the reference book.",
        "system_prompt": "You research facts.",
        "tools": [lookup],
        "model": researcher_model,
    }
    agent, model = deep_agent(
        [
            Reply(
                text="Asking the researcher.",
                calls=[Call("task", {"description": "Find the answer.", "subagent_type": "researcher"}, "task1")],
            ),
            Reply(calls=[Call("ls", {"path": "/"}, "l1")]),
            Reply(text="It is 42."),
        ],
        subagents=[researcher],
    )
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("what is the answer?", session_id=sid)
    assert list(r.tool_calls) == ["task1", "s1", "s2", "l1"]
    task = r.tool_calls["task1"]
    assert (task.kind, task.title, task.statuses) == (
        "other",
        "task: Find the answer.",
        ["pending", "in_progress", "completed"],
    )
    assert task.raw_input == {"description": "Find the answer.", "subagent_type": "researcher"}
    assert text_of(task) == task.raw_output["output"] == "The answer is 42."
    # the subagent's own calls are shown, marked with its namespace, and run inside the task
    first = starts(r.updates)
    assert first["task1"].field_meta is None and first["l1"].field_meta is None
    for call_id in ("s1", "s2"):
        meta = first[call_id].field_meta
        assert meta is not None and meta["acpkit"]["subagent"].startswith("tools:")
        assert meta["acpkit"]["agent"] == "researcher"  # the subagent's name, for the editor to show
        assert r.tool_calls[call_id].statuses == ["pending", "in_progress", "completed"]
    assert (r.tool_calls["s1"].kind, r.tool_calls["s1"].title, text_of(r.tool_calls["s1"])) == (
        "search",
        "lookup",
        "answer: 42",
    )
    assert (r.tool_calls["s2"].kind, r.tool_calls["s2"].title) == ("edit", "Write /findings.md")
    positions = {u.tool_call_id: i for i, u in enumerate(r.updates) if getattr(u, "status", None) == "completed"}
    assert positions["s1"] < positions["s2"] < positions["task1"] < positions["l1"]
    # the subagent's text is thought, never the answer
    assert r.text == "Asking the researcher.It is 42."
    assert r.thoughts == "Looking it up.The answer is 42."
    # the subagent's file reached the main agent's filesystem
    assert text_of(r.tool_calls["l1"]) == "['/findings.md']"
    # the subagent started from its own prompt and the task, with its own tools
    assert [(type(m), m.content) for m in researcher_model.seen[0]] == [
        (SystemMessage, "You research facts."),
        (HumanMessage, "Find the answer."),
    ]
    assert researcher_model.bound_tools[0] == [*BUILT_IN_TOOLS, "lookup"]
    (result,) = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert (result.tool_call_id, result.content) == ("task1", "The answer is 42.")


async def test_a_subagents_todo_list_does_not_replace_the_sessions_plan() -> None:
    worker_model = FakeChatModel(
        script=[
            Reply(calls=[Call("write_todos", {"todos": [{"content": "Worker step", "status": "in_progress"}]}, "wt")]),
            Reply(text="Worked."),
        ]
    )
    worker = {
        "name": "worker",
        "description": "Does the work.",
        "system_prompt": "You work.",
        "model": worker_model,
        "middleware": [TodoListMiddleware()],
    }
    agent, _ = deep_agent(
        [
            Reply(calls=[Call("write_todos", {"todos": [{"content": "Delegate", "status": "in_progress"}]}, "t1")]),
            Reply(calls=[Call("task", {"description": "Do it.", "subagent_type": "worker"}, "task1")]),
            Reply(text="Delegated."),
        ],
        subagents=[worker],
        middleware=[TodoListMiddleware()],
    )
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("delegate", session_id=sid)
    plans = [[(e.content, e.status) for e in u.entries] for u in r.updates if u.session_update == "plan"]
    assert plans == [[("Delegate", "in_progress")]]
    # the subagent's planning is still shown, as its own (marked) tool call
    wt = r.tool_calls["wt"]
    assert (wt.kind, wt.title, wt.status) == ("think", "Update plan", "completed")
    assert starts(r.updates)["wt"].field_meta is not None


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
async def test_interrupt_on_asks_with_the_tool_calls_own_id(answer: str) -> None:
    agent, model = deep_agent(
        [
            Reply(calls=[Call("write_file", {"file_path": "/plan.md", "content": "step 1"}, "w1")]),
            Reply(calls=[Call("ls", {"path": "/"}, "l1")]),
            Reply(text="Finished."),
        ],
        interrupt_on={"write_file": True},
    )
    async with AcpTestClient.connect(agent, permission_answers=[answer]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("write the plan", session_id=sid)
    (request,) = r.permission_requests
    asked = request.tool_call
    assert (asked.tool_call_id, asked.title, asked.kind, asked.status) == ("w1", "Write /plan.md", "edit", "pending")
    assert asked.raw_input == {"file_path": "/plan.md", "content": "step 1"}
    assert [o.kind for o in request.options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    call = r.tool_calls["w1"]
    assert (call.kind, call.title) == ("edit", "Write /plan.md")
    (told,) = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    if answer == "allow_once":
        assert call.statuses == ["pending", "in_progress", "completed"]
        assert text_of(call) == told.content == "Updated file /plan.md"
        assert text_of(r.tool_calls["l1"]) == "['/plan.md']"
    else:
        # the tool never ran: no in_progress, and the model is told the user declined
        assert call.statuses == ["pending", "failed"]
        rejection = (
            "User rejected the tool call for `write_file` with reason: The user declined this tool call in the editor."
        )
        assert text_of(call) == told.content == rejection
        assert told.status == "error"
        assert text_of(r.tool_calls["l1"]) == "No files found"
    assert r.text == "Finished."
    assert r.stop_reason == "end_turn"
    assert list(r.tool_calls) == ["w1", "l1"]


async def test_interrupt_on_inside_a_subagent_asks_with_the_subagents_call_id() -> None:
    writer_model = FakeChatModel(
        script=[
            Reply(calls=[Call("write_file", {"file_path": "/a.md", "content": "x"}, "s1")]),
            Reply(text="Written."),
        ]
    )
    writer = {"name": "writer", "description": "Writes files.", "system_prompt": "You write.", "model": writer_model}
    agent, _ = deep_agent(
        [
            Reply(calls=[Call("task", {"description": "Write a.md", "subagent_type": "writer"}, "task1")]),
            Reply("Done."),
        ],
        subagents=[writer],
        interrupt_on={"write_file": True},  # subagents inherit it
    )
    async with AcpTestClient.connect(agent, permission_answers=["allow_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("write a.md", session_id=sid)
    assert [p.tool_call.tool_call_id for p in r.permission_requests] == ["s1"]
    assert list(r.tool_calls) == ["task1", "s1"]
    assert r.tool_calls["s1"].statuses == ["pending", "in_progress", "completed"]
    assert r.tool_calls["task1"].statuses == ["pending", "in_progress", "completed"]
    assert r.text == "Done."


def test_a_subagents_gated_call_is_matched_among_the_calls_shown() -> None:
    # What the runner needs for the test above: the request matched to the subagent's call `s1`
    # (shown, not started) when the parent's last AI message only has the `task` call.
    args = {"file_path": "/a.md", "content": "x"}
    interrupt = Interrupt({"action_requests": [{"name": "write_file", "args": args}], "review_configs": []}, id="i1")
    messages = [HumanMessage("go"), AIMessage("", tool_calls=[{"name": "task", "args": {}, "id": "task1"}])]
    (alone,) = plan_questions([interrupt], messages) or []
    assert alone.tool_call_id == "i1-0"
    pending = [
        ("task1", "task", {}),
        ("s0", "write_file", {"file_path": "/b.md", "content": "y"}),
        ("s1", "write_file", args),
    ]
    (matched,) = plan_questions([interrupt], messages, pending) or []
    assert (matched.tool_call_id, matched.name, matched.args, matched.batched) == ("s1", "write_file", args, True)


async def test_the_conversation_and_the_files_persist_across_turns() -> None:
    agent, model = deep_agent(
        [
            Reply(calls=[Call("write_file", {"file_path": "/todo.txt", "content": "buy milk"}, "w1")]),
            Reply(text="Noted."),
            Reply(calls=[Call("read_file", {"file_path": "/todo.txt"}, "r1")]),
            Reply(text="You wanted to buy milk."),
        ]
    )
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("remember: buy milk", session_id=sid)
        second = await c.prompt("what did I want?", session_id=sid)
    assert first.text == "Noted."
    assert second.text == "You wanted to buy milk."
    assert list(second.tool_calls) == ["r1"]  # the first turn's calls are not sent again
    assert text_of(second.tool_calls["r1"]) == "@@ lines 1-1 of 1 @@\nbuy milk"
    # the second turn's first model call saw the whole first turn (from the embedded checkpointer)
    history = [m for m in model.seen[2] if not isinstance(m, SystemMessage)]
    assert [type(m).__name__ for m in history] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
        "HumanMessage",
    ]
    assert isinstance(history[3], AIMessage) and history[3].content == "Noted."
    assert (history[0].text, history[4].text) == ("remember: buy milk", "what did I want?")
