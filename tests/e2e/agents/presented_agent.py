"""A pydantic-ai agent process with `tool_presentation=TOOL_PRESETS` and `show_hooks=True`.

Any prompt: the model calls `write_file` with `{"path": "notes.txt", "content": "new\\n"}` (the tool
writes the file and emits a `FileWritten` event), then answers `Written.`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass

from acpkit_core.runner.tool_presets import TOOL_PRESETS
from pydantic_acp import run_acp
from pydantic_ai import Agent, CustomEvent, RunContext
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel


@dataclass(kw_only=True)
class FileWritten(CustomEvent):
    bytes: int


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
        yield "Written."
        return
    args = '{"path": "notes.txt", "content": "new\\n"}'
    yield {0: DeltaToolCall(name="write_file", json_args=args, tool_call_id="w1")}


agent = Agent(FunctionModel(stream_function=stream), name="presented-agent")


@agent.tool
async def write_file(ctx: RunContext[object], path: str, content: str) -> str:
    """Write a file of the project."""
    with open(os.path.join(os.getcwd(), path), "w", encoding="utf-8") as file:
        file.write(content)
    await ctx.emit(FileWritten(bytes=len(content)))
    return f"wrote {path}"


if __name__ == "__main__":
    run_acp(agent, store="memory", tool_presentation=TOOL_PRESETS, show_hooks=True)
