"""`ask_user`: a pydantic-ai tool asks the editor's user a question through the running ACP turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acpkit_core.elicitation import Answer, Choice
from acpkit_core.errors import UserError
from acpkit_core.runner import current_turn
from pydantic_ai.tools import RunContext

__all__ = ["ask_user"]


async def ask_user(
    ctx: RunContext[Any] | None,
    question: str,
    *,
    choices: Sequence[str | Choice] | None = None,
    default: str | None = None,
) -> Answer:
    """Ask the user `question` from inside a tool: pick one of `choices`, or type text when `choices` is `None`.

    Pass the tool's `RunContext` (or `None`) so the question is tied to the tool call the editor
    shows. The question goes through `elicitation/create` when the client supports it, else as a
    permission-style question ([`Turn.ask`][acpkit_core.runner.Turn.ask]); a `session/cancel`
    answers it `cancelled` at once. Call it from an `async` tool of an agent served by pydantic-acp.

    Raises:
        UserError: No ACP turn is running in this context.
    """
    turn = current_turn()
    if turn is None:
        raise UserError("ask_user: no ACP turn is running here; call it from a tool of an agent served by pydantic-acp")
    tool_call_id = ctx.tool_call_id if ctx is not None else None
    return await turn.ask(question, choices=choices, default=default, tool_call_id=tool_call_id)
