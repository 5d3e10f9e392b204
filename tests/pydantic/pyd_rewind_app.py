"""An agent process for the rewind end-to-end test: `python pyd_rewind_app.py` serves it over stdio.

Its FunctionModel writes files through the client's `write_file` tool (`client_tools=True`: every
write is an `fs/write_text_file`) as each prompt asks (`write <path> <content>`, several separated
by `;`), then says what it was sent: every user prompt in its input and how many tool results, so a
test sees exactly which turns the model continues from.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from pydantic_acp import run_acp
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel


def _seen(messages: list[ModelMessage]) -> str:
    prompts = [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]
    writes = sum(isinstance(p, ToolReturnPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts)
    return f"prompts seen: {' | '.join(prompts)} · files written: {writes}"


async def model(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
        yield _seen(messages)
        return
    prompt = next(str(p.content) for p in reversed(last.parts) if isinstance(p, UserPromptPart))
    writes = [w.strip().split(" ", 2) for w in prompt.split(";") if w.strip().startswith("write ")]
    if not writes:
        yield _seen(messages)
        return
    turn = sum(isinstance(m, ModelRequest) for m in messages)
    for i, (_, path, content) in enumerate(writes):
        args = json.dumps({"path": path, "content": content})
        yield {i: DeltaToolCall(name="write_file", json_args=args, tool_call_id=f"write-{turn}-{i}")}


agent = Agent(FunctionModel(stream_function=model), name="rewinding-agent")

if __name__ == "__main__":
    run_acp(agent, client_tools=True)
