"""The neutral intermediate representation of an ACP prompt.

A [`Prompt`][acpkit_core.prompt.ir.Prompt] is an immutable sequence of parts. Each part is a frozen
dataclass with a literal `kind` discriminator:

| part | from ACP | carries |
|---|---|---|
| [`Text`][acpkit_core.prompt.ir.Text] | `text` | the text |
| [`Binary`][acpkit_core.prompt.ir.Binary] | `image`, `audio`, embedded `blob` resource | base64 payload as received |
| [`Link`][acpkit_core.prompt.ir.Link] | `resource_link`, lost binary text | uri, name, title, description, type, size |
| [`ContextRef`][acpkit_core.prompt.ir.ContextRef] | embedded `text` resource | uri, text, media type |

Every part keeps the block's `annotations` and `_meta` as plain JSON.
"""

from __future__ import annotations

import binascii
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, overload

__all__ = ["Binary", "BinarySource", "ContextRef", "JsonObject", "Link", "Part", "Prompt", "Text"]

JsonObject: TypeAlias = Mapping[str, Any]
"""A JSON object as received on the wire (annotations, `_meta`)."""

BinarySource: TypeAlias = Literal["image", "audio", "blob"]
"""Which ACP block a [`Binary`][acpkit_core.prompt.ir.Binary] came from."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Text:
    """Plain text typed by the user (ACP `text` block)."""

    text: str
    """The text, exactly as received."""
    annotations: JsonObject | None = None
    """The block's `annotations`, as received."""
    meta: JsonObject | None = None
    """The block's `_meta`, as received."""
    kind: Literal["text"] = "text"
    """Discriminator."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Binary:
    """Binary content: an `image` or `audio` block, or an embedded `blob` resource.

    The payload is kept as the base64 text the client sent. It was validated once by the parser
    (strict alphabet and padding); [`data`][acpkit_core.prompt.ir.Binary.data] decodes it lazily, at most once.
    """

    base64: str
    """The payload, base64 text exactly as received (validated, never re-encoded)."""
    media_type: str | None
    """The media type (`image/png`); `None` when neither the block nor the URI tells."""
    source: BinarySource
    """Which ACP block this came from."""
    uri: str | None = None
    """The URI of the resource or image, when the client sent one."""
    annotations: JsonObject | None = None
    """The block's `annotations` (for a blob: the resource block's)."""
    meta: JsonObject | None = None
    """The block's `_meta` (for a blob: the resource block's)."""
    resource_meta: JsonObject | None = None
    """For an embedded blob, the `_meta` of the inner resource."""
    kind: Literal["binary"] = "binary"
    """Discriminator."""
    _decoded: list[bytes] = field(default_factory=list[bytes], init=False, repr=False, compare=False)

    @property
    def data(self) -> bytes:
        """The decoded bytes, decoded on first access and kept."""
        if not self._decoded:
            # a2b_base64 reads an ASCII str in place: no intermediate bytes copy of the payload.
            self._decoded.append(binascii.a2b_base64(self.base64, strict_mode=True))
        return self._decoded[0]

    @property
    def size(self) -> int:
        """Size of the decoded payload in bytes, computed from the base64 length without decoding."""
        n = len(self.base64)
        if n == 0:
            return 0
        padding = 2 if self.base64.endswith("==") else 1 if self.base64.endswith("=") else 0
        return n // 4 * 3 - padding

    @property
    def category(self) -> Literal["image", "audio", "other"]:
        """`image` or `audio` by source or media type, else `other`."""
        if self.source == "image" or (self.media_type or "").startswith("image/"):
            return "image"
        if self.source == "audio" or (self.media_type or "").startswith("audio/"):
            return "audio"
        return "other"


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """A reference to a resource the agent can reach (ACP `resource_link` block).

    Also produced for an embedded text resource whose text is not usable as the file's content
    (a binary file that a client decoded as text): then [`note`][acpkit_core.prompt.ir.Link.note] says so.
    """

    uri: str
    """The resource's URI, as received."""
    name: str
    """The block's `name`, or a name derived from the URI when the block had none."""
    title: str | None = None
    """Human-readable title."""
    description: str | None = None
    """Description of the resource."""
    media_type: str | None = None
    """Media type from the block, else inferred from the URI's extension, else `None`."""
    size: int | None = None
    """Size in bytes, when the client sent it."""
    annotations: JsonObject | None = None
    """The block's `annotations`, as received."""
    meta: JsonObject | None = None
    """The block's `_meta`, as received."""
    resource_meta: JsonObject | None = None
    """When this link stands in for an embedded resource, the `_meta` of the inner resource."""
    note: str | None = None
    """Why this link stands in for content the client tried to embed, when it does."""
    kind: Literal["link"] = "link"
    """Discriminator."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextRef:
    """An attachment's text, embedded by the client (ACP `resource` block with `text`)."""

    uri: str
    """The resource's URI, as received."""
    text: str
    """The attached text, exactly as received."""
    media_type: str | None = None
    """Media type from the block, else inferred from the URI's extension, else `None`."""
    annotations: JsonObject | None = None
    """The resource block's `annotations`, as received."""
    meta: JsonObject | None = None
    """The resource block's `_meta`, as received."""
    resource_meta: JsonObject | None = None
    """The inner resource's `_meta`, as received."""
    kind: Literal["context"] = "context"
    """Discriminator."""


Part: TypeAlias = Text | Binary | Link | ContextRef
"""One part of a [`Prompt`][acpkit_core.prompt.ir.Prompt]."""


@dataclass(frozen=True, slots=True)
class Prompt(Sequence[Part]):
    """An immutable sequence of prompt parts, in the order the client sent them."""

    parts: tuple[Part, ...] = ()
    """The parts."""

    @overload
    def __getitem__(self, index: int) -> Part: ...
    @overload
    def __getitem__(self, index: slice) -> Prompt: ...
    def __getitem__(self, index: int | slice) -> Part | Prompt:
        if isinstance(index, slice):
            return Prompt(self.parts[index])
        return self.parts[index]

    def __len__(self) -> int:
        return len(self.parts)

    def __iter__(self) -> Iterator[Part]:
        return iter(self.parts)

    @property
    def is_text_only(self) -> bool:
        """True when every part is [`Text`][acpkit_core.prompt.ir.Text]."""
        return all(isinstance(p, Text) for p in self.parts)

    def without_empty_text(self) -> Prompt:
        """This prompt without its empty text blocks, which every adapter leaves out when it renders
        a prompt (some providers refuse an empty text part, and it carries nothing). Empty when the
        prompt holds nothing but empty text: each adapter says what such a prompt becomes."""
        return Prompt(tuple(p for p in self.parts if not (isinstance(p, Text) and not p.text)))
