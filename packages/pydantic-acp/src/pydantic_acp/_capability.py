"""The base of the adapter's own per-run capabilities: no layer of their own on the event stream."""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import AgentStreamEvent
from pydantic_ai.tools import RunContext

__all__ = ["RunCapability"]


class RunCapability(AbstractCapability[Any]):
    """A capability that costs nothing per streamed event.

    pydantic-ai passes each event of a run through every capability of the run: it asks each one
    whether it `listens_to` the event (the inherited answer looks for `@on_event` methods, event by
    event) and wraps the event stream in each one's `wrap_run_event_stream` (the inherited one is an
    async generator that re-yields every event). The adapter adds up to four capabilities to a run
    and none of them watches or changes events, so they say so once: they listen to nothing and
    hand the stream on as it is. (A subclass that does listen overrides `listens_to` too.)
    """

    def listens_to(self, event: AgentStreamEvent) -> bool:
        return False

    def wrap_run_event_stream(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, ctx: RunContext[Any], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        return stream
