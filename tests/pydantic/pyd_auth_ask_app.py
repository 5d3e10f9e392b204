"""A pydantic-ai agent behind an env-var key or a terminal login (`acme_auth`), with a tool asking the user (stdio)."""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic_acp import ask_user, create_acp_agent, run_acp
from pydantic_ai import Agent, RunContext

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from acme_auth import acme_auth
from pyd_script import Script, call

script = Script([[call("pick_color", id="pick-1")], ["Painted it."]])
agent = Agent(script.model, name="painter", deps_type=type(None))


@agent.tool
async def pick_color(ctx: RunContext[None]) -> str:
    """Ask the user which color to paint with."""
    answer = await ask_user(ctx, "Which color?", choices=["red", "green"])
    return answer.value or answer.outcome


acp_agent = create_acp_agent(agent, store="memory", auth=acme_auth())
"""What `acpkit run` serves (`python` this file serves the same through `run_acp`)."""

if __name__ == "__main__":
    run_acp(agent, store="memory", auth=acme_auth())
