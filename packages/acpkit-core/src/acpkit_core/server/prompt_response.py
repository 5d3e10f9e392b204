"""The `session/prompt` answer: its stop reason, the turn's usage where the client may read it,
its number in the session's log, and the session's cost so far.
"""

from __future__ import annotations

from typing import Any, cast

from acp.schema import PromptResponse, Usage

from ..runner.types import ClientInfo, StopReason
from .turn_log import SEQ_META

__all__ = ["USAGE_META_KEY", "prompt_response"]


def response_usage(response: PromptResponse) -> Usage | None:
    """The turn's token usage, at the answer's root or under its `_meta` (see `prompt_response`)."""
    if response.usage is not None:
        return response.usage
    meta: object = (response.field_meta or {}).get(USAGE_META_KEY)
    return Usage.model_validate(meta) if isinstance(meta, dict) else None


def numbered_response(response: PromptResponse, seq: int) -> PromptResponse:
    """`response` with `_meta["acpkit.seq"]`: the number of the turn's end in the session's log."""
    meta = dict(response.field_meta or {})
    meta[SEQ_META] = seq
    return response.model_copy(update={"field_meta": meta})


def stored_session_cost(server: dict[str, Any]) -> float | None:
    """The session's cost so far (US dollars), as stored with it."""
    usage: object = server.get("usage")
    cost: object = cast("dict[str, object]", usage).get("cost") if isinstance(usage, dict) else None
    return float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None


USAGE_META_KEY = "acpkit.usage"
"""`_meta` key of the turn's token usage in the prompt answer, for clients that did not opt into `promptUsage`."""


def prompt_response(stop: StopReason, usage: Usage | None, client: ClientInfo) -> PromptResponse:
    """The `session/prompt` answer: `usage` at its root only where the client negotiated it.

    `PromptResponse.usage` exists only in the unstable schema; a plain v1 client gets the same
    object under `_meta["acpkit.usage"]` (a custom field at the root of a spec type is forbidden).
    """
    if usage is None:
        return PromptResponse(stop_reason=stop)
    if client.uses("promptUsage"):
        return PromptResponse(stop_reason=stop, usage=usage)
    return PromptResponse(
        stop_reason=stop, field_meta={USAGE_META_KEY: usage.model_dump(mode="json", by_alias=True, exclude_none=True)}
    )
