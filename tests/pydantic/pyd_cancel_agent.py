"""A pydantic-ai agent process whose scripted model writes one line to `$MODEL_CALLS` per call.

    python pyd_cancel_agent.py TOOL

The model calls TOOL at every request (a new id each time), as a model that keeps trying would:
`delete_file` (the permission policy asks about it), `finishes_anyway` (an async tool that swallows
the cancellation and returns as soon as the turn is cancelled) or `finishes_anyway_sync` (the same
in a worker thread). The LangGraph twin of this agent is `tests/langchain/lc_cancel_agent.py`.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

from acpkit_core.permissions import PermissionPolicy
from acpkit_core.runner.protocols import current_turn
from pydantic_acp import run_acp
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

TOOL = sys.argv[1]
CALLS = Path(os.environ["MODEL_CALLS"])


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    with CALLS.open("a") as calls:
        calls.write("model\n")
    count = len(CALLS.read_text().splitlines())
    yield f"call {count}. "
    yield {0: DeltaToolCall(name=TOOL, json_args='{"path": "a.txt"}', tool_call_id=f"c{count}")}


agent = Agent(FunctionModel(stream_function=stream, model_name="counting"))


def _cancelled() -> bool:
    turn = current_turn()
    return turn is not None and turn.cancelled


@agent.tool_plain
def delete_file(path: str) -> str:
    """Delete a file (pretend)."""
    return f"deleted {path}"


@agent.tool_plain
async def finishes_anyway(path: str) -> str:
    """Works until the turn is cancelled, then returns as if it had finished."""
    deadline = time.monotonic() + 5.0
    while not _cancelled() and time.monotonic() < deadline:
        try:
            await asyncio.sleep(0.005)
        except asyncio.CancelledError:
            continue
    return f"done with {path}"


@agent.tool_plain
def finishes_anyway_sync(path: str) -> str:
    """Works (in a worker thread) until the turn is cancelled, then returns as if it had finished."""
    deadline = time.monotonic() + 5.0
    while not _cancelled() and time.monotonic() < deadline:
        time.sleep(0.005)
    return f"done with {path}"


run_acp(agent, name="cancel-agent", store="memory", permission_policy=PermissionPolicy(ask=("delete_*",)))
