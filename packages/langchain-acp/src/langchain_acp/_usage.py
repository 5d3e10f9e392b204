"""A LangChain model response's `usage_metadata` as a [`TurnUsage`][acpkit_core.runner.types.TurnUsage].

The model's name (`response_metadata["model_name"]`) goes along: LangChain reports no context
window or price, so core looks both up by name (`acpkit_core.runner.prices`) for the context meter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from acpkit_core.runner.types import TurnUsage
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
    metadata = cast(Mapping[str, Any], getattr(message, "response_metadata", None) or {})
    model, provider = metadata.get("model_name") or metadata.get("model"), metadata.get("model_provider")
    return TurnUsage(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        thought_tokens=details_out.get("reasoning"),
        cached_read_tokens=details_in.get("cache_read"),
        cached_write_tokens=details_in.get("cache_creation"),
        # LangChain knows no prices or windows: core looks them up by the model's name
        model=model if isinstance(model, str) else None,
        provider=provider if isinstance(provider, str) else None,
    )
