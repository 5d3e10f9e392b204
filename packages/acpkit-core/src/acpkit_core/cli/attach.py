"""Turn a typed line into ACP prompt blocks: `@path` attaches a file or directory.

Text files become embedded `resource` blocks, images and audio become `image` / `audio` blocks,
directories (and anything the agent cannot take embedded) become `resource_link` blocks. The line
itself is sent as the first `text` block, as typed.
"""

from __future__ import annotations

import base64
import mimetypes
import re
from dataclasses import dataclass, field
from pathlib import Path

from acp.helpers import (
    audio_block,
    embedded_blob_resource,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)
from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    PromptCapabilities,
    ResourceContentBlock,
    TextContentBlock,
)

__all__ = ["MAX_ATTACHMENT_BYTES", "Attached", "ContentBlock", "build_prompt", "find_mentions"]

ContentBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)
"""A prompt block."""

MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024
"""Files larger than this are sent as links, not embedded."""

_MENTION = re.compile(r'(?:(?<=\s)|^)@(?:"([^"]+)"|(\S+))')


@dataclass
class Attached:
    """The prompt built from a line, and what the user should be told about it."""

    blocks: list[ContentBlock]
    """The prompt blocks, text first."""
    notes: list[str] = field(default_factory=list[str])
    """One line per attachment or problem (`attached notes.md (text, 120 bytes)`)."""


def find_mentions(line: str) -> list[str]:
    """The paths mentioned with `@path` or `@"path with spaces"` in `line`, in order."""
    return [m.group(1) or m.group(2) for m in _MENTION.finditer(line)]


def _media_type(path: Path) -> str | None:
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed


def _attach_file(path: Path, caps: PromptCapabilities) -> tuple[ContentBlock, str]:
    uri = path.as_uri()
    size = path.stat().st_size
    media = _media_type(path)
    link = resource_link_block(path.name, uri, mime_type=media, size=size)
    if size > MAX_ATTACHMENT_BYTES:
        return link, f"linked {path.name} (too large to embed: {size} bytes)"
    data = path.read_bytes()
    if media and media.startswith(("image/", "audio/")):
        kind = "image" if media.startswith("image/") else "audio"
        if not (caps.image if kind == "image" else caps.audio):
            return link, f"linked {path.name} (the agent does not take {kind} blocks)"
        payload = base64.b64encode(data).decode("ascii")
        block = image_block(payload, media, uri=uri) if kind == "image" else audio_block(payload, media)
        return block, f"attached {path.name} ({kind}, {size} bytes)"
    if not caps.embedded_context:
        return link, f"linked {path.name} (the agent does not take embedded files)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        blob = embedded_blob_resource(uri, base64.b64encode(data).decode("ascii"), mime_type=media)
        return resource_block(blob), f"attached {path.name} (binary, {size} bytes)"
    embedded = embedded_text_resource(uri, text, mime_type=media or "text/plain")
    return resource_block(embedded), f"attached {path.name} (text, {size} bytes)"


def build_prompt(line: str, *, cwd: Path, caps: PromptCapabilities | None = None) -> Attached:
    """The prompt for `line`: its text, then one block per `@path` that exists (relative paths from `cwd`)."""
    caps = caps or PromptCapabilities()
    result = Attached(blocks=[text_block(line)])
    seen: set[Path] = set()
    for mention in find_mentions(line):
        path = (cwd / Path(mention).expanduser()).resolve()
        if path in seen:
            continue
        seen.add(path)
        if path.is_dir():
            result.blocks.append(
                resource_link_block(path.name or str(path), path.as_uri(), mime_type="inode/directory")
            )
            result.notes.append(f"linked directory {path.name or path}")
        elif path.is_file():
            try:
                block, note = _attach_file(path, caps)
            except OSError as exc:
                result.notes.append(f"cannot read @{mention}: {exc.strerror}")
                continue
            result.blocks.append(block)
            result.notes.append(note)
        else:
            result.notes.append(f"@{mention}: no such file; sent as text")
    return result
