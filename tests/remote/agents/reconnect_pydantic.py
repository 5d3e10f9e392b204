"""An `acpkit serve` target for the reconnect tests: a pydantic-ai agent whose turn streams text, calls a
tool, asks permission for another, and streams on (a `FunctionModel`: offline and the same every time).

Its store comes from `$REPLICA_STORE`; `$RECONNECT_CHUNK_DELAY` paces the stream.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator

from acpkit_core.permissions import PermissionPolicy
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

DELAY = float(os.environ.get("RECONNECT_CHUNK_DELAY", "0.003"))
WORDS = 30


def _step(messages: list[ModelMessage]) -> int:
    """How many tool results came since the turn's prompt: the model's step in this turn."""
    parts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts]
    start = max(i for i, p in enumerate(parts) if isinstance(p, UserPromptPart))
    return sum(isinstance(p, ToolReturnPart) for p in parts[start + 1 :])


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
    step = _step(messages)
    for i in range(WORDS):
        await asyncio.sleep(DELAY)
        yield f"s{step}w{i} "
    if step == 0:
        yield {0: DeltaToolCall(name="lookup", json_args=json.dumps({"topic": "tides"}), tool_call_id="call-lookup")}
    elif step == 1:
        yield {
            0: DeltaToolCall(name="write_note", json_args=json.dumps({"text": "high tide"}), tool_call_id="call-write")
        }


_model_agent = Agent(FunctionModel(stream_function=stream))


@_model_agent.tool_plain
async def lookup(topic: str) -> str:
    """Look a topic up."""
    await asyncio.sleep(DELAY)
    return f"{topic}: twice a day"


@_model_agent.tool_plain
async def write_note(text: str) -> str:
    """Write a note (asks permission first)."""
    return f"noted: {text}"


agent = create_acp_agent(
    _model_agent,
    name="reconnect-pydantic",
    store=os.environ["REPLICA_STORE"],
    permission_policy=PermissionPolicy(ask=("write_note",)),
    coalesce_ms=0,  # every delta its own update: a cut turn must give back the reference's updates one by one
)
