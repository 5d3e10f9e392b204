"""A JSON-RPC message whose JSON text is made once, for the log and the wire alike.

A served turn's update (`acpkit serve`) is written twice: to the session's update log, for a
client that reconnects, and to the client. Encoding it once and splicing that text into both
saves one JSON encoding of each update ([`Outbox`][acpkit_core.server.outbox.Outbox] does it).
"""

from __future__ import annotations

import json
from typing import Any

import pydantic_core

__all__ = ["EncodedMessage", "encode_json", "encoded"]


class EncodedMessage(dict[str, Any]):
    """A message (the dict every reader on the way sees) and its compact JSON `text`, made once
    ([`encoded`][acpkit_core.server.encoded.encoded] makes one).

    The transports that write JSON write `text` rather than encode the dict again; a transport that
    does not know this class encodes the dict, which reads as the same JSON.
    """

    __slots__ = ("text",)
    text: str
    """The message as compact JSON."""


def encoded(text: str, **message: Any) -> EncodedMessage:
    """The message of fields `message` whose JSON is `text`."""
    made = EncodedMessage(message)
    made.text = text
    return made


def encode_json(value: object) -> str:
    """`value` as compact JSON text. pydantic-core's encoder, several times faster than `json.dumps`;
    what it cannot encode (a lone surrogate from a model) goes through `json.dumps`, which escapes it."""
    try:
        return pydantic_core.to_json(value).decode("utf-8")
    except pydantic_core.PydanticSerializationError:
        return json.dumps(value, separators=(",", ":"))
