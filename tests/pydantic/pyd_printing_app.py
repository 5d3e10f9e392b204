"""An agent process whose tool prints: `python pyd_printing_app.py` serves it with `run_acp`.

The tool writes to stdout three ways (`print`, `sys.stdout.write`, a child process); none of it
may reach the protocol stream. `fail` makes the model raise.
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
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
        yield "The tool ran."
        return
    prompt = [p.content for p in last.parts if isinstance(p, UserPromptPart)] if isinstance(last, ModelRequest) else []
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
