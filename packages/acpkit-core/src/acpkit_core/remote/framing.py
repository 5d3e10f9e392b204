"""How the remote endpoint frames what it sends: a message as compact JSON, an SSE event, a
WebSocket text frame, and its HTTP refusals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from starlette.responses import JSONResponse, Response

from ..json_text import json_bytes, json_text
from ..server.turn_log import SEQ_META

__all__ = []


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=dict(headers or {}))


UNAUTHORIZED: Final = "unauthorized: send Authorization: Bearer <token>"


def sse_event(message: dict[str, Any]) -> bytes:
    """One SSE event; a turn's numbered update carries its number as the event's id (for `Last-Event-ID`)."""
    params = message.get("params")
    meta: object = cast("dict[str, Any]", params).get("_meta") if isinstance(params, dict) else None
    seq: object = cast("dict[str, Any]", meta).get(SEQ_META) if isinstance(meta, dict) else None
    head = b"event: message\n" if not isinstance(seq, int) else b"id: %d\nevent: message\n" % seq
    return head + b"data: " + json_bytes(message) + b"\n\n"


def ws_frame(message: dict[str, Any]) -> str:
    """One message as a WebSocket text frame."""
    return json_text(message)


def too_big(limit: int) -> Response:
    return error_response(413, f"a JSON-RPC message is over the {limit} bytes limit (max_message_bytes)")
