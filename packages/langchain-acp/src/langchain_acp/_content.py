"""ACP content <-> LangChain message content.

Forward (prompt -> model input): `part_to_content` renders one IR part, and one public converter
per ACP block type (`text_block_to_content`, `image_block_to_content`, `audio_block_to_content`,
`resource_link_to_content`, `embedded_resource_to_content`) validates a single ACP block and
renders it. Each returns a list of LangChain content dicts.

| part | `blocks="legacy"` | `blocks="v1"` |
|---|---|---|
| `Text` | `{"type": "text", "text": ...}` | same |
| `ContextRef` | text: the context wrapper | same |
| `Link` | text: the resource description | same |
| `Binary`, image | `image_url` with `data:<mime>;base64,<data>` | `{"type": "image", "base64", "mime_type"}` |
| `Binary`, audio | `{"type": "audio", "base64", "mime_type"}` | same |
| `Binary`, other blob | text: the binary summary (URI, type, size) | `{"type": "file", "base64", "mime_type"}` |

The base64 text is passed on exactly as the client sent it: never decoded, never re-encoded.
A part's ACP `annotations` are kept on its blocks as `extras["annotations"]`.

Backward (model output -> ACP): `to_acp_blocks` maps a message's content (a string or a list of
LangChain blocks) to ACP content blocks, `to_acp_thoughts` picks out its reasoning, and
`to_acp_tool_content` maps a tool's output to ACP tool-call content. Tool-call blocks are never
turned into content: tool calls travel as ACP tool-call updates.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any, Literal, TypeAlias, assert_never, cast

from acp.schema import (
    Annotations,
    AudioContentBlock,
    BlobResourceContents,
    ContentToolCallContent,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from acpkit_core.errors import PromptError
from acpkit_core.prompt.ir import Binary, ContextRef, Link, Part, Text
from acpkit_core.prompt.parse import parse_block
from acpkit_core.prompt.text import binary_summary, context_wrapper, resource_description, uri_name

__all__ = [
    "AcpContentBlock",
    "AnnotationsLike",
    "BlockStyle",
    "ContentDict",
    "RootDir",
    "audio_block_to_content",
    "embedded_resource_to_content",
    "image_block_to_content",
    "part_to_content",
    "resource_link_to_content",
    "text_block_to_content",
    "to_acp_blocks",
    "to_acp_thoughts",
    "to_acp_tool_content",
]

BlockStyle: TypeAlias = Literal["legacy", "v1"]
"""Which LangChain content blocks to emit: the older `image_url` form, or the standard v1 blocks."""

ContentDict: TypeAlias = dict[str, Any]
"""One LangChain content block, as a plain dict."""

AcpContentBlock: TypeAlias = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)
"""An ACP content block model."""

RootDir: TypeAlias = "str | PathLike[str] | None"
"""A workspace root for relative paths in link descriptions, or `None`."""
AnnotationsLike: TypeAlias = "Annotations | Mapping[str, Any] | None"
"""ACP annotations, as a model or as a plain dict."""


def _as_map(value: object) -> Mapping[str, Any] | None:
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


# ---------------------------------------------------------------------------------------------
# IR part -> LangChain content


def _text(text: str) -> ContentDict:
    return {"type": "text", "text": text}


def _binary_to_content(binary: Binary, blocks: BlockStyle) -> list[ContentDict]:
    category = binary.category
    media_type = binary.media_type or "application/octet-stream"
    if category == "audio":
        return [{"type": "audio", "base64": binary.base64, "mime_type": media_type}]
    if category == "image":
        if blocks == "v1":
            return [{"type": "image", "base64": binary.base64, "mime_type": media_type}]
        return [{"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{binary.base64}"}}]
    if blocks == "v1":
        block: ContentDict = {"type": "file", "base64": binary.base64, "mime_type": media_type}
        if binary.uri:
            block["extras"] = {"filename": uri_name(binary.uri)}
        return [block]
    return [_text(binary_summary(binary))]


def _annotated(items: list[ContentDict], annotations: Mapping[str, Any] | None) -> list[ContentDict]:
    """Carry a part's ACP annotations on each of its blocks, in `extras["annotations"]`."""
    if annotations is None:
        return items
    for item in items:
        extras = item.setdefault("extras", {})
        extras["annotations"] = dict(annotations)
    return items


def part_to_content(part: Part, *, blocks: BlockStyle = "legacy", root_dir: RootDir = None) -> list[ContentDict]:
    """Render one IR part as LangChain content dicts (see the module table).

    `root_dir` adds a workspace-relative `path:` line to the description of `file://` links inside it.
    A part's ACP `annotations` (audience, priority, lastModified) ride along as
    `extras["annotations"]` on its blocks (where LangChain keeps metadata that is not the
    provider's), and `to_acp_blocks` reads them back.
    """
    if isinstance(part, Text):
        return _annotated([_text(part.text)], part.annotations)
    if isinstance(part, ContextRef):
        return _annotated([_text(context_wrapper(part))], part.annotations)
    if isinstance(part, Link):
        return _annotated([_text(resource_description(part, root_dir=root_dir))], part.annotations)
    if part.kind == "binary":
        return _annotated(_binary_to_content(part, blocks), part.annotations)
    assert_never(part)


def _convert(block: object, expected: str, blocks: BlockStyle, root_dir: RootDir) -> list[ContentDict]:
    as_map = _as_map(block)
    found: object = as_map.get("type") if as_map is not None else getattr(block, "type", None)
    if found != expected:
        raise PromptError(f"expected a {expected} block", block_type=str(found), field="type")
    return part_to_content(parse_block(block), blocks=blocks, root_dir=root_dir)


def text_block_to_content(
    block: object, *, blocks: BlockStyle = "legacy", root_dir: RootDir = None
) -> list[ContentDict]:
    """Convert an ACP `text` block (model or wire dict)."""
    return _convert(block, "text", blocks, root_dir)


def image_block_to_content(
    block: object, *, blocks: BlockStyle = "legacy", root_dir: RootDir = None
) -> list[ContentDict]:
    """Convert an ACP `image` block: an `image_url` data URL, or a v1 `image` block."""
    return _convert(block, "image", blocks, root_dir)


def audio_block_to_content(
    block: object, *, blocks: BlockStyle = "legacy", root_dir: RootDir = None
) -> list[ContentDict]:
    """Convert an ACP `audio` block: `{"type": "audio", "base64", "mime_type"}`."""
    return _convert(block, "audio", blocks, root_dir)


def resource_link_to_content(
    block: object, *, blocks: BlockStyle = "legacy", root_dir: RootDir = None
) -> list[ContentDict]:
    """Convert an ACP `resource_link` block: a text item with the resource description."""
    return _convert(block, "resource_link", blocks, root_dir)


def embedded_resource_to_content(
    block: object, *, blocks: BlockStyle = "legacy", root_dir: RootDir = None
) -> list[ContentDict]:
    """Convert an ACP `resource` block: the context wrapper for text, image/audio/file/summary for a blob."""
    return _convert(block, "resource", blocks, root_dir)


# ---------------------------------------------------------------------------------------------
# LangChain content -> ACP


def _annotations(value: object) -> Annotations | None:
    if value is None:
        return None
    if isinstance(value, Annotations):
        return value
    if isinstance(value, Mapping):
        try:
            return Annotations.model_validate(value)
        except ValueError:  # not ACP's shape (a pydantic ValidationError): another framework's metadata
            return None
    return None  # a LangChain citation list is not an ACP annotation


def _split_data_url(url: str) -> tuple[str, str] | None:
    if not url.startswith("data:"):
        return None
    header, sep, data = url.partition(",")
    if not sep or not header.endswith(";base64"):
        return None
    return header[5:].split(";", 1)[0] or "application/octet-stream", data


_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"ID3", "audio/mpeg"),
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
    (b"%PDF", "application/pdf"),
)


def _sniff(data: str) -> str | None:
    """The media type a payload's first bytes announce (decoding only its first 16 characters)."""
    try:
        head = binascii.a2b_base64(data[:16])
    except (binascii.Error, ValueError):
        return None
    if head[:4] == b"RIFF" and head[8:12] in (b"WEBP", b"WAVE"):
        return "image/webp" if head[8:12] == b"WEBP" else "audio/wav"
    return next((mime for magic, mime in _SIGNATURES if head.startswith(magic)), None)


def _media_block(kind: str, data: str, mime: str, ann: Annotations | None) -> AcpContentBlock:
    if kind == "audio":
        return AudioContentBlock(type="audio", data=data, mime_type=mime, annotations=ann)
    return ImageContentBlock(type="image", data=data, mime_type=mime, annotations=ann)


def _media(kind: str, block: Mapping[str, Any], ann: Annotations | None) -> list[AcpContentBlock]:
    mime = block.get("mime_type")
    if isinstance(block.get("base64"), str):
        data: str = block["base64"]
        return [_media_block(kind, data, mime or _sniff(data) or f"{kind}/*", ann)]
    url: object = block.get("url")
    if kind == "image" and block.get("type") == "image_url":
        inner: object = block.get("image_url")
        inner_map = _as_map(inner)
        url = inner_map.get("url") if inner_map is not None else inner
    if not isinstance(url, str) or not url:
        return []
    split = _split_data_url(url)
    if split is not None:
        return [_media_block(kind, split[1], mime or split[0], ann)]
    return [ResourceContentBlock(type="resource_link", uri=url, name=uri_name(url), mime_type=mime, annotations=ann)]


def _file(block: Mapping[str, Any], ann: Annotations | None) -> list[AcpContentBlock]:
    extras = _as_map(block.get("extras")) or {}
    filename: object = extras.get("filename")
    url, mime = block.get("url"), block.get("mime_type")
    uri = url if isinstance(url, str) and url and not url.startswith("data:") else str(filename or "attachment")
    if isinstance(block.get("text"), str):
        res = TextResourceContents(uri=uri, text=block["text"], mime_type=mime or "text/plain")
        return [EmbeddedResourceContentBlock(type="resource", resource=res, annotations=ann)]
    data = block.get("base64")
    if not isinstance(data, str) and isinstance(url, str) and (split := _split_data_url(url)):
        mime, data = mime or split[0], split[1]
    if isinstance(data, str):
        blob = BlobResourceContents(uri=uri, blob=data, mime_type=mime)
        return [EmbeddedResourceContentBlock(type="resource", resource=blob, annotations=ann)]
    if isinstance(url, str) and url:
        return [
            ResourceContentBlock(type="resource_link", uri=url, name=uri_name(url), mime_type=mime, annotations=ann)
        ]
    return []


def _one(item: object, ann: Annotations | None) -> list[AcpContentBlock]:
    if isinstance(item, str):
        return [TextContentBlock(type="text", text=item, annotations=ann)] if item else []
    block = _as_map(item)
    if block is None:
        return []
    extras = _as_map(block.get("extras")) or {}
    own = _annotations(block.get("annotations")) or _annotations(extras.get("annotations")) or ann
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return [TextContentBlock(type="text", text=text, annotations=own)] if isinstance(text, str) and text else []
    if kind in ("image", "image_url"):
        return _media("image", block, own)
    if kind == "audio":
        return _media("audio", block, own)
    if kind in ("file", "text-plain"):
        return _file(block, own)
    return []  # reasoning, tool calls, provider-specific blocks: not message content


def _items(content: object) -> Sequence[object]:
    if isinstance(content, str | Mapping):
        return [cast(object, content)]
    if isinstance(content, Sequence):
        return cast("Sequence[object]", content)
    return []


def to_acp_blocks(content: object, *, annotations: AnnotationsLike = None) -> list[AcpContentBlock]:
    """Map LangChain message content to ACP content blocks, in order.

    `content` is a message's `content`: a string, or a list of strings and content dicts. Text
    becomes `text`; `image` / `image_url` and `audio` with base64 (or a data URL) become `image`
    and `audio` blocks carrying the same base64; one with a plain URL becomes a `resource_link`;
    `file` / `text-plain` become embedded resources (or a link). Empty text, reasoning, tool calls
    and provider-specific blocks are left out (see `to_acp_thoughts`).

    `annotations` (ACP annotations) are put on every block; a block's own ACP annotations win
    over them: a dict-valued `annotations`, or `extras["annotations"]` as `render_prompt` leaves
    them (so a prompt's annotations survive the round trip ACP -> LangChain -> ACP).
    """
    ann = _annotations(annotations)
    return [out for item in _items(content) for out in _one(item, ann)]


def to_acp_thoughts(content: object, *, annotations: AnnotationsLike = None) -> list[TextContentBlock]:
    """The reasoning in LangChain message content, as ACP text blocks for `agent_thought_chunk`.

    Reads v1 `reasoning` blocks and the `thinking` blocks some providers emit.
    """
    ann = _annotations(annotations)
    out: list[TextContentBlock] = []
    for item in _items(content):
        block = _as_map(item)
        if block is None:
            continue
        kind = block.get("type")
        text = block.get("reasoning") if kind == "reasoning" else block.get("thinking") if kind == "thinking" else None
        if isinstance(text, str) and text:
            out.append(
                TextContentBlock(type="text", text=text, annotations=_annotations(block.get("annotations")) or ann)
            )
    return out


def to_acp_tool_content(content: object) -> list[ContentToolCallContent]:
    """A tool's output (a `ToolMessage`'s content) as ACP tool-call content.

    Strings and content lists map as in `to_acp_blocks`;
    any other JSON-able value is shown as its JSON text.
    """
    as_map = _as_map(content)
    value: object = content
    if not isinstance(content, str | Sequence) and (as_map is None or "type" not in as_map):
        try:
            value = json.dumps(content, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            value = str(content)
    return [ContentToolCallContent(type="content", content=block) for block in to_acp_blocks(value)]
