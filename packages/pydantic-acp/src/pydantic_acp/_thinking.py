"""The session's `thinking` level as pydantic-ai's unified `thinking` model setting."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acpkit_core.thinking import thinking_level
from pydantic_ai.settings import ModelSettings

__all__ = ["thinking_settings"]


def thinking_settings(base: ModelSettings | None, config: Mapping[str, Any]) -> ModelSettings | None:
    """`base` with `thinking` set from the session's config values (`off` is `False`); unchanged at `default`."""
    level = thinking_level(config)
    if level is None:
        return base
    merged = ModelSettings(**base) if base else ModelSettings()
    merged["thinking"] = False if level == "off" else level
    return merged
