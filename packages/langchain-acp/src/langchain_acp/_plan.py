"""`write_todos` items (DeepAgents, `TodoListMiddleware`) as ACP plan entries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from acp.schema import PlanEntryStatus
from acpkit_core.runner.types import PlanItem

__all__ = ["todos_to_plan"]

_TODO_STATUS: Mapping[str, PlanEntryStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "completed": "completed",
    "done": "completed",
}


def todos_to_plan(todos: Sequence[Any]) -> list[PlanItem]:
    """`write_todos` items (`{"content", "status"}` dicts or objects) -> plan entries."""
    plan: list[PlanItem] = []
    for todo in todos:
        fields: Mapping[str, Any] = cast(Mapping[str, Any], todo if isinstance(todo, Mapping) else vars(todo))

        def get(key: str, default: Any = None, fields: Mapping[str, Any] = fields) -> Any:
            return fields.get(key, default)

        content = get("content") or get("title") or get("task")
        if not content:
            continue
        status = _TODO_STATUS.get(str(get("status", "pending")), "pending")
        priority = get("priority", "medium")
        plan.append(
            PlanItem(
                content=str(content),
                status=status,
                priority=priority if priority in ("high", "medium", "low") else "medium",
            )
        )
    return plan
