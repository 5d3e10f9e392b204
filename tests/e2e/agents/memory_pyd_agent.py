"""A pydantic-ai agent process that answers with every prompt it remembers; some prompts hang mid-turn.

- any prompt: streams `turn N: p1 | p2 | ...` (the user prompts in the model's history, this one last);
- a prompt starting `hang`: streams five chunks `part 0 ` ... `part 4 ` then waits forever;
- a prompt starting `tool-hang`: calls the tool `wait_forever`, which never returns.

`$MEMORY_AGENT_WRITE_WINDOW_MS`, when set, is its `write_window_ms`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

from pydantic_acp import run_acp
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel


def _prompts(messages: list[ModelMessage]) -> list[str]:
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    said = _prompts(messages)
    last = said[-1] if said else ""
    answered = any(isinstance(p, ToolReturnPart) for p in messages[-1].parts) if messages else False
    if last.startswith("tool-hang") and not answered:
        yield {0: DeltaToolCall(name="wait_forever", json_args="{}", tool_call_id="call-hang")}
        return
    if last.startswith("hang"):
        for i in range(5):
            yield f"part {i} "
        await asyncio.Event().wait()
    yield f"turn {len(said)}: " + " | ".join(said)


agent = Agent(FunctionModel(stream_function=stream, model_name="memory"))


@agent.tool_plain
async def wait_forever() -> str:
    """Never returns."""
    await asyncio.Event().wait()
    return "never"


if __name__ == "__main__":
    window = os.environ.get("MEMORY_AGENT_WRITE_WINDOW_MS")
    if window:
        run_acp(agent, name="memory-agent", write_window_ms=float(window))
    else:
        run_acp(agent, name="memory-agent")
