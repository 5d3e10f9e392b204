"""Chunk merging (`coalesce_ms`) takes effect on both adapters: a streamed answer of many deltas reaches
the client as its first delta, at once, and the rest merged; with `coalesce_ms=0`, one chunk per delta.

The window is long (a minute) so that which deltas merge does not depend on the machine's speed.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import langchain_acp
import pydantic_acp
import pytest
from acp.schema import AgentMessageChunk
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
from fake_model import FakeChatModel, Reply

pytestmark = pytest.mark.timeout(60)

DELTAS = [f"w{i} " for i in range(200)]


def _pydantic(**options: Any) -> AcpAgent:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for delta in DELTAS:
            yield delta

    return pydantic_acp.create_acp_agent(Agent(FunctionModel(stream_function=stream)), store="memory", **options)


def _langchain(**options: Any) -> AcpAgent:
    graph = create_agent(FakeChatModel(script=[Reply(text=DELTAS)], repeat_last=True), tools=[])
    return langchain_acp.create_acp_agent(graph, store="memory", **options)


ADAPTERS = {"pydantic": _pydantic, "langchain": _langchain}


async def _chunks(agent: AcpAgent) -> list[str]:
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
    assert r.stop_reason == "end_turn"
    return [getattr(u.content, "text", "") for u in r.updates if isinstance(u, AgentMessageChunk)]


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
async def test_the_deltas_of_one_answer_merge_after_the_first(adapter: str) -> None:
    chunks = await _chunks(ADAPTERS[adapter](coalesce_ms=60_000.0))
    assert chunks == [DELTAS[0], "".join(DELTAS[1:])]


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
async def test_coalesce_ms_zero_sends_one_chunk_per_delta(adapter: str) -> None:
    assert await _chunks(ADAPTERS[adapter](coalesce_ms=0)) == DELTAS
