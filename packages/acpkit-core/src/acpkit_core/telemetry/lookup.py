"""Where the server finds the telemetry of its options: the observer, the store's timer."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .observer import Observer

if TYPE_CHECKING:
    from ..config import AgentOptions

__all__ = ["observer_of", "store_timer"]


def observer_of(options: AgentOptions) -> Observer | None:
    """The observer of `options.telemetry`, `None` when telemetry is off (the server then does nothing)."""
    telemetry = options.telemetry
    return telemetry.observer() if telemetry is not None else None


def store_timer(options: AgentOptions) -> Callable[[str, float], None] | None:
    """What times the store's calls when metrics are on (`None`: the store is used as it is)."""
    observer = observer_of(options)
    if observer is None or observer.backend is None or not observer.backend.metering:
        return None
    return observer.record_store
