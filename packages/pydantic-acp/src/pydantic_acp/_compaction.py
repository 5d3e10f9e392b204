"""A history processor that shortened the history, shown to the client as a compaction.

pydantic-ai compacts a run's history with capabilities that rewrite it before a model request
(`ProcessHistory(processor)`, the `history_processors` of earlier releases, or a capability of the
developer's own that assigns `ctx.messages`). Two run capabilities watch every request step:

- [`HistoryBefore`][pydantic_acp._compaction.HistoryBefore], outermost, notes the history as the
  step begins, before any processor ran;
- [`HistoryAfter`][pydantic_acp._compaction.HistoryAfter], inside every `ProcessHistory`, compares:
  fewer messages than before is a compaction, reported through core's `emit.compaction` (one
  function for both adapters). Messages the processor wrote itself (a summary it put in place of
  the older ones, or a `CompactionPart` of a summarizing capability) are its summary; how many of
  the earlier messages went is the notice's count. A model response that carries a
  `CompactionPart` (the provider compacted the context itself, as Anthropic and OpenAI can) is a
  compaction too, its readable `content` the summary (OpenAI's is encrypted: none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acpkit_core.runner.protocols import Turn
from pydantic_ai.capabilities import AbstractCapability, CapabilityOrdering, ProcessHistory
from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext

from ._capability import RunCapability

__all__ = ["HistoryAfter", "HistoryBefore", "compaction_watch"]


@dataclass
class HistoryBefore(RunCapability):
    """Notes the history as each request step begins (outermost: before any processor)."""

    seen: list[ModelMessage] = field(default_factory=list[ModelMessage])
    """The history at the start of the current step."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def get_ordering(self) -> CapabilityOrdering | None:
        return CapabilityOrdering(position="outermost")

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self.seen = list(ctx.messages)
        return request_context


@dataclass
class HistoryAfter(RunCapability):
    """Compares the history after the processors with what `before` saw; reports a shortening."""

    turn: Turn
    """The ACP turn."""
    before: HistoryBefore
    """Its outermost partner."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def get_ordering(self) -> CapabilityOrdering | None:
        return CapabilityOrdering(wrapped_by=(ProcessHistory,))

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        seen, after = self.before.seen, list(ctx.messages)
        if len(after) < len(seen):
            old = {id(m) for m in seen}
            written = [m for m in after if id(m) not in old]
            removed = len(seen) - (len(after) - len(written))
            summary = "\n\n".join(t for m in written if (t := _text(m))) or None
            await self.turn.emit.compaction(status="completed", summary=summary, removed=removed)
        self.before.seen = after
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        parts = [p for p in response.parts if isinstance(p, CompactionPart)]
        if parts:  # the provider compacted the context in this response
            summary = "\n\n".join(p.content for p in parts if p.content and p.content.strip()) or None
            await self.turn.emit.compaction(status="completed", summary=summary)
        return response


def _text(message: ModelMessage) -> str:
    """The user-readable text a processor wrote (its summary): prompt, system and text parts."""
    parts: list[str] = []
    if isinstance(message, ModelRequest):
        for part in message.parts:
            if isinstance(part, UserPromptPart | SystemPromptPart | CompactionPart) and isinstance(part.content, str):
                parts.append(part.content)
    else:
        parts.extend(p.content for p in message.parts if isinstance(p, TextPart))
    return "\n".join(p for p in parts if p.strip())


def compaction_watch(turn: Turn) -> list[AbstractCapability[Any]]:
    """The two capabilities for one run."""
    before = HistoryBefore()
    return [before, HistoryAfter(turn, before)]
