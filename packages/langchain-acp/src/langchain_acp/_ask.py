"""`ask_user`: a LangChain tool asks the editor's user a question through the running ACP turn."""

from __future__ import annotations

from collections.abc import Sequence

from acpkit_core.errors import UserError
from acpkit_core.runner.elicitation import Answer, Choice
from acpkit_core.runner.protocols import current_turn

from ._context import current_binding

__all__ = ["ask_user"]


async def ask_user(
    question: str,
    *,
    choices: Sequence[str | Choice] | None = None,
    default: str | None = None,
    tool_call_id: str | None = None,
    url: str | None = None,
    elicitation_id: str | None = None,
) -> Answer:
    """Ask the user `question` from inside a tool: pick one of `choices`, type text when `choices` is
    `None`, or (with `url`) agree to open a link, for a sign-in that must not pass through the editor.

    Pass the tool call's id (an `InjectedToolCallId` argument, or `runtime.tool_call_id`) so the
    question is tied to the call the editor shows. The question goes through `elicitation/create`
    (form or URL mode) when the client supports the mode, else through `ask_fallback` or a
    permission-style question ([`Turn.ask`][acpkit_core.runner.protocols.Turn.ask]); a `session/cancel`
    answers it `cancelled` at once. An accepted link's `Answer.elicitation_id` goes to
    `current_turn().complete_url(...)` when the sign-in is over.
    Call it from an `async` tool of a graph served by langchain-acp (`create_acp_agent` / `run_acp`).

    Raises:
        UserError: No ACP turn is running in this context (for example a hand-built server).
    """
    binding = current_binding.get()
    turn = binding.turn if binding is not None and binding.turn is not None else current_turn()
    if turn is None:
        raise UserError(
            "ask_user: no ACP turn is running here; call it from a tool of a graph served by langchain-acp's "
            "create_acp_agent or run_acp"
        )
    return await turn.ask(
        question, choices=choices, default=default, tool_call_id=tool_call_id, url=url, elicitation_id=elicitation_id
    )
