"""Prompt IR -> LangChain message content.

`render_prompt` turns a prompt into a list of LangChain content dicts, one or more per part (the
table is in `langchain_acp._content`); `to_human_message` wraps them in a `HumanMessage`, as a plain
string when the prompt is one text block. Nothing here opens a file or fetches a URI, and base64
payloads are passed on as received.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acpkit_core.prompt.ir import Part, Prompt, Text
from langchain_core.messages import HumanMessage

from ._content import BlockStyle, ContentDict, RootDir, part_to_content

__all__ = ["render_prompt", "to_human_message"]


def _kept(prompt: Prompt) -> Sequence[Part]:
    """The parts that are rendered: empty text blocks left out, unless the prompt has nothing else."""
    return prompt.without_empty_text().parts or prompt.parts[:1]


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
    return [item for part in _kept(prompt) for item in part_to_content(part, blocks=blocks, root_dir=root_dir)]


def to_human_message(
    prompt: Prompt, *, blocks: BlockStyle = "legacy", root_dir: RootDir = None, **kwargs: Any
) -> HumanMessage:
    """The prompt as a `HumanMessage` (extra keyword arguments, such as `id`, go to the message).

    A prompt that is one text block (once `render_prompt` has left out empty text blocks), with
    no annotations, becomes `content` as a plain `str`: LangChain's canonical form for text, what
    `state["messages"][-1].content` is expected to be, and cheaper for LangChain to walk again at
    every later model call. Anything else keeps `render_prompt`'s list, unchanged: several text
    blocks are not joined (the boundaries between them would be lost, and no separator is right
    for every prompt), and a resource, link, image, audio or file stays a list even when it
    renders as one text item (a graph can tell an attachment from typed text by the shape). A
    text block with annotations keeps the list too, so the annotations ride along in `extras`.
    """
    content = render_prompt(prompt, blocks=blocks, root_dir=root_dir)
    if len(content) == 1 and content[0].keys() == {"type", "text"}:
        kept = _kept(prompt)
        if len(kept) == 1 and isinstance(kept[0], Text):
            return HumanMessage(content=str(content[0]["text"]), **kwargs)
    items: list[str | dict[Any, Any]] = [*content]
    return HumanMessage(content=items, **kwargs)
