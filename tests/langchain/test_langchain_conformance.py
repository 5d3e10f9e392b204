"""The shared runner conformance suite against `langchain_acp` with a scripted fake chat model."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import pytest
from acpkit_core.config import AgentOptions
from acpkit_core.server import AcpAgent
from acpkit_core.testing.conformance import RunnerConformance
from acpkit_core.testing.conformance_memory import AgentFactory
from langchain.agents import create_agent
from langchain_acp import AcpMcpMiddleware, AcpModelMiddleware, AcpPermissionMiddleware, ask_user, create_acp_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import InjectedToolCallId, tool
from lc_helpers import Call, FakeChatModel, Reply, delete_file, read_file, slow_tool

pytestmark = pytest.mark.timeout(60)


def _remember(messages: list[BaseMessage]) -> Reply:
    said = " ".join(str(m.content) for m in messages if isinstance(m, HumanMessage))
    return Reply(text="Your name is Ada." if "Ada" in said and "What is my name" in said else "Noted.")


SCRIPTS: dict[str, list[Any]] = {
    "text": [Reply(text=["Hello ", "from the agent."])],
    "thought": [Reply(reasoning=["Hmm, ", "let me think."], text="Done thinking.")],
    "tool_ok": [Reply(calls=[Call("read_file", {"path": "notes.txt"}, "r1")]), Reply(text="read")],
    "tool_fail": [Reply(calls=[Call("read_file", {"path": "missing.txt"}, "r1")]), Reply(text="missing")],
    "permission": [Reply(calls=[Call("delete_file", {"path": "old.txt"}, "d1")]), Reply(text="ok")],
    "cancel_tool": [Reply(calls=[Call("slow_tool", {}, "s1")])],
    "memory": [_remember],
    "bad_prompt": [Reply(text="ok")],
    "question": [Reply(calls=[Call("pick_color", {}, "q1")]), Reply(text="ok")],
    "mcp": [Reply(calls=[Call("lookup_word", {"word": "ketchup"}, "w1")]), Reply(text="ok")],
}


@tool
async def pick_color(tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Ask the user for a color."""
    answer = await ask_user("Which color?", choices=["red", "green"], tool_call_id=tool_call_id)
    return answer.value or answer.outcome


class TestLangChainConformance(RunnerConformance):
    @pytest.fixture
    def agent_factory(self) -> AgentFactory:
        def make(scenario: str, options: AgentOptions) -> AcpAgent:
            model = FakeChatModel(script=list(SCRIPTS[scenario]), repeat_last=scenario == "memory")
            graph = create_agent(
                model,
                tools=[read_file, delete_file, slow_tool, pick_color],
                middleware=[AcpMcpMiddleware(), AcpModelMiddleware(), AcpPermissionMiddleware()],
            )
            return create_acp_agent(graph, **{f.name: getattr(options, f.name) for f in dataclasses.fields(options)})

        return make
