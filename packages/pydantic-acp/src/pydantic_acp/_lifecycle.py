"""The run's lifecycle as tool-call cards (`create_acp_agent(agent, show_hooks=True)`; off by default).

What pydantic-ai does around the model, besides calling tools, is invisible to the user: a history
processor trims or summarises the conversation, a provider compacts it, a hook or a capability
reports what it did. With `show_hooks=True`, each becomes a completed tool-call card of kind
`other`, kept in the transcript (never in the model's history):

| pydantic-ai | card |
|---|---|
| history processors (`ProcessHistory`) changed the history sent | `History processed (12 → 4 messages)` + summary |
| a `CompactionPart` in a model response (provider compaction) | `Conversation compacted` + summary |
| a `CustomEvent` (`await ctx.emit(...)` in a `Hooks` function or a tool) | the event's name, fields as `rawInput` |
| a `CapabilityEvent` (emitted by a capability) | the event's kind, fields as `rawInput` |
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from acp.helpers import text_block, tool_content
from acpkit_core.runner.protocols import Turn
from pydantic_ai.capabilities.abstract import CapabilityOrdering
from pydantic_ai.messages import (
    CapabilityEvent,
    CompactionPart,
    CustomEvent,
    ModelMessage,
    ModelResponse,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext

from ._capability import RunCapability

__all__ = ["LifecycleCards", "event_card"]

_ATTRIBUTION = frozenset({"name", "kind", "event_kind", "capability_id", "tool_call_id", "tool_name"})
_SUMMARY_LIMIT = 4_000


async def show_card(turn: Turn, title: str, raw_input: dict[str, Any], text: str | None = None) -> None:
    """One completed `other` card (not a tool the model called: sent as is, never in the history)."""
    await turn.emit.tool_call(
        f"lifecycle-{uuid.uuid4().hex[:16]}",
        title=title,
        kind="other",
        status="completed",
        raw_input=raw_input,
        content=[tool_content(text_block(text))] if text else (),
    )


def _humanize(name: str) -> str:
    words = name.replace(".", " ").replace("_", " ").replace("-", " ").split()
    return " ".join(words).capitalize() if words else "Event"


async def event_card(turn: Turn, event: CustomEvent | CapabilityEvent) -> None:
    """A card for an event emitted into the run (`ctx.emit(...)`)."""
    payload: dict[str, Any] = {}
    if dataclasses.is_dataclass(event):
        payload = {f.name: getattr(event, f.name) for f in dataclasses.fields(event) if f.name not in _ATTRIBUTION}
    if isinstance(event, CustomEvent):
        title = _humanize(event.name or type(event).__name__)
    else:
        title = _humanize(event.kind or type(event).__name__)
    if event.tool_name:
        title = f"{title} ({event.tool_name})"
    await show_card(turn, title, payload)


def _summary(parts: Sequence[CompactionPart]) -> str | None:
    texts = [p.content for p in parts if isinstance(p.content, str) and p.content.strip()]
    if not texts:
        return None
    text = "\n\n".join(texts)
    return text if len(text) <= _SUMMARY_LIMIT else text[: _SUMMARY_LIMIT - 1] + "…"


def _compactions(messages: Sequence[ModelMessage]) -> list[CompactionPart]:
    return [p for m in messages for p in m.parts if isinstance(p, CompactionPart)]


@dataclass
class LifecycleCards(RunCapability):
    """Shows history rewrites and compactions of one run as cards (outermost, so it sees the history first)."""

    turn: Turn
    """The ACP turn the cards go to."""
    _before: list[ModelMessage] = field(default_factory=list[ModelMessage])

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def get_ordering(self) -> CapabilityOrdering | None:
        return CapabilityOrdering(position="outermost")

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self._before = list(request_context.messages)  # before any other capability's processors ran
        return request_context

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        before, after = self._before, request_context.messages
        self._before = list(after)  # a retried attempt shows nothing new
        if len(before) == len(after) and all(a is b for a, b in zip(before, after, strict=True)):
            return request_context
        kept = {id(m) for m in before}
        written = [m for m in after if id(m) not in kept]
        summary = _summary(_compactions(written))
        await show_card(
            self.turn,
            f"History processed ({len(before)} → {len(after)} messages)",
            {"messages_before": len(before), "messages_after": len(after), "messages_rewritten": len(written)},
            summary,
        )
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        parts = _compactions([response])
        if parts:
            providers = sorted({p.provider_name for p in parts if p.provider_name})
            await show_card(
                self.turn,
                "Conversation compacted",
                {"provider": ", ".join(providers) or None, "parts": len(parts)},
                _summary(parts),
            )
        return response
