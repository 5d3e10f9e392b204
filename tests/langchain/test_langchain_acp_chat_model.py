"""`AcpChatModel`: a LangChain agent whose chat model is another ACP agent, run by `acpkit run` over real stdio."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from acp.connection import StreamEvent
from acpkit_core.errors import UserError
from langchain.agents import create_agent
from langchain_acp import AcpChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

TARGET = str(Path(__file__).parents[1] / "e2e" / "agents" / "scripted_target.py")


async def test_a_graph_streams_the_remote_answer_thoughts_and_tool_call_blocks() -> None:
    model = AcpChatModel.from_target(TARGET)
    graph: Any = create_agent(model)
    script = 'say hello remote world\nthink pondering it\ntool read_file fail {"path": "notes.txt"}'
    texts: list[str] = []
    try:
        async for chunk, _ in graph.astream({"messages": [("user", script)]}, stream_mode="messages"):
            if isinstance(chunk, AIMessageChunk):
                texts += [b["text"] for b in chunk.content if isinstance(b, dict) and b.get("type") == "text"]
        result = await graph.ainvoke({"messages": [("user", "say again")]})
    finally:
        await model.aclose()
    assert texts == ["hello ", "remote ", "world"]
    answer = result["messages"][-1]
    assert isinstance(answer, AIMessage) and answer.text == "again"
    assert answer.response_metadata["stop_reason"] == "end_turn"
    assert answer.response_metadata["model_name"] == "scripted-remote"


async def test_the_final_message_holds_reasoning_and_server_tool_blocks() -> None:
    model = AcpChatModel.from_target(TARGET)
    try:
        message = await model.ainvoke('say hi\nthink pondering it\ntool read_file fail {"path": "notes.txt"}')
    finally:
        await model.aclose()
    blocks: list[Any] = [b for b in message.content if isinstance(b, dict)]
    assert [(b["type"], b.get("text") or b.get("reasoning")) for b in blocks[:2]] == [
        ("text", "hi"),
        ("reasoning", "pondering it"),
    ]
    call, result = blocks[2:]
    assert call == {
        "type": "server_tool_call",
        "id": "call-0-2",
        "name": "read_file",
        "args": {"path": "notes.txt"},
        "index": 2,
        "extras": {"kind": "read", "title": "read_file", "status": "pending"},
    }
    assert (result["type"], result["tool_call_id"], result["status"], result["output"]) == (
        "server_tool_result",
        "call-0-2",
        "error",
        "read_file failed",
    )


async def test_a_checkpointed_thread_continues_one_remote_session() -> None:
    model = AcpChatModel.from_target(TARGET)
    graph: Any = create_agent(model, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t1"}}
    try:
        await graph.ainvoke({"messages": [("user", "say one")]}, config)
        second = await graph.ainvoke({"messages": [("user", "history")]}, config)
        other = await graph.ainvoke({"messages": [("user", "history")]}, {"configurable": {"thread_id": "t2"}})
    finally:
        await model.aclose()
    assert second["messages"][-1].text == "say one"  # only the new message went to the same session
    assert other["messages"][-1].text == "(no history)"  # another thread, another session


async def test_tools_for_the_graph_are_refused_with_a_clear_error() -> None:
    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return q

    model = AcpChatModel.from_target(TARGET)
    graph: Any = create_agent(model, tools=[lookup])
    with pytest.raises(UserError, match=r"cannot offer tools \(lookup\)"):
        await graph.ainvoke({"messages": [("user", "say hi")]})
    assert model.remote.process is None  # refused before anything started


async def test_cancelling_the_graph_sends_session_cancel_and_close_ends_the_process() -> None:
    sent: list[str] = []

    def observe(event: StreamEvent) -> None:
        if event.direction.value == "outgoing" and "method" in event.message:
            sent.append(event.message["method"])

    model = AcpChatModel.from_target(TARGET)
    model.remote.observers.append(observe)
    graph: Any = create_agent(model)
    started = asyncio.Event()

    async def run() -> None:
        async for _ in graph.astream({"messages": [("user", "say started\nsleep 30")]}, stream_mode="messages"):
            started.set()

    task = asyncio.ensure_future(run())
    try:
        await asyncio.wait_for(started.wait(), 20)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert "session/cancel" in sent
        [session] = model.remote.sessions.values()
        assert session.last_stop_reason == "cancelled"
        process = model.remote.process
        assert process is not None
    finally:
        await model.aclose()
    assert process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)


def test_synchronous_invoke_runs_on_a_private_loop_and_close_ends_the_process() -> None:
    model = AcpChatModel.from_target(TARGET)
    try:
        first = model.invoke("say in sync")
        again = model.invoke([("user", "say in sync"), first, ("user", "history")])
        process = model.remote.process
    finally:
        model.close()
    assert first.text == "in sync"
    assert again.text == "say in sync"
    assert process is not None and process.returncode is not None


@pytest.mark.timeout(240)  # two Python processes importing their frameworks: slow on a busy machine
def test_the_delegate_example_runs() -> None:
    import subprocess
    import sys

    example = Path(__file__).parents[2] / "examples" / "delegate_langgraph.py"
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=200, check=True)
    lines_in_runner = len((example.parent / "echo_runner.py").read_text().splitlines())
    assert done.stdout.splitlines() == [
        f"[remote tool call] Count lines of {example.parent / 'echo_runner.py'}",
        f"[remote tool result] {lines_in_runner} lines",
        f"The file has {lines_in_runner} lines.",
    ]
