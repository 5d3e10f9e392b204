"""A pydantic-ai agent whose tool asks the user to open a link (URL elicitation), with a fallback (stdio)."""

from __future__ import annotations

import sys
from pathlib import Path

from acpkit_core.runner.protocols import current_turn
from pydantic_acp import ask_user, run_acp
from pydantic_ai import Agent, RunContext

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from link_fallback import explain
from pyd_script import Script, call

script = Script([[call("connect", id="connect-1")], ["Connected."]])
agent = Agent(script.model, name="connector", deps_type=type(None))


@agent.tool
async def connect(ctx: RunContext[None]) -> str:
    """Connect the user's ACME account (they sign in in their browser)."""
    answer = await ask_user(ctx, "Connect your ACME account", url="https://acme.example/connect?flow=1")
    if answer.answered and answer.elicitation_id is not None:
        turn = current_turn()
        assert turn is not None
        await turn.complete_url(answer.elicitation_id)  # the sign-in is over: the editor may close its dialog
    return f"{answer.outcome} via {answer.via}"


if __name__ == "__main__":
    run_acp(agent, store="memory", ask_fallback=explain)
