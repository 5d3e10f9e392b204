"""A LangChain model response's `usage_metadata` as a [`TurnUsage`][acpkit_core.runner.TurnUsage]."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from acpkit_core.runner import TurnUsage
from langchain_core.messages import BaseMessage

__all__ = ["usage_from_message"]


def usage_from_message(message: BaseMessage) -> TurnUsage | None:
    """The usage of one model response from its `usage_metadata`, or `None` if it has none."""
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None
    usage = cast(Mapping[str, Any], usage)
    details_in = cast(Mapping[str, Any], usage.get("input_token_details") or {})
    details_out = cast(Mapping[str, Any], usage.get("output_token_details") or {})
    return TurnUsage(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        thought_tokens=details_out.get("reasoning"),
        cached_read_tokens=details_in.get("cache_read"),
        cached_write_tokens=details_in.get("cache_creation"),
    )
