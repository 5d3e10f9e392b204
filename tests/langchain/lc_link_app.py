"""A LangChain graph whose tool asks the user to open a link (URL elicitation), with a fallback (stdio)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

from acpkit_core.runner.protocols import current_turn
from langchain.agents import create_agent
from langchain_acp import ask_user, run_acp
from langchain_core.tools import InjectedToolCallId, tool

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from fake_model import Call, FakeChatModel, Reply
from link_fallback import explain


@tool
async def connect(tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Connect the user's ACME account (they sign in in their browser)."""
    answer = await ask_user(
        "Connect your ACME account", url="https://acme.example/connect?flow=1", tool_call_id=tool_call_id
    )
    if answer.answered and answer.elicitation_id is not None:
        turn = current_turn()
        assert turn is not None
        await turn.complete_url(answer.elicitation_id)  # the sign-in is over: the editor may close its dialog
    return f"{answer.outcome} via {answer.via}"


model = FakeChatModel(script=[Reply(calls=[Call("connect", {}, "connect-1")]), Reply(text="Connected.")])
graph = create_agent(model, tools=[connect])

if __name__ == "__main__":
    run_acp(graph, name="connector", store="memory", ask_fallback=explain)
