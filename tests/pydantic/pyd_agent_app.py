"""An agent process for the end-to-end tests: `python pyd_agent_app.py` serves it over stdio.

Its FunctionModel answers with every user prompt it was sent, so a test can see the history
survive a restart; `read_notes` is a tool that needs approval.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic_acp import run_acp
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel


async def remember(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
    prompts = [
        p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)
    ]
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
        yield "Notes read."
        return
    if prompts[-1] == "read notes":
        yield {0: DeltaToolCall(name="read_notes", json_args="{}", tool_call_id="notes-1")}
        return
    yield "I have heard: "
    yield " | ".join(str(p) for p in prompts)


agent = Agent(FunctionModel(stream_function=remember), name="remembering-agent")


@agent.tool_plain(requires_approval=True)
def read_notes() -> str:
    """Read the notes."""
    return "the notes"


if __name__ == "__main__":
    run_acp(agent)
