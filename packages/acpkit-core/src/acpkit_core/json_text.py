"""Compact JSON text, for the wire and the stores alike, and messages whose text is made once.

[`json_bytes`][acpkit_core.json_text.json_bytes] is the one encoder every writer of JSON uses:
pydantic-core's, several times faster than `json.dumps` on the thousands of chunks of a streamed
turn; what it cannot encode (a lone surrogate from a model) goes through `json.dumps`, which escapes
it, and what is not JSON at all raises `TypeError`.

A served turn's update (`acpkit serve`) is written twice: to the session's update log, for a client
that reconnects, and to the client. [`EncodedMessage`][acpkit_core.json_text.EncodedMessage] carries
a message's text made once, so the frame reuses the log's encoding of the update.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic_core

__all__ = ["EncodedMessage", "encoded", "json_bytes", "json_text"]


class EncodedMessage(dict[str, Any]):
    """A message (the dict every reader on the way sees) and its compact JSON `text`, made once
    ([`encoded`][acpkit_core.json_text.encoded] makes one).

    [`json_bytes`][acpkit_core.json_text.json_bytes] returns `text` rather than encode the dict
    again; anything else that encodes the dict gets the same JSON.
    """

    __slots__ = ("text",)
    text: str
    """The message as compact JSON."""


def encoded(text: str, **message: Any) -> EncodedMessage:
    """The message of fields `message` whose JSON is `text`."""
    made = EncodedMessage(message)
    made.text = text
    return made


def json_bytes(value: object) -> bytes:
    """`value` as compact UTF-8 JSON (an [`EncodedMessage`][acpkit_core.json_text.EncodedMessage]: its text)."""
    if type(value) is EncodedMessage:
        return value.text.encode("utf-8")
    try:
        return pydantic_core.to_json(value)
    except pydantic_core.PydanticSerializationError:
        return json.dumps(value, separators=(",", ":")).encode("utf-8")


def json_text(value: object) -> str:
    """`value` as compact JSON text."""
    if type(value) is EncodedMessage:
        return value.text
    return json_bytes(value).decode("utf-8")
