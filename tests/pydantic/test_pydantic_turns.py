"""A turn through a real ACP connection: text, thinking, tool calls and their outcomes, usage."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import ContentToolCallContent, TextContentBlock, ToolCallProgress, ToolCallStart, UsageUpdate
from acpkit_core.testing import AcpTestClient
from pyd_script import Script, call
from pydantic_acp import create_acp_agent, load_history
from pydantic_ai import Agent, ModelRetry, RunContext, ToolFailed
from pydantic_ai.capabilities import AbstractCapability, ProcessEventStream
from pydantic_ai.messages import (
    AgentStreamEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, DeltaToolCalls, FunctionModel

pytestmark = pytest.mark.timeout(30)


def texts(content: list[object]) -> list[str]:
    return [
        c.content.text
        for c in content
        if isinstance(c, ContentToolCallContent) and isinstance(c.content, TextContentBlock)
    ]


async def test_text_and_thinking_stream_as_chunks_in_order() -> None:
    script = Script(
        [[{0: DeltaThinkingPart(content="Let me ")}, {0: DeltaThinkingPart(content="think.")}, "Hello", " world"]]
    )
    acp_agent = create_acp_agent(Agent(script.model), store="memory")
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("hi", session_id=sid)
    assert r.stop_reason == "end_turn"
    assert r.thoughts == "Let me think."
    assert r.text == "Hello world"
    kinds = [k for k in r.kinds if k in ("agent_thought_chunk", "agent_message_chunk")]
    # Deltas a few ms apart may share a chunk (`coalesce_ms`); the thinking always comes first.
    assert [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k] == [
        "agent_thought_chunk",
        "agent_message_chunk",
    ]
    usage_updates = [u for u in r.updates if isinstance(u, UsageUpdate)]
    assert len(usage_updates) == 1 and usage_updates[0].size == 100_000 and usage_updates[0].used > 0
    assert r.usage is not None and r.usage.output_tokens > 0


async def test_history_is_kept_between_turns() -> None:
    script = Script([["first answer"], ["second answer"]])
    acp_agent = create_acp_agent(Agent(script.model), store="memory")
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("one", session_id=sid)
        r = await c.prompt("two", session_id=sid)
    assert r.text == "second answer"
    second = script.requests[1]
    said = [p.content for m in second if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, TextPart)]
    assert said == ["first answer"]
    assert [p.content for p in script.user_prompts()] == ["one", "two"]


async def test_tool_call_success_goes_pending_in_progress_completed(tmp_path: object) -> None:
    script = Script([["Reading.", call("read_notes", '{"path": "notes.txt"}', id="call-1")], ["Done."]])
    agent = Agent(script.model)

    @agent.tool_plain
    def read_notes(path: str) -> str:
        """Read the notes."""
        return f"notes in {path}"

    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("read", session_id=sid)
        root = str(c.root)
    assert r.stop_reason == "end_turn"
    tc = r.tool_calls["call-1"]
    assert tc.statuses == ["pending", "in_progress", "completed"]
    assert tc.kind == "read"
    assert tc.title == "Read notes.txt"
    assert tc.raw_input == {"path": "notes.txt"}
    assert tc.locations == [(f"{root}/notes.txt", None)]
    assert texts(tc.content) == ["notes in notes.txt"]
    assert tc.raw_output == {"output": "notes in notes.txt"}  # rawOutput is always a JSON object
    assert r.text == "Reading.Done."
    assert script.tool_returns()[0].content == "notes in notes.txt"


@pytest.mark.parametrize(
    ("error", "model_reads", "outcome"),
    [
        (ToolFailed("no such notes"), "no such notes", "failed"),
        (ValueError("kaboom"), "ValueError: kaboom", "failed"),
        (ModelRetry("try another path"), "try another path", "retried"),
    ],
)
async def test_tool_failures_are_failed_tool_calls_the_model_reads(
    error: Exception, model_reads: str, outcome: str
) -> None:
    script = Script([[call("read_notes", '{"path": "x"}', id="call-1")], ["Sorry."]])
    agent = Agent(script.model)

    @agent.tool_plain
    def read_notes(path: str) -> str:
        raise error

    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("read", session_id=sid)
    assert r.stop_reason == "end_turn"
    tc = r.tool_calls["call-1"]
    assert tc.statuses == ["pending", "in_progress", "failed"]
    assert any(model_reads in t for t in texts(tc.content))
    returned = script.tool_returns()[0]
    assert returned.outcome == outcome
    assert model_reads in str(returned.content)
    assert "Traceback" not in str(returned.content)


async def test_tool_errors_end_the_turn_when_not_reported() -> None:
    script = Script([[call("boom", id="call-1")], ["unreachable"]])
    agent = Agent(script.model)

    @agent.tool_plain
    def boom() -> str:
        raise ValueError("kaboom")

    acp_agent = create_acp_agent(agent, store="memory", report_tool_errors=False)
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        with pytest.raises(RequestError, match=r"^The agent failed: .*ValueError: kaboom"):
            await c.prompt("go", session_id=sid)
        closed = [u for u in c.updates[sid] if isinstance(u, ToolCallProgress) and u.tool_call_id == "call-1"]
        assert closed[-1].status == "failed"
        # The failed turn is dropped from the history: the next turn starts clean.
        r2 = await c.prompt("again", session_id=sid)
    assert r2.text == "unreachable"
    assert script.tool_returns() == []
    assert [p.content for p in script.user_prompts()] == ["again"]


async def test_parallel_tool_calls_each_get_their_own_updates() -> None:
    started: list[str] = []
    release = asyncio.Event()
    script = Script(
        [
            [
                call("fetch_page", '{"url": "https://a.example"}', id="a", index=1),
                call("fetch_page", '{"url": "https://b.example"}', id="b", index=2),
            ],
            ["Both fetched."],
        ]
    )
    agent = Agent(script.model)

    @agent.tool_plain
    async def fetch_page(url: str) -> str:
        started.append(url)
        if len(started) == 2:
            release.set()
        await asyncio.wait_for(release.wait(), 5)  # both run at the same time
        return f"page {url}"

    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("fetch", session_id=sid)
    assert set(r.tool_calls) == {"a", "b"}
    for tool_call_id, url in (("a", "https://a.example"), ("b", "https://b.example")):
        tc = r.tool_calls[tool_call_id]
        assert tc.kind == "fetch"
        assert tc.statuses == ["pending", "in_progress", "completed"]
        assert texts(tc.content) == [f"page {url}"]
    assert sorted(p.tool_call_id for p in script.tool_returns()) == ["a", "b"]


async def test_structured_output_is_shown_as_text() -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        city: str

    agent = Agent("test", output_type=Answer)
    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("where?", session_id=sid)
    assert r.stop_reason == "end_turn"
    assert json.loads(r.text) == {"city": "a"}
    assert r.tool_calls == {}


async def test_history_is_stored_as_pydantic_messages() -> None:
    script = Script([[{0: DeltaThinkingPart(content="hm")}, "ok"]])
    runner_agent = create_acp_agent(Agent(script.model), store="memory")
    async with AcpTestClient.connect(runner_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("hi", session_id=sid)
        stored = await runner_agent.store.get(sid)
    messages = load_history(stored.session)
    response = messages[-1]
    assert isinstance(response, ModelResponse)
    assert [type(p) for p in response.parts] == [ThinkingPart, TextPart]


@pytest.mark.parametrize("how", ["capability", "agent handler"])
async def test_the_agents_own_event_handlers_still_run(how: str) -> None:
    seen: list[str] = []

    async def own_handler(ctx: object, events: Any) -> None:
        async for event in events:
            seen.append(type(event).__name__)

    script = Script([["Hello", " there"]])
    if how == "capability":
        agent = Agent(script.model, capabilities=[ProcessEventStream(own_handler)])
    else:

        class HandlerAgent(Agent[None, str]):
            @property
            def event_stream_handler(self) -> Any:
                return own_handler

        agent = HandlerAgent(script.model)  # pyright: ignore[reportCallIssue, reportArgumentType]
    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("hi", session_id=sid)
    assert r.text == "Hello there"
    assert seen.count("PartDeltaEvent") == 1


async def test_the_agents_own_capabilities_still_see_and_change_every_event() -> None:
    """The adapter's own capabilities step aside from the event stream; the agent's do not."""
    heard: list[str] = []

    class Shout(AbstractCapability[Any]):
        async def wrap_run_event_stream(
            self, ctx: RunContext[Any], *, stream: AsyncIterable[AgentStreamEvent]
        ) -> AsyncIterator[AgentStreamEvent]:
            async for event in stream:
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    event = replace(event, part=replace(event.part, content=event.part.content.upper()))
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    event = replace(event, delta=replace(event.delta, content_delta=event.delta.content_delta.upper()))
                yield event

    class Listen(AbstractCapability[Any]):
        async def on_event(self, ctx: RunContext[Any], *, event: AgentStreamEvent) -> None:
            heard.append(type(event).__name__)

    script = Script([["Hello", " there"]])
    agent = Agent(script.model, capabilities=[Shout(), Listen()])
    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("hi", session_id=sid)
    assert r.text == "HELLO THERE"
    assert heard.count("PartStartEvent") == 1 and heard.count("PartDeltaEvent") == 1


async def test_a_tool_call_is_shown_as_soon_as_its_name_streams(tmp_path: Path) -> None:
    """The editor sees the call while the model is still writing its arguments, then the arguments."""
    shown = asyncio.Event()

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if any(isinstance(p, ToolReturnPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts):
            yield "Read it."
            return
        yield {1: DeltaToolCall(name="read_notes", json_args='{"pa', tool_call_id="r1")}
        await asyncio.wait_for(shown.wait(), 5)  # the rest of the arguments only after the client saw the call
        yield {1: DeltaToolCall(json_args='th": "notes.txt"}')}

    agent = Agent(FunctionModel(stream_function=stream, model_name="slow-args"))

    @agent.tool_plain
    def read_notes(path: str) -> str:
        return f"contents of {path}"

    async def watch(c: AcpTestClient, sid: str) -> None:
        while not any(isinstance(u, ToolCallStart) for u in c.updates.get(sid, [])):
            await asyncio.sleep(0.005)
        shown.set()

    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session(cwd=tmp_path)
        watcher = asyncio.ensure_future(watch(c, sid))
        r = await c.prompt("read my notes", session_id=sid)
        await watcher
    start, *updates = [u for u in r.updates if isinstance(u, ToolCallStart | ToolCallProgress)]
    assert isinstance(start, ToolCallStart)
    assert (start.tool_call_id, start.kind, start.status, start.raw_input) == ("r1", "read", "pending", None)
    completing = updates[0]
    assert isinstance(completing, ToolCallProgress) and completing.status is None
    assert completing.raw_input == {"path": "notes.txt"}
    assert completing.locations is not None and [loc.path for loc in completing.locations] == [
        str(tmp_path / "notes.txt")
    ]
    tc = r.tool_calls["r1"]
    assert tc.statuses == ["pending", "in_progress", "completed"]
    assert texts(tc.content) == ["contents of notes.txt"]
    assert r.text == "Read it."
