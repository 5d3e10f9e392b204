"""LangChain's `SummarizationMiddleware` as compaction updates: a summary that fails after it began
ends the compaction it started (`failed`, its streamed summary cleared), so the client is never left
with one in progress, and `session/load` replays it so."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from acp import RequestError
from acpkit_core.client.unstable_updates import CompactionSummaryChunk, CompactionUpdate
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_acp import ScriptedChatModel, create_acp_agent
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult


class DyingSummarizer(BaseChatModel):
    """Streams the first words of a summary, then its connection drops."""

    @property
    def _llm_type(self) -> str:
        return "dying"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kw: Any,
    ) -> ChatResult:
        raise RuntimeError("the summary model is down")

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kw: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        chunk = ChatGenerationChunk(message=AIMessageChunk(content="The user "))
        if run_manager is not None:
            await run_manager.on_llm_new_token("The user ", chunk=chunk)
        yield chunk
        raise RuntimeError("the summary model dropped the connection")


async def test_a_summary_that_fails_midway_ends_its_compaction_failed() -> None:
    middleware = SummarizationMiddleware(model=DyingSummarizer(), trigger=("messages", 3), keep=("messages", 1))
    graph = create_agent(ScriptedChatModel(default_text="Hi."), middleware=[middleware])
    async with AcpTestClient.connect(create_acp_agent(graph, store="memory"), unstable=["sessionCompaction"]) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("Hello.", session_id=sid)
        seen = len(c.updates[sid])
        with pytest.raises(RequestError):
            await c.prompt("Hello again.", session_id=sid)
        updates = [u for u in c.updates[sid][seen:] if isinstance(u, CompactionUpdate | CompactionSummaryChunk)]
        _, replayed = await c.load_session(sid)
    # in progress, then each attempt of the summary streams "The user " (a retry clears what the
    # one before streamed), then failed, cleared: the client never shows "The user The user "
    start, *attempts, end = updates
    assert isinstance(start, CompactionUpdate) and isinstance(end, CompactionUpdate)
    assert len(attempts) % 2 == 1 and attempts
    for i, u in enumerate(attempts):
        if i % 2 == 0:
            assert isinstance(u, CompactionSummaryChunk) and u.content.text == "The user "  # type: ignore[union-attr]
        else:
            assert isinstance(u, CompactionUpdate) and (u.status, u.summary) == ("in_progress", [])
    assert [(u.status, u.error) for u in (start, end)] == [("in_progress", None), ("failed", "The run stopped first.")]
    assert end.summary == []  # the words streamed before the failure are cleared
    assert {u.compaction_id for u in updates} == {start.compaction_id}
    # session/load shows it once, failed, with no summary
    [again] = [u for u in replayed if isinstance(u, CompactionUpdate | CompactionSummaryChunk)]
    assert isinstance(again, CompactionUpdate)
    assert (again.compaction_id, again.status, again.summary, again.error) == (
        start.compaction_id,
        "failed",
        None,
        "The run stopped first.",
    )
