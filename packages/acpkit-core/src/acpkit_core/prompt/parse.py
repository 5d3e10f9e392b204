"""ACP content blocks -> `Prompt`.

`parse_prompt` accepts `acp.schema` content block models or the plain JSON dicts of the wire,
validates them strictly and returns the IR. Every refusal is a `PromptError` naming the block,
its type, the field and the reason, for example
`prompt[2] (image): data: not valid base64 (at character 17)`.

The parser only looks at the blocks: it never opens a file, runs a command or fetches a URI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic import BaseModel

from ..errors import PromptError
from .ir import Binary, ContextRef, JsonObject, Link, Part, Prompt, Text
from .media import guess_media_type, is_textual
from .text import uri_name

__all__ = [
    "BLOCK_TYPES",
    "base64_fault",
    "base64_problem",
    "binary_text_note",
    "looks_like_lost_binary",
    "parse_block",
    "parse_prompt",
]

BLOCK_TYPES: Final = ("text", "image", "audio", "resource_link", "resource")
"""The ACP content block types a prompt may contain."""

_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_CHUNK: Final = 1 << 20


def base64_fault(value: str) -> tuple[int, str] | None:
    """Where and why `value` is not strict base64: `(index, reason)`, or `None` when it is valid.

    Strict means: only the standard alphabet (`A-Z a-z 0-9 + /`), no whitespace, a length that is a
    multiple of four, and at most two `=` of padding at the very end. The index is 0-based (the
    length of `value` when only the length is wrong).

    One pass over the text in 1 MiB chunks (encode + `bytes.translate`, both in C); nothing is
    decoded and nothing of the payload's size is kept.
    """
    n = len(value)
    body_end = n - 2 if value.endswith("==") else n - 1 if value.endswith("=") else n
    for start in range(0, body_end, _CHUNK):
        chunk = value[start : min(start + _CHUNK, body_end)]
        try:
            leftover = chunk.encode("ascii").translate(None, _ALPHABET)
        except UnicodeEncodeError as exc:
            return start + exc.start, f"at character {start + exc.start}"
        if leftover:
            index = start + chunk.index(chr(leftover[0]))
            return index, f"at character {index}"
    if n % 4:
        return n, f"length {n} is not a multiple of 4"
    return None


def base64_problem(value: str) -> str | None:
    """Why `value` is not strict base64 (`not valid base64 (at character 17)`), or `None` when it is."""
    fault = base64_fault(value)
    return None if fault is None else f"not valid base64 ({fault[1]})"


def looks_like_lost_binary(text: str) -> bool:
    """True when `text` shows the marks of binary bytes forced through a text decoder.

    That is: a U+FFFD replacement character or a NUL. Only consulted for an embedded *text*
    resource whose media type is not textual (a PNG sent as text, as Toad does).
    """
    return "\ufffd" in text or "\x00" in text


def binary_text_note(media_type: str) -> str:
    """The note on the `Link` that replaces a binary file sent as text."""
    return (
        f"the client sent this {media_type} file as text; its binary content did not survive "
        "that conversion and is not included"
    )


_JSON_TYPE_NAMES: Final[dict[type, str]] = {
    type(None): "null",
    bool: "boolean",
    int: "number",
    float: "number",
    str: "string",
    list: "array",
    tuple: "array",
    dict: "object",
}


def _json_type(value: object) -> str:
    for cls, name in _JSON_TYPE_NAMES.items():
        if isinstance(value, cls):
            return name
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


class _Block:
    """Field access on one block dict, raising a PromptError that names the block."""

    __slots__ = ("data", "index", "type")

    def __init__(self, data: Mapping[str, Any], index: int, block_type: str) -> None:
        self.data = data
        self.index = index
        self.type = block_type

    def error(self, reason: str, field: str | None = None) -> PromptError:
        return PromptError(reason, index=self.index, block_type=self.type, field=field)

    def required_str(self, data: Mapping[str, Any], key: str, field: str, *, non_empty: bool = False) -> str:
        if key not in data:
            raise self.error("missing required field", field)
        value = data[key]
        if not isinstance(value, str):
            raise self.error(f"expected a string, got {_json_type(value)}", field)
        if non_empty and not value:
            raise self.error("must not be empty", field)
        return value

    def optional_str(self, data: Mapping[str, Any], key: str, field: str) -> str | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(f"expected a string, got {_json_type(value)}", field)
        return value or None

    def optional_object(self, data: Mapping[str, Any], key: str, field: str) -> JsonObject | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.error(f"expected an object, got {_json_type(value)}", field)
        return value  # pyright: ignore[reportUnknownVariableType]

    def optional_size(self, data: Mapping[str, Any], key: str, field: str) -> int | None:
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"expected a non-negative integer, got {_json_type(value)}", field)
        if value < 0:
            raise self.error(f"expected a non-negative integer, got {value}", field)
        return value

    def base64(self, data: Mapping[str, Any], key: str, field: str) -> str:
        value = self.required_str(data, key, field)
        problem = base64_problem(value)
        if problem is not None:
            raise self.error(problem, field)
        return value


def _parse_text(b: _Block) -> Part:
    d = b.data
    return Text(
        text=b.required_str(d, "text", "text"),
        annotations=b.optional_object(d, "annotations", "annotations"),
        meta=b.optional_object(d, "_meta", "_meta"),
    )


def _parse_media(b: _Block) -> Part:
    d = b.data
    media_type = b.required_str(d, "mimeType", "mimeType", non_empty=True)
    data = b.base64(d, "data", "data")
    if not data:
        raise b.error("must not be empty", "data")
    return Binary(
        base64=data,
        media_type=media_type,
        source="image" if b.type == "image" else "audio",
        uri=b.optional_str(d, "uri", "uri"),
        annotations=b.optional_object(d, "annotations", "annotations"),
        meta=b.optional_object(d, "_meta", "_meta"),
    )


def _parse_link(b: _Block) -> Part:
    d = b.data
    uri = b.required_str(d, "uri", "uri", non_empty=True)
    name = b.required_str(d, "name", "name")
    return Link(
        uri=uri,
        name=name or uri_name(uri),
        title=b.optional_str(d, "title", "title"),
        description=b.optional_str(d, "description", "description"),
        media_type=b.optional_str(d, "mimeType", "mimeType") or guess_media_type(uri),
        size=b.optional_size(d, "size", "size"),
        annotations=b.optional_object(d, "annotations", "annotations"),
        meta=b.optional_object(d, "_meta", "_meta"),
    )


def _parse_resource(b: _Block) -> Part:
    d = b.data
    if "resource" not in d:
        raise b.error("missing required field", "resource")
    res = d["resource"]
    if not isinstance(res, Mapping):
        raise b.error(f"expected an object, got {_json_type(res)}", "resource")
    annotations = b.optional_object(d, "annotations", "annotations")
    meta = b.optional_object(d, "_meta", "_meta")
    has_text, has_blob = "text" in res, "blob" in res
    if has_text and has_blob:
        raise b.error("has both text and blob; expected exactly one", "resource")
    if not has_text and not has_blob:
        raise b.error("missing required field (a resource needs text or blob)", "resource.text")
    uri = b.required_str(res, "uri", "resource.uri", non_empty=True)  # pyright: ignore[reportUnknownArgumentType]
    media_type = b.optional_str(res, "mimeType", "resource.mimeType") or guess_media_type(uri)  # pyright: ignore[reportUnknownArgumentType]
    resource_meta = b.optional_object(res, "_meta", "resource._meta")  # pyright: ignore[reportUnknownArgumentType]
    if has_blob:
        return Binary(
            base64=b.base64(res, "blob", "resource.blob"),  # pyright: ignore[reportUnknownArgumentType]
            media_type=media_type,
            source="blob",
            uri=uri,
            annotations=annotations,
            meta=meta,
            resource_meta=resource_meta,
        )
    text = b.required_str(res, "text", "resource.text")  # pyright: ignore[reportUnknownArgumentType]
    if media_type is not None and not is_textual(media_type) and looks_like_lost_binary(text):
        return Link(
            uri=uri,
            name=uri_name(uri),
            media_type=media_type,
            annotations=annotations,
            meta=meta,
            resource_meta=resource_meta,
            note=binary_text_note(media_type),
        )
    return ContextRef(
        uri=uri,
        text=text,
        media_type=media_type,
        annotations=annotations,
        meta=meta,
        resource_meta=resource_meta,
    )


_PARSERS: Final = {
    "text": _parse_text,
    "image": _parse_media,
    "audio": _parse_media,
    "resource_link": _parse_link,
    "resource": _parse_resource,
}


def _as_mapping(block: object, index: int) -> Mapping[str, Any]:
    if isinstance(block, BaseModel):
        return block.model_dump(by_alias=True, exclude_unset=True)
    if isinstance(block, Mapping):
        return block  # pyright: ignore[reportUnknownVariableType]
    raise PromptError(f"expected a content block object, got {_json_type(block)}", index=index)


def parse_block(block: object, index: int = 0) -> Part:
    """Parse one content block (an `acp.schema` model or a wire dict) into its IR part.

    `index` is only used in error messages. Raises
    `PromptError` when the block is not acceptable.
    """
    data = _as_mapping(block, index)
    if "type" not in data:
        raise PromptError("missing required field", index=index, field="type")
    block_type = data["type"]
    if not isinstance(block_type, str):
        raise PromptError(f"expected a string, got {_json_type(block_type)}", index=index, field="type")
    parser = _PARSERS.get(block_type)
    if parser is None:
        raise PromptError(
            f"unknown content block type; expected one of {', '.join(BLOCK_TYPES)}",
            index=index,
            block_type=block_type,
            field="type",
        )
    return parser(_Block(data, index, block_type))


def parse_prompt(blocks: object) -> Prompt:
    """Turn an ACP prompt (a list of content blocks) into a `Prompt`.

    `blocks` may hold `acp.schema` content block models or plain JSON dicts, mixed. Each block
    becomes one part, in order; nothing is dropped:

    | ACP block | part |
    |---|---|
    | `text` | `Text` |
    | `image`, `audio` | `Binary` (`source` `image` / `audio`) |
    | `resource` with `blob` | `Binary` (`source` `blob`) |
    | `resource` with `text` | `ContextRef` |
    | `resource_link` | `Link` |

    `annotations` and `_meta` are kept as received. A missing media type on a link or resource is
    inferred from the URI's extension (`guess_media_type`). Base64 payloads are validated here,
    once, and not decoded.

    An embedded *text* resource whose media type is not textual and whose text carries the marks
    of lost bytes (U+FFFD or NUL: a PNG a client decoded as UTF-8) becomes a `Link` to its URI
    with a `note` saying the binary content did not survive the client, so that garbage never
    reaches a model as the file.

    Raises:
        PromptError: `blocks` is not a list, or a block is malformed: unknown type, missing
            required field, wrong field type, invalid base64, empty `mimeType` on an image or audio.
    """
    if isinstance(blocks, str | bytes | bytearray | Mapping) or not isinstance(blocks, Sequence):
        kind = _json_type(blocks)  # pyright: ignore[reportUnknownArgumentType]
        raise PromptError(f"expected a list of content blocks, got {kind}")
    return Prompt(tuple(parse_block(block, i) for i, block in enumerate(blocks)))  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
