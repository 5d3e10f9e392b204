"""A LangChain graph behind an env-var key or a terminal login (`acme_auth`), with a tool that asks the user (stdio)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

from langchain.agents import create_agent
from langchain_acp import ask_user, create_acp_agent, run_acp
from langchain_core.tools import InjectedToolCallId, tool

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from acme_auth import acme_auth
from fake_model import Call, FakeChatModel, Reply


@tool
async def pick_color(tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Ask the user which color to paint with."""
    answer = await ask_user("Which color?", choices=["red", "green"], tool_call_id=tool_call_id)
    return answer.value or answer.outcome


model = FakeChatModel(script=[Reply(calls=[Call("pick_color", {}, "pick-1")]), Reply(text="Painted it.")])
graph = create_agent(model, tools=[pick_color])

acp_agent = create_acp_agent(graph, name="painter", store="memory", auth=acme_auth())
"""What `acpkit run` serves (`python` this file serves the same through `run_acp`)."""

if __name__ == "__main__":
    run_acp(graph, name="painter", store="memory", auth=acme_auth())
