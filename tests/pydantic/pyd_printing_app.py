"""An agent process whose tool prints: `python pyd_printing_app.py` serves it with `run_acp`.

The tool writes to stdout three ways (`print`, `sys.stdout.write`, a child process); none of it
may reach the protocol stream. `fail` makes the model raise at once, `noise, then fail` after the tool ran.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator

from pydantic_acp import run_acp
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel


async def model(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
    first = messages[-1]
    for message in reversed(messages):
        if isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts):
            first = message
            break
    prompt = (
        [p.content for p in first.parts if isinstance(p, UserPromptPart)] if isinstance(first, ModelRequest) else []
    )
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
        if prompt == ["noise, then fail"]:
            raise RuntimeError("the model service went down\nafter the tool ran")
        yield "The tool ran."
        return
    if prompt == ["fail"]:
        raise RuntimeError("the model service is down")
    yield {0: DeltaToolCall(name="noisy", json_args="{}", tool_call_id="noisy-1")}


agent = Agent(FunctionModel(stream_function=model), name="printing-agent")


@agent.tool_plain
def noisy() -> str:
    """A tool that prints."""
    print("print() from the tool")
    sys.stdout.write("sys.stdout.write from the tool\n")
    sys.stdout.flush()
    subprocess.run([sys.executable, "-c", "print('a child process of the tool')"], check=True)
    return "done"


if __name__ == "__main__":
    run_acp(agent, store="memory")
