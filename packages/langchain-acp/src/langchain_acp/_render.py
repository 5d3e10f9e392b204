"""Prompt IR -> LangChain message content.

`render_prompt` turns a prompt into a list of LangChain content dicts, one or more per part (the
table is in `langchain_acp._content`); `to_human_message` wraps them in a `HumanMessage`. Nothing
here opens a file or fetches a URI, and base64 payloads are passed on as received.
"""

from __future__ import annotations

from typing import Any

from acpkit_core.ir import Prompt, Text
from langchain_core.messages import HumanMessage

from ._content import BlockStyle, ContentDict, RootDir, part_to_content

__all__ = ["render_prompt", "to_human_message"]


def render_prompt(prompt: Prompt, *, blocks: BlockStyle = "legacy", root_dir: RootDir = None) -> list[ContentDict]:
    """Render a prompt as LangChain content dicts, in order.

    Empty text blocks are left out when the prompt has anything else (some providers refuse an
    empty text part); a prompt made only of empty text keeps one empty text item.

    Args:
        prompt: The parsed prompt.
        blocks: `"legacy"` emits `image_url` data URLs for images and a text summary for other
            binary attachments; `"v1"` emits LangChain's standard `image` / `audio` / `file`
            blocks with `base64` and `mime_type`, so a PDF reaches models that read files.
        root_dir: When given (usually the session's cwd), link descriptions also show the
            workspace-relative path of `file://` URIs inside it; the full URI is kept.
    """
    parts = [part for part in prompt if not (isinstance(part, Text) and not part.text)] or prompt.parts[:1]
    return [item for part in parts for item in part_to_content(part, blocks=blocks, root_dir=root_dir)]


def to_human_message(
    prompt: Prompt, *, blocks: BlockStyle = "legacy", root_dir: RootDir = None, **kwargs: Any
) -> HumanMessage:
    """The prompt as a `HumanMessage` (extra keyword arguments, such as `id`, go to the message)."""
    content: list[str | dict[Any, Any]] = [*render_prompt(prompt, blocks=blocks, root_dir=root_dir)]
    return HumanMessage(content=content, **kwargs)
