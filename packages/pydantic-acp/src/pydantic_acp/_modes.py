"""Session modes applied to a pydantic-ai run: which tools the model sees, and the plan tools.

The mode itself (its id, which kinds it hides or asks about) is core's
[`Mode`][acpkit_core.permissions.Mode]; the turn answers `tool_allowed` and `plan_only`. This module
applies the answers to pydantic-ai: a `prepare_tools` filter and, where the model should plan,
the `update_plan` and `update_plan_step` tools, whose calls change the session's plan
(`turn.plan`, core's [`TurnPlan`][acpkit_core.runner.plan.TurnPlan]) instead of showing as tool calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from acpkit_core.runner.plan import PlanStep
from acpkit_core.runner.protocols import Turn
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import FunctionToolset

__all__ = [
    "PLANNING_INSTRUCTIONS",
    "PLAN_OUTPUT_INSTRUCTIONS",
    "PLAN_STEP_TOOL_NAME",
    "PLAN_TOOL_NAME",
    "PLAN_TOOL_NAMES",
    "PlanStep",
    "filter_tools",
    "plan_toolset",
]

PLAN_TOOL_NAME = "update_plan"
"""The name of the plan tool (the whole plan)."""

PLAN_STEP_TOOL_NAME = "update_plan_step"
"""The name of the tool that changes one step of the plan."""

PLAN_TOOL_NAMES = frozenset({PLAN_TOOL_NAME, PLAN_STEP_TOOL_NAME})
"""Both plan tools."""

PLANNING_INSTRUCTIONS = (
    "You are in planning mode: do not change anything. Investigate with the tools you have, then "
    f"write a step-by-step plan with the `{PLAN_TOOL_NAME}` tool and summarise it for the user."
)
"""Instructions added to a run in a plan-only mode."""

PLAN_OUTPUT_INSTRUCTIONS = (
    "You are in planning mode: do not change anything. Investigate with the tools you have, then "
    "answer with the plan: its steps in order, and a short summary for the user."
)
"""Instructions added to a run in a plan-only mode whose answer is the plan (`plan_output=True`)."""


def filter_tools(turn: Turn, tool_defs: Sequence[ToolDefinition], *, keep: frozenset[str]) -> list[ToolDefinition]:
    """The tool definitions the current mode lets the model see (`keep` always stays)."""
    return [d for d in tool_defs if d.name in keep or turn.tool_allowed(d.name, turn.classify_tool(d.name))]


def plan_toolset(turn: Turn) -> FunctionToolset[object]:
    """The plan tools: `update_plan` replaces the plan, `update_plan_step` changes one step of it;
    both change the session's plan (`turn.plan`), which the client shows."""
    toolset = FunctionToolset[object](id="acp-plan")

    async def update_plan(steps: list[PlanStep]) -> str:
        """Replace the plan shown to the user with these steps (always send the complete list)."""
        await turn.plan.set([s.item() for s in steps])
        return f"Plan updated ({len(steps)} steps)."

    async def update_plan_step(
        step: int,
        status: Literal["pending", "in_progress", "completed"] | None = None,
        content: str | None = None,
    ) -> str:
        """Mark progress on one step of the plan (`step` counts from 1), or change its text."""
        count = len(turn.plan.items)
        if not 1 <= step <= count:
            return f"There is no step {step}: the plan has {count} steps. Write the plan with `{PLAN_TOOL_NAME}` first."
        await turn.plan.update(step - 1, status=status, content=content)
        return f"Step {step} updated."

    toolset.add_function(update_plan, name=PLAN_TOOL_NAME)
    toolset.add_function(update_plan_step, name=PLAN_STEP_TOOL_NAME)
    return toolset
