"""The `ask_fallback` of both adapters' link test apps: tell the user where to go, in the answer."""

from __future__ import annotations

from acpkit_core.runner.elicitation import Answer, Question
from acpkit_core.runner.protocols import Turn


async def explain(question: Question, turn: Turn) -> Answer | None:
    if question.url is None:
        return None  # choices and text: the built-in permission-style question
    await turn.emit.text(f"Open {question.url} in your browser, then ask me again. ")
    return Answer(outcome="unavailable", via="fallback")
