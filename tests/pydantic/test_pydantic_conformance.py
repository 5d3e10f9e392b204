"""The shared runner conformance suite, run against pydantic-acp with scripted FunctionModels."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from acpkit_core.config import AgentOptions
from acpkit_core.server import AcpAgent
from acpkit_core.testing.conformance import RunnerConformance
from acpkit_core.testing.conformance_memory import AgentFactory
from pydantic_acp import ask_user, create_acp_agent
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel

Chunk = str | dict[int, DeltaToolCall] | dict[int, DeltaThinkingPart]

FIRST_CALL: dict[str, tuple[str, str]] = {
    "tool_ok": ("read_file", '{"path": "notes.txt"}'),
    "tool_fail": ("read_file", '{"path": "missing.txt"}'),
    "permission": ("delete_file", '{"path": "old.txt"}'),
    "cancel_tool": ("slow_tool", "{}"),
    "question": ("pick_color", "{}"),
    "mcp": ("lookup_word", '{"word": "ketchup"}'),  # a tool of the MCP server the client serves over ACP
}


def scripted(scenario: str) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Chunk]:
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
            yield "Tool finished."
        elif scenario == "thought":
            yield {0: DeltaThinkingPart(content="Considering the request.")}
            yield "Done thinking."
        elif scenario in FIRST_CALL:
            name, args = FIRST_CALL[scenario]
            yield {1: DeltaToolCall(name=name, json_args=args, tool_call_id=f"{scenario}-1")}
        elif scenario == "memory":
            said = " ".join(
                str(p.content)
                for m in messages
                if isinstance(m, ModelRequest)
                for p in m.parts
                if isinstance(p, UserPromptPart)
            )
            yield "Your name is Ada." if "Ada" in said and "What is my name" in said else "Nice to meet you."
        else:
            yield "Hello from "
            yield "the agent."

    return FunctionModel(stream_function=stream, model_name=scenario)


def build(scenario: str) -> Agent[None, str]:
    agent = Agent(scripted(scenario), deps_type=type(None))

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file of the project."""
        if path == "missing.txt":
            raise FileNotFoundError(path)
        return "remember the milk\n"

    @agent.tool_plain
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    @agent.tool_plain
    async def slow_tool() -> str:
        """Take a long time."""
        await asyncio.sleep(30)
        return "slow done"

    @agent.tool
    async def pick_color(ctx: RunContext[None]) -> str:
        """Ask the user for a color."""
        answer = await ask_user(ctx, "Which color?", choices=["red", "green"])
        return answer.value or answer.outcome

    return agent


class TestPydanticConformance(RunnerConformance):
    @pytest.fixture
    def agent_factory(self) -> AgentFactory:
        def make(scenario: str, options: AgentOptions) -> AcpAgent:
            return create_acp_agent(build(scenario), **vars(options))

        return make
