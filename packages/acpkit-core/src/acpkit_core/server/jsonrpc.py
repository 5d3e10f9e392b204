"""JSON-RPC 2.0 on the agent side: what one line from the client is, and what to answer.

[`read_line`][acpkit_core.server.jsonrpc.read_line] turns one line into an
[`Inbound`][acpkit_core.server.jsonrpc.Inbound]: the message to hand to the SDK's connection (only a
well-formed request, notification or response ever reaches it), the replies to write back, and one
line for the log. Nothing here raises or prints a traceback, whatever the bytes:

| line | answer |
|---|---|
| not UTF-8, not JSON (`NaN` included), nested too deep | -32700, `id: null` |
| valid JSON that is not an object (`42`, `"hi"`, `null`) | -32600, `id: null` |
| a batch (`[...]`), not supported | an array: -32600 for each request (its id) and malformed member |
| `{}`, no `method` and no `id`, `jsonrpc` not `"2.0"`, a bad `id` or `params` | -32600 (the id when it is valid) |
| `session/cancel` or `$/cancel_request` with an id | the cancel happens and the answer is `null` |
| a malformed `session/cancel` or `$/cancel_request` notification | dropped, one log line (never answered) |
| a notification the agent does not serve | dropped, one log line |

A line over the message size limit is never parsed:
[`oversized`][acpkit_core.server.jsonrpc.oversized] answers it -32600 from what its first
bytes say (its `id`, or `null`), or fails the agent's own pending request when it was the client's
response to one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final, cast

from acp.schema import CancelNotification, CancelRequestNotification
from pydantic import ValidationError

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "Inbound",
    "error_response",
    "oversized",
    "read_line",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

CANCEL: Final = "session/cancel"
CANCEL_REQUEST: Final = "$/cancel_request"
_CANCEL_PARAMS: Final = {CANCEL: CancelNotification, CANCEL_REQUEST: CancelRequestNotification}
_BATCH_NOTE: Final = "batch requests are not supported by this agent: send one JSON-RPC message per line"
_BATCH_REFUSAL: Final = f"Invalid Request: {_BATCH_NOTE}"

JsonId = str | int | float | None


@dataclass(frozen=True, slots=True)
class Inbound:
    """What to do with one line from the client."""

    message: dict[str, Any] | None = None
    """The message to hand to the connection, or `None` when there is nothing to hand on."""
    replies: tuple[dict[str, Any] | list[dict[str, Any]], ...] = field(default=())
    """Answers to write back to the client, in order."""
    note: str | None = None
    """One line for the log (warning level), or `None`."""


def error_response(id_: JsonId, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": error}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse(line: bytes) -> Any:
    """The JSON value of `line`; raises `ValueError` with a short reason."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte 0x{line[exc.start]:02x} at offset {exc.start})") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except ValueError as exc:  # NaN / Infinity, or an integer too long to convert
        raise ValueError(str(exc).split("\n")[0]) from None


def _object(value: Any) -> dict[str, Any] | None:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _valid_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    return value is None or isinstance(value, str | int)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def read_line(line: bytes) -> Inbound:
    """Classify one line (without its newline) from the client."""
    try:
        value = _parse(line)
    except ValueError as exc:
        reason = f"Parse error: {exc}"
        return Inbound(replies=(error_response(None, PARSE_ERROR, reason),), note=f"answered -32700: {reason}")
    if isinstance(value, list):
        return _batch(value)  # pyright: ignore[reportUnknownArgumentType]
    if not isinstance(value, dict):
        reason = f"Invalid Request: a JSON-RPC message is an object, not {_kind(value)}"
        return Inbound(replies=(error_response(None, INVALID_REQUEST, reason),), note=f"answered -32600: {reason}")
    return _message(value)  # pyright: ignore[reportUnknownArgumentType]


def _invalid(id_: JsonId, reason: str) -> Inbound:
    message = f"Invalid Request: {reason}"
    return Inbound(replies=(error_response(id_, INVALID_REQUEST, message),), note=f"answered -32600: {message}")


def _message(msg: dict[str, Any]) -> Inbound:
    has_id = "id" in msg
    id_ok = has_id and _valid_id(msg["id"])
    reply_id: JsonId = msg["id"] if id_ok else None
    if has_id and not id_ok:
        return _invalid(None, f"id must be a string, a number or null, not {_kind(msg['id'])}")
    if msg.get("jsonrpc") != "2.0":
        return _invalid(reply_id, 'the "jsonrpc" member must be exactly "2.0"')
    if "method" not in msg:
        return _response(msg, has_id=has_id, reply_id=reply_id)
    method = msg["method"]
    if not isinstance(method, str):
        return _invalid(reply_id, f"method must be a string, not {_kind(method)}")
    params = msg.get("params")
    if params is not None and not isinstance(params, dict | list):
        if has_id:
            return _invalid(reply_id, f"params must be an object or an array, not {_kind(params)}")
        return Inbound(note=f"ignored notification {method!r}: params must be an object, not {_kind(params)}")
    if method in _CANCEL_PARAMS:
        return _cancel(method, msg, has_id=has_id, reply_id=reply_id)
    if not has_id and not method.startswith("_"):
        return Inbound(note=f"ignored notification {method!r}: this agent has no such notification")
    return Inbound(message=msg)


def _response(msg: dict[str, Any], *, has_id: bool, reply_id: JsonId) -> Inbound:
    """A message without a method: a response to one of the agent's requests, or nothing valid."""
    if not has_id:
        return _invalid(None, "no method (so not a request or notification) and no id (so not a response)")
    if "result" not in msg and "error" not in msg:
        return _invalid(reply_id, "no method (so not a request) and neither result nor error (so not a response)")
    error = _object(msg.get("error"))
    if "result" not in msg and not (
        error is not None and type(error.get("code")) is int and isinstance(error.get("message"), str)
    ):
        shown = json.dumps(error)[:200]
        fixed = error_response(reply_id, INTERNAL_ERROR, f"the client answered with a malformed error: {shown}")
        return Inbound(message=fixed, note=f"the client's error response to request {reply_id!r} is malformed")
    return Inbound(message=msg)


def _cancel(method: str, msg: dict[str, Any], *, has_id: bool, reply_id: JsonId) -> Inbound:
    """`session/cancel` and `$/cancel_request` are notifications; sent as requests, they still cancel
    and are answered `null`."""
    try:
        _CANCEL_PARAMS[method].model_validate(msg.get("params"))
    except ValidationError as exc:
        reason = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors())
        text = f"Invalid params for {method}: {reason}"
        if has_id:
            return Inbound(replies=(error_response(reply_id, INVALID_PARAMS, text),), note=f"answered -32602: {text}")
        return Inbound(note=f"ignored a {method} notification: {reason}")
    if not has_id:
        return Inbound(message=msg)
    notification = {"jsonrpc": "2.0", "method": method, "params": msg.get("params")}
    return Inbound(message=notification, replies=({"jsonrpc": "2.0", "id": reply_id, "result": None},))


def _batch(items: list[Any]) -> Inbound:
    if not items:
        return _invalid(None, "an empty batch")
    answers: list[dict[str, Any]] = []
    for value in items:
        item = _object(value)
        if item is not None and "method" in item:
            if "id" not in item:
                continue  # a notification: never answered
            id_ = item["id"]
            answers.append(error_response(id_ if _valid_id(id_) else None, INVALID_REQUEST, _BATCH_REFUSAL))
        elif item is not None and "id" in item and ("result" in item or "error" in item):
            continue  # a response: never answered
        else:
            answers.append(error_response(None, INVALID_REQUEST, _BATCH_REFUSAL))
    note = f"answered a batch of {len(items)} with {len(answers)} errors: {_BATCH_NOTE}"
    return Inbound(replies=(answers,) if answers else (), note=note)


# --- lines over the size limit -----------------------------------------------------------------

_STRING = r'"(?:[^"\\]|\\.)*"'
_MEMBER = re.compile(rf"\s*({_STRING})\s*:\s*({_STRING}|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|[\[{{])\s*,?")


def _envelope(prefix: bytes) -> dict[str, Any]:
    """The top-level members of a JSON object that precede its first object or array value.

    Clients write `jsonrpc`, `id` and `method` before the large `params` or `result`, so this finds
    them in the first bytes of a line too long to parse. A member whose value is an object or array
    is recorded with the value `...`.
    """
    text = prefix.decode("utf-8", errors="replace").lstrip()
    if not text.startswith("{"):
        return {}
    found: dict[str, Any] = {}
    pos = 1
    while match := _MEMBER.match(text, pos):
        try:
            key = json.loads(match.group(1))
            value = ... if match.group(2) in "[{" else json.loads(match.group(2))
        except ValueError:
            break
        found[key] = value
        if value is ...:
            break
        pos = match.end()
    return found


def oversized(prefix: bytes, reason: str, data: dict[str, Any] | None) -> Inbound:
    """What to do with a line refused for its size, from its first bytes (`prefix`).

    A request (or anything unrecognisable) is answered -32600 with its id (or `null`); the client's
    response to one of the agent's requests becomes an error response for that request, so the
    agent's call fails with `reason` instead of waiting forever.
    """
    found = _envelope(prefix)
    id_: Any = found.get("id")
    id_ok = "id" in found and _valid_id(id_)
    if "method" not in found and id_ok and ("result" in found or "error" in found):
        failed = error_response(id_, INVALID_REQUEST, reason, data)
        return Inbound(message=failed, note=f"the client's response: {reason}")
    return Inbound(replies=(error_response(id_ if id_ok else None, INVALID_REQUEST, reason, data),), note=reason)
