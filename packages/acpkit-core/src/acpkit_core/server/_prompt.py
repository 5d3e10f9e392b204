"""Access to the prompt parser and its text forms (kept in one place for the server).

Also what the server derives from client or model text for display (a session's title, a failed
turn's one-line cause): [`display_line`][acpkit_core.server._prompt.display_line] removes terminal
escape sequences (`ESC [ 2 J`, `ESC ] 0 ; title BEL`), control characters (C0, DEL, C1) and
bidirectional overrides, so a title cannot clear a screen, retitle a window or reorder text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel

from ..errors import PromptError
from ..limits import MAX_PROMPT_BYTES, format_size
from ..prompt.ir import Prompt, Text

__all__ = ["check_prompt_size", "display_line", "parse_prompt", "prompt_size", "prompt_title"]

_TITLE_LIMIT = 80

_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: ESC [ ... final byte (colours, cursor, clear screen)
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC strings
    r"|\x1b[ -~]?"  # any other escape
)
_INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def display_line(text: str, limit: int) -> str:
    """`text` as one line safe to show anywhere: no escape sequences, no control characters,
    whitespace runs made one space, at most `limit` characters (an ellipsis marks a cut)."""
    line = " ".join(_ESCAPE.sub("", text).split())
    line = _INVISIBLE.sub("", line)
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def parse_prompt(blocks: object) -> Prompt:
    """Parse ACP blocks (wire JSON or SDK models) into the IR (raises `PromptError`)."""
    from ..prompt.parse import parse_prompt as parse

    return parse(blocks)


def _size(value: object) -> int:
    """UTF-8 bytes of every string in `value` (block dicts or SDK models, nested)."""
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, Mapping):
        return sum(_size(v) for v in value.values())  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, list | tuple):
        return sum(_size(v) for v in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, BaseModel):
        return sum(_size(v) for v in value.__dict__.values())
    return 0


def prompt_size(blocks: object) -> int:
    """UTF-8 bytes of the text, data and resource content of a prompt's blocks: what the size limit counts."""
    return _size(blocks)


def check_prompt_size(size: int, configured: int | None) -> None:
    """Refuse a prompt whose text, data and resource content (`size`, from `prompt_size`) exceed the limit.

    Raises `PromptError` (-32602) naming the size, the limit and how to raise it.
    """
    limit = MAX_PROMPT_BYTES.value(configured)
    if size > limit:
        raise PromptError(f"{format_size(size)} {MAX_PROMPT_BYTES.over(limit)}", field=None)


def prompt_title(prompt: Prompt, limit: int = _TITLE_LIMIT) -> str | None:
    """A one-line session title from the first prompt (at most `limit` characters), `None` when it has no words."""
    try:
        from ..prompt.text import prompt_text
    except ImportError:  # pragma: no cover - the prompt package is part of core
        text = " ".join(p.text for p in prompt if isinstance(p, Text))
    else:
        text = prompt_text(prompt)
    return display_line(text, limit) or None
