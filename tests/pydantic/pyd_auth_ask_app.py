"""A pydantic-ai agent behind an env-var authentication method, with a tool that asks the user (stdio)."""

from __future__ import annotations

import sys
from pathlib import Path

from acpkit_core.auth import Authentication, EnvVarMethod
from pydantic_acp import ask_user, run_acp
from pydantic_ai import Agent, RunContext

sys.path.insert(0, str(Path(__file__).parent))
from pyd_script import Script, call

script = Script([[call("pick_color", id="pick-1")], ["Painted it."]])
agent = Agent(script.model, name="painter", deps_type=type(None))


@agent.tool
async def pick_color(ctx: RunContext[None]) -> str:
    """Ask the user which color to paint with."""
    answer = await ask_user(ctx, "Which color?", choices=["red", "green"])
    return answer.value or answer.outcome


if __name__ == "__main__":
    key = EnvVarMethod(id="acme-key", name="ACME API key", vars=["ACME_API_KEY"], implicit=False)
    run_acp(agent, store="memory", auth=Authentication(methods=[key]))
