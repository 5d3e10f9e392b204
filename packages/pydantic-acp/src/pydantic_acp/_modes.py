"""Session modes applied to a pydantic-ai run: which tools the model sees, and the plan tool.

The mode itself (its id, which kinds it hides or asks about) is core's
[`Mode`][acpkit_core.config.Mode]; the turn answers `tool_allowed` and `plan_only`. This module
applies the answers to pydantic-ai: a `prepare_tools` filter and, where the model should plan,
an `update_plan` tool whose calls become ACP `plan` updates instead of tool calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from acpkit_core.runner import PlanItem, Turn
from pydantic import BaseModel, Field
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import FunctionToolset

__all__ = ["PLANNING_INSTRUCTIONS", "PLAN_TOOL_NAME", "PlanStep", "filter_tools", "plan_toolset"]

PLAN_TOOL_NAME = "update_plan"
"""The name of the plan tool."""

PLANNING_INSTRUCTIONS = (
    "You are in planning mode: do not change anything. Investigate with the tools you have, then "
    f"write a step-by-step plan with the `{PLAN_TOOL_NAME}` tool and summarise it for the user."
)
"""Instructions added to a run in a plan-only mode."""


class PlanStep(BaseModel):
    """One step of the plan, as the model writes it."""

    content: str = Field(description="What the step does.")
    """What the step does."""
    status: Literal["pending", "in_progress", "completed"] = "pending"
    """Progress of the step."""
    priority: Literal["high", "medium", "low"] = "medium"
    """How important the step is."""


def filter_tools(turn: Turn, tool_defs: Sequence[ToolDefinition], *, keep: frozenset[str]) -> list[ToolDefinition]:
    """The tool definitions the current mode lets the model see (`keep` always stays)."""
    return [d for d in tool_defs if d.name in keep or turn.tool_allowed(d.name, turn.classify_tool(d.name))]


def plan_toolset(turn: Turn) -> FunctionToolset[object]:
    """A toolset with one tool, `update_plan`, whose calls are sent to the client as the plan."""
    toolset = FunctionToolset[object](id="acp-plan")

    async def update_plan(steps: list[PlanStep]) -> str:
        """Replace the plan shown to the user with these steps (always send the complete list)."""
        await turn.emit.plan([PlanItem(content=s.content, status=s.status, priority=s.priority) for s in steps])
        return f"Plan updated ({len(steps)} steps)."

    toolset.add_function(update_plan, name=PLAN_TOOL_NAME)
    return toolset
