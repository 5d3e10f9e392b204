"""Access to the prompt parser and its text forms (kept in one place for the server)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ir import Prompt, Text

__all__ = ["parse_prompt", "prompt_title"]

_TITLE_LIMIT = 80


def parse_prompt(blocks: Sequence[Any]) -> Prompt:
    """Parse ACP blocks into the IR (raises `PromptError`)."""
    from ..prompt.parse import parse_prompt as parse

    return parse(blocks)


def prompt_title(prompt: Prompt) -> str | None:
    """A one-line session title from the first prompt, `None` when it has no words."""
    try:
        from ..prompt.text import prompt_text
    except ImportError:  # pragma: no cover - the prompt package is part of core
        text = " ".join(p.text for p in prompt if isinstance(p, Text))
    else:
        text = prompt_text(prompt)
    line = " ".join(text.split())
    if not line:
        return None
    return line if len(line) <= _TITLE_LIMIT else line[: _TITLE_LIMIT - 1].rstrip() + "…"
