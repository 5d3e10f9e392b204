"""What a remote ACP agent sends back during one prompt, as framework-neutral events.

[`RemoteSession.stream`][acpkit_core.delegate.RemoteSession.stream] yields these; the adapters turn
them into their framework's stream (pydantic-ai parts, LangChain message chunks). A remote agent's
tool calls are run by the remote agent itself: the caller only sees them, as
[`RemoteToolCall`][acpkit_core.delegate.RemoteToolCall] snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

from acp.schema import StopReason, ToolCallStatus, ToolKind

from ..runner.types import TurnUsage

__all__ = ["RemoteEvent", "RemoteText", "RemoteThought", "RemoteToolCall", "RemoteTurnEnd"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteText:
    """A piece of the remote agent's answer (`agent_message_chunk`)."""

    text: str
    """The text of this chunk."""
    message_id: str | None = None
    """The remote message id, when the agent sent one."""
    kind: Literal["text"] = "text"
    """Discriminator."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteThought:
    """A piece of the remote agent's reasoning (`agent_thought_chunk`)."""

    text: str
    """The text of this chunk."""
    message_id: str | None = None
    """The remote message id, when the agent sent one."""
    kind: Literal["thought"] = "thought"
    """Discriminator."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteToolCall:
    """The state of one tool call of the remote agent after a `tool_call` or `tool_call_update`.

    Each update is merged into what was known, so every event carries the whole picture.
    """

    tool_call_id: str
    """The remote agent's id for the call."""
    title: str
    """What the remote agent shows for the call."""
    tool_kind: ToolKind | None = None
    """ACP tool kind (`read`, `edit`, `execute`, ...)."""
    status: ToolCallStatus | None = None
    """`pending`, `in_progress`, `completed` or `failed`."""
    raw_input: Any = None
    """The arguments, as the remote agent reported them."""
    raw_output: Any = None
    """The result, as the remote agent reported it."""
    text: str = ""
    """The text of the call's `content` items (diffs as their new text), joined by blank lines."""
    started: bool = False
    """True for the event of the `tool_call` notification that opened the call."""
    kind: Literal["tool_call"] = "tool_call"
    """Discriminator."""

    @property
    def arguments(self) -> dict[str, Any] | None:
        """`raw_input` when it is a JSON object (the usual shape of tool arguments), else `None`."""
        raw: object = self.raw_input
        return cast(dict[str, Any], raw) if isinstance(raw, dict) else None

    @property
    def finished(self) -> bool:
        """True once the call is `completed` or `failed`."""
        return self.status in ("completed", "failed")


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteTurnEnd:
    """The remote agent answered the prompt: always the last event of a stream."""

    stop_reason: StopReason
    """Why the remote turn ended (`end_turn`, `cancelled`, `max_tokens`, ...)."""
    usage: TurnUsage | None = None
    """Token usage the remote agent reported in its answer, if any."""
    kind: Literal["end"] = "end"
    """Discriminator."""


RemoteEvent: TypeAlias = RemoteText | RemoteThought | RemoteToolCall | RemoteTurnEnd
"""One event of a remote prompt."""
