"""`show_hooks=True`: history processing, compaction and emitted events as tool-call cards (off by default)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from acp.helpers import text_block, tool_content
from acp.schema import AgentMessageChunk, ToolCallStart
from acpkit_core.client.unstable_updates import CompactionUpdate
from acpkit_core.testing import AcpTestClient
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent, CustomEvent, RunContext
from pydantic_ai.capabilities import Hooks, ProcessHistory
from pydantic_ai.messages import CompactionPart, ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.models.function import AgentInfo, FunctionModel


@dataclass(kw_only=True)
class RequestCounted(CustomEvent):
    messages: int


@dataclass(kw_only=True)
class RowsScanned(CustomEvent):
    rows: int


def summarize(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Before a new prompt, replace the earlier conversation by a summary (as a compaction does)."""
    last = messages[-1]
    if len(messages) == 1 or not any(p.part_kind == "user-prompt" for p in last.parts):
        return messages
    summary = ModelRequest(parts=[CompactionPart(content=f"{len(messages) - 1} earlier messages: a users scan.")])
    return [summary, last]


def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(p.part_kind == "tool-return" for p in last.parts):
        return ModelResponse(parts=[TextPart("Scanned.")])
    if any(p.part_kind == "user-prompt" and "Again" in str(p.content) for m in messages for p in m.parts):
        return ModelResponse(parts=[TextPart("Again.")])
    return ModelResponse(parts=[ToolCallPart("scan", {"table": "users"}, tool_call_id="scan-1")])


def build() -> Agent[object, str]:
    hooks = Hooks[object]()

    @hooks.on.before_model_request
    async def announce(ctx: RunContext[object], request_context: ModelRequestContext) -> ModelRequestContext:
        await ctx.emit(RequestCounted(messages=len(request_context.messages)))
        return request_context

    agent = Agent(FunctionModel(reply), capabilities=[ProcessHistory(summarize), hooks])

    @agent.tool
    async def scan(ctx: RunContext[object], table: str) -> str:
        """Scan a table."""
        await ctx.emit(RowsScanned(rows=3))
        return "3 rows"

    return agent


def _cards(updates: list[Any]) -> list[tuple[str, str | None, str | None, Any]]:
    return [
        (u.title, u.kind, u.status, u.raw_input)
        for u in updates
        if isinstance(u, ToolCallStart) and u.tool_call_id.startswith("lifecycle-")
    ]


async def test_history_processing_and_events_are_cards_when_asked() -> None:
    async with AcpTestClient.connect(
        create_acp_agent(build(), store="memory", show_hooks=True),
        unstable=["sessionCompaction"],  # the compaction is no text
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("Scan users.", session_id=sid)
        second = await c.prompt("Again.", session_id=sid)
        _, replayed = await c.load_session(sid)
    assert first.stop_reason == second.stop_reason == "end_turn"
    # turn 1: a request with the prompt, the tool's event, a request with the prompt, the call and its result
    assert _cards(first.updates) == [
        ("Request counted", "other", "completed", {"messages": 1}),
        ("Rows scanned (scan)", "other", "completed", {"rows": 3}),
        ("Request counted", "other", "completed", {"messages": 3}),
    ]
    assert first.tool_calls["scan-1"].status == "completed"  # the real tool call is unchanged
    assert first.text == "Scanned."
    # turn 2: the stored history (4 messages) and the new prompt, summarised before the request
    processed = next(u for u in second.updates if isinstance(u, ToolCallStart) and u.title.startswith("History"))
    assert (processed.title, processed.kind, processed.status) == (
        "History processed (5 → 2 messages)",
        "other",
        "completed",
    )
    assert processed.raw_input == {"messages_before": 5, "messages_after": 2, "messages_rewritten": 1}
    assert processed.content == [tool_content(text_block("4 earlier messages: a users scan."))]
    assert [c[0] for c in _cards(second.updates)] == ["History processed (5 → 2 messages)", "Request counted"]
    assert second.text == "Again."
    # kept in the transcript: a reload shows them again
    assert len(_cards(replayed)) == len(_cards(first.updates)) + len(_cards(second.updates))


async def test_no_cards_by_default() -> None:
    async with AcpTestClient.connect(create_acp_agent(build(), store="memory")) as c:
        await c.initialize()
        r = await c.prompt("Scan users.", session_id=await c.new_session())
    assert _cards(r.updates) == []
    assert list(r.tool_calls) == ["scan-1"]


@pytest.mark.parametrize("summary", ["The user asked about users; 3 rows were found.", None])
async def test_provider_compaction_is_a_card_with_its_summary(summary: str | None) -> None:
    def compacting(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[CompactionPart(content=summary, provider_name="function", id="c1"), TextPart("Compacted.")]
        )

    agent = Agent(FunctionModel(compacting))
    async with AcpTestClient.connect(create_acp_agent(agent, store="memory", show_hooks=True)) as c:
        await c.initialize()
        r = await c.prompt("Go on.", session_id=await c.new_session())
    (card,) = [u for u in r.updates if isinstance(u, ToolCallStart)]
    assert (card.title, card.kind, card.status) == ("Conversation compacted", "other", "completed")
    assert card.raw_input == {"provider": "function", "parts": 1}
    assert card.content == ([tool_content(text_block(summary))] if summary else None)
    assert r.text.startswith("Compacted.")  # then the compaction's notice (this client has no compaction updates)


@pytest.mark.parametrize("summary", ["The user asked about users; 3 rows were found.", None])
async def test_provider_compaction_is_a_compaction_update_live_and_on_replay(summary: str | None) -> None:
    """A response with a `CompactionPart` (the provider compacted its context) is a compaction, no
    hooks needed: an opted-in client sees it, with the readable summary when there is one, and
    `session/load` shows it again; a plain client sees the notice."""

    def compacting(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[CompactionPart(content=summary, provider_name="function", id="c1"), TextPart("Compacted.")]
        )

    acp_agent = create_acp_agent(Agent(FunctionModel(compacting)), store="memory")
    async with AcpTestClient.connect(acp_agent, unstable=["sessionCompaction"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Go on.", session_id=sid)
        _, replayed = await c.load_session(sid)
    [live] = [u for u in r.updates if isinstance(u, CompactionUpdate)]
    assert live.status == "completed" and r.text == "Compacted."
    assert [b.text for b in live.summary or []] == ([summary] if summary else [])  # type: ignore[union-attr]
    [again] = [u for u in replayed if isinstance(u, CompactionUpdate)]
    assert (again.compaction_id, again.status, again.summary) == (live.compaction_id, live.status, live.summary)
    async with AcpTestClient.connect(create_acp_agent(Agent(FunctionModel(compacting)), store="memory")) as c:
        await c.initialize()
        plain = await c.prompt("Go on.", session_id=await c.new_session())
    [note] = [u for u in plain.updates if isinstance(u, AgentMessageChunk) and u.field_meta]
    assert (note.field_meta or {})["acpkit"]["notice"] == {
        "severity": "info",
        "title": "Context compacted",
        "description": "Earlier messages were summarized to fit the model's context.",
    }
    assert plain.text.startswith("Compacted.")
