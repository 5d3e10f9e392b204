"""`ask_user`: a pydantic-ai tool asks the editor's user a question through the running ACP turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acpkit_core.errors import UserError
from acpkit_core.runner.elicitation import Answer, Choice
from acpkit_core.runner.protocols import current_turn
from pydantic_ai.tools import RunContext

__all__ = ["ask_user"]


async def ask_user(
    ctx: RunContext[Any] | None,
    question: str,
    *,
    choices: Sequence[str | Choice] | None = None,
    default: str | None = None,
    url: str | None = None,
    elicitation_id: str | None = None,
) -> Answer:
    """Ask the user `question` from inside a tool: pick one of `choices`, type text when `choices` is
    `None`, or (with `url`) agree to open a link, for a sign-in that must not pass through the editor.

    Pass the tool's `RunContext` (or `None`) so the question is tied to the tool call the editor
    shows. The question goes through `elicitation/create` (form or URL mode) when the client
    supports the mode, else through `ask_fallback` or a permission-style question
    ([`Turn.ask`][acpkit_core.runner.protocols.Turn.ask]); a `session/cancel` answers it `cancelled` at once.
    An accepted link's `Answer.elicitation_id` goes to `current_turn().complete_url(...)` when the
    sign-in is over. Call it from an `async` tool of an agent served by pydantic-acp.

    Raises:
        UserError: No ACP turn is running in this context.
    """
    turn = current_turn()
    if turn is None:
        raise UserError("ask_user: no ACP turn is running here; call it from a tool of an agent served by pydantic-acp")
    tool_call_id = ctx.tool_call_id if ctx is not None else None
    return await turn.ask(
        question, choices=choices, default=default, tool_call_id=tool_call_id, url=url, elicitation_id=elicitation_id
    )
