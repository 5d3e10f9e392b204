"""Prompt IR -> pydantic-ai user content.

| part | pydantic-ai content |
|---|---|
| `Text` | `str`, as typed |
| `ContextRef` | `str`: the context wrapper |
| `Binary` (image, audio, blob) | `BinaryContent` with its media type (else `application/octet-stream`) |
| `Link` with no or a textual media type | `str`: the link label `[@name](uri)` (and its note) |
| `Link` typed image / audio / video / other, `http(s)` | `ImageUrl` / `AudioUrl` / `VideoUrl` / `DocumentUrl` |
| `Link` typed, any other scheme (`file://`, `zed://`) | `str`: the link label (pydantic-ai never fetches `file://`) |

A prompt made only of text stays one plain string. Nothing here opens a file or fetches a URI:
URL parts are fetched, if at all, by the model provider.
"""

from __future__ import annotations

from typing import assert_never
from urllib.parse import urlsplit

from acpkit_core.prompt.ir import Binary, ContextRef, Link, Part, Prompt, Text
from acpkit_core.prompt.media import is_textual
from acpkit_core.prompt.text import context_wrapper, link_text
from pydantic_ai.messages import AudioUrl, BinaryContent, DocumentUrl, ImageUrl, UserContent, VideoUrl

__all__ = ["render_part", "render_prompt"]

_FETCHABLE = ("http", "https")


def _fetchable(uri: str) -> bool:
    try:
        return urlsplit(uri).scheme.lower() in _FETCHABLE
    except ValueError:
        return False


def _render_link(link: Link) -> UserContent:
    media_type = link.media_type
    if media_type is None or is_textual(media_type) or link.note is not None or not _fetchable(link.uri):
        return link_text(link)
    top = media_type.split("/", 1)[0].lower()
    if top == "image":
        return ImageUrl(url=link.uri, media_type=media_type)
    if top == "audio":
        return AudioUrl(url=link.uri, media_type=media_type)
    if top == "video":
        return VideoUrl(url=link.uri, media_type=media_type)
    return DocumentUrl(url=link.uri, media_type=media_type)


def _render_binary(binary: Binary) -> UserContent:
    # `binary.data` decodes the validated base64 once and keeps the bytes.
    return BinaryContent(data=binary.data, media_type=binary.media_type or "application/octet-stream")


def render_part(part: Part) -> UserContent:
    """Render one part of the IR as pydantic-ai user content (see the module table)."""
    if isinstance(part, Text):
        return part.text
    if isinstance(part, ContextRef):
        return context_wrapper(part)
    if isinstance(part, Link):
        return _render_link(part)
    if part.kind == "binary":
        return _render_binary(part)
    assert_never(part)


def render_prompt(prompt: Prompt) -> str | list[UserContent]:
    """Render a prompt as the `user_prompt` of `pydantic_ai.Agent.run`.

    A prompt of text only becomes one plain string (its non-empty text blocks joined by a
    newline); any other prompt becomes a list with one item per part, in order, leaving out
    empty text blocks (some providers refuse an empty text part, and it carries nothing).
    """
    kept = prompt.without_empty_text()
    if prompt.is_text_only:
        return "\n".join(part.text for part in kept if isinstance(part, Text))
    return [render_part(part) for part in kept]
