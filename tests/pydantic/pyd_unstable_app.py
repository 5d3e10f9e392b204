"""A pydantic-ai agent for the unstable surfaces over stdio: a tool (its `name`), the plan tools, a
history processor that compacts (a summary in place of the older messages), and
`max_turn_requests=2` (a limit reached).

Turn 1 writes a plan and calls `look`, then answers; turn 2 finds more than four messages, so the
processor keeps a summary and the last two, and marks the plan's first step done; turn 3 calls
`look` twice, which the third request would exceed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic_acp import run_acp
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

sys.path.insert(0, str(Path(__file__).parent))
from pyd_script import Script, call

SUMMARY = "The user said hello; the agent looked around and found nothing."


def compact(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Past four messages, once: a summary, then the last two."""
    if len(messages) <= 4 or any(isinstance(m, ModelRequest) and SUMMARY in str(m.parts[0]) for m in messages):
        return messages
    return [ModelRequest(parts=[UserPromptPart(SUMMARY)]), *messages[-2:]]


script = Script(
    [
        [
            call("update_plan", '{"steps": [{"content": "look"}, {"content": "report"}]}', id="plan-1"),
            call("look", id="look-1", index=2),
        ],
        ["All clear."],
        [call("update_plan_step", '{"step": 1, "status": "completed"}', id="plan-2")],
        ["Still clear."],
        [call("look", id="look-2")],
        [call("look", id="look-3")],
        ["never reached"],
    ]
)
agent = Agent(script.model, capabilities=[ProcessHistory(compact)])


@agent.tool_plain
def look() -> str:
    """Look around."""
    return "nothing here"


if __name__ == "__main__":
    run_acp(agent, name="unstable", store="memory", max_turn_requests=2, plan_tool=True)
