"""`AcpModel`: a pydantic-ai agent whose model is another ACP agent, run by `acpkit run` over real stdio."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.connection import StreamEvent
from acpkit_core.delegate import RemoteAgent, RemoteAgentError, RemoteToolCall, acpkit_run_command
from acpkit_core.errors import UserError
from acpkit_core.runner.types import PermissionDecision
from pydantic_acp import AcpModel
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

TARGET = str(Path(__file__).parents[1] / "e2e" / "agents" / "scripted_target.py")


def _remote(**kwargs: Any) -> RemoteAgent:
    return RemoteAgent(acpkit_run_command(TARGET), **kwargs)


async def test_streams_text_thoughts_and_the_remote_tool_call_as_native_parts() -> None:
    model = AcpModel.from_target(TARGET)
    agent = Agent(model)
    script = 'say hello remote world\nthink pondering it\ntool read_file ok {"path": "notes.txt"}'
    deltas: list[str] = []
    result: Any = None
    async with agent, agent.run_stream_events(script) as events:
        async for event in events:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                deltas.append(event.part.content)
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                deltas.append(event.delta.content_delta)
            result = getattr(event, "result", result)
        assert result is not None
        messages = result.all_messages()
    assert deltas == ["hello ", "remote ", "world"]
    assert result.output == "hello remote world"
    response = messages[-1]
    assert isinstance(response, ModelResponse)
    assert response.model_name == "scripted-remote"
    assert response.provider_details == {"stop_reason": "end_turn"}
    thinking = [p.content for p in response.parts if isinstance(p, ThinkingPart)]
    assert thinking == ["pondering it"]
    call = next(p for p in response.parts if isinstance(p, NativeToolCallPart))
    assert (call.tool_name, call.args, call.tool_call_id, call.provider_name) == (
        "read_file",
        {"path": "notes.txt"},
        "call-0-2",
        "acp",
    )
    assert call.provider_details == {"kind": "read", "status": "pending", "title": "read_file"}
    ret = next(p for p in response.parts if isinstance(p, NativeToolReturnPart))
    assert (ret.tool_call_id, ret.content, ret.outcome) == ("call-0-2", "read_file done", "success")
    assert model.remote.process is not None and model.remote.process.returncode is not None


async def test_a_continued_conversation_sends_only_the_new_message_in_the_same_session() -> None:
    model = AcpModel(_remote())
    agent = Agent(model)
    async with agent:
        first = await agent.run("say one")
        second = await agent.run("history", message_history=first.all_messages())
        assert second.output == "say one"  # the remote session saw only "say one" before
        third = await agent.run("history", message_history=second.all_messages())
        assert third.output == "say one | history"
        # a history this model never had: a new session, told the earlier turns once
        edited = [*first.all_messages()[:-1], ModelResponse(parts=[TextPart("one, edited")])]
        foreign = await agent.run("say fresh", message_history=edited)
        assert len(model.remote.sessions) == 2
        assert foreign.output == (
            "echo: The conversation so far:\n<user>\nsay one\n</user>\n<assistant>\none, edited\n</assistant>"
            "\n\nsay fresh"
        )


async def test_instructions_go_with_the_first_prompt_of_a_session() -> None:
    agent = Agent(AcpModel(_remote()), instructions="Answer briefly.")
    async with agent:
        result = await agent.run("hi there")
    assert result.output == "echo: <instructions>\nAnswer briefly.\n</instructions>\n\nhi there"


async def test_permission_requests_of_the_remote_agent_follow_the_policy() -> None:
    asked: list[RemoteToolCall] = []

    async def allow(call: RemoteToolCall) -> PermissionDecision:
        asked.append(call)
        return PermissionDecision(outcome="allow")

    rejecting = Agent(AcpModel(_remote()))
    allowing = Agent(AcpModel(_remote(permissions=allow)))
    async with rejecting, allowing:
        rejected = await rejecting.run('ask rm {"path": "x.txt"}\nsay after')
        allowed = await allowing.run('ask rm {"path": "x.txt"}\nsay after')
    for result, outcome, content in ((rejected, "failed", "rejected by the user"), (allowed, "success", "rm done")):
        ret = next(p for p in result.all_messages()[-1].parts if isinstance(p, NativeToolReturnPart))
        assert (ret.tool_name, ret.outcome, ret.content) == ("rm", outcome, content)
    assert [(c.title, c.tool_kind, c.raw_input) for c in asked] == [("rm", "delete", {"path": "x.txt"})]


async def test_the_callers_tools_are_refused_with_a_clear_error() -> None:
    agent = Agent(AcpModel(_remote()))

    @agent.tool_plain
    def lookup(q: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Look something up."""
        return q

    async with agent:
        with pytest.raises(UserError, match=r"cannot offer this agent's tools \(lookup\)"):
            await agent.run("hi")


async def test_cancelling_the_run_sends_session_cancel_and_close_ends_the_process() -> None:
    sent: list[str] = []

    def observe(event: StreamEvent) -> None:
        if event.direction.value == "outgoing" and "method" in event.message:
            sent.append(event.message["method"])

    model = AcpModel(_remote(observers=[observe]))
    agent = Agent(model)
    started = asyncio.Event()

    async def run() -> None:
        async with agent.run_stream_events("say started\nsleep 30\nsay never") as events:
            async for event in events:
                if isinstance(event, PartStartEvent):
                    started.set()

    async with agent:
        task = asyncio.ensure_future(run())
        await asyncio.wait_for(started.wait(), 20)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert "session/cancel" in sent
        [session] = model.remote.sessions.values()
        assert session.last_stop_reason == "cancelled"  # the remote turn really stopped
        # the model still works after a cancelled turn
        again = await agent.run("say still here")
        assert again.output == "still here"
        process = model.remote.process
        assert process is not None
    assert process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)


async def test_an_agent_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    agent = Agent(AcpModel([str(tmp_path / "no-such-agent")]))
    async with agent:
        with pytest.raises(RemoteAgentError, match="cannot start the remote agent"):
            await agent.run("hi")
    crashing = Agent(AcpModel([sys.executable, "-c", "import sys; sys.exit(3)"]))
    async with crashing:
        with pytest.raises(RemoteAgentError, match="did not initialize"):
            await crashing.run("hi")


@pytest.mark.timeout(240)  # two Python processes importing their frameworks: slow on a busy machine
def test_the_delegate_example_runs() -> None:
    import subprocess

    example = Path(__file__).parents[2] / "examples" / "delegate_pydantic.py"
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=200, check=True)
    lines = done.stdout.splitlines()
    lines_in_runner = len((example.parent / "echo_runner.py").read_text().splitlines())
    assert lines == [
        f"[remote tool call] Count lines of {example.parent / 'echo_runner.py'}",
        f"[remote tool result] {lines_in_runner} lines",
        f"The file has {lines_in_runner} lines.",
        "You said: hello again (message 2) ",
    ]
