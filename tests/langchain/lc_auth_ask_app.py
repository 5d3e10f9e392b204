"""A LangChain graph behind an env-var authentication method, with a tool that asks the user (stdio)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

from acpkit_core.auth import Authentication, EnvVarMethod
from langchain.agents import create_agent
from langchain_acp import ask_user, run_acp
from langchain_core.tools import InjectedToolCallId, tool

sys.path.insert(0, str(Path(__file__).parent))
from fake_model import Call, FakeChatModel, Reply


@tool
async def pick_color(tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Ask the user which color to paint with."""
    answer = await ask_user("Which color?", choices=["red", "green"], tool_call_id=tool_call_id)
    return answer.value or answer.outcome


model = FakeChatModel(script=[Reply(calls=[Call("pick_color", {}, "pick-1")]), Reply(text="Painted it.")])
graph = create_agent(model, tools=[pick_color])

if __name__ == "__main__":
    key = EnvVarMethod(id="acme-key", name="ACME API key", vars=["ACME_API_KEY"], implicit=False)
    run_acp(graph, name="painter", store="memory", auth=Authentication(methods=[key]))
