"""The updates the server sends: as the SDK's models and as their wire JSON (what the transcript
stores), and the conversions between the two.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias, cast

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AudioContentBlock,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    SessionInfoUpdate,
    SessionNotification,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

__all__ = ["MessageBlock", "Sender", "SessionUpdate", "WireUpdate", "update_from_json", "update_to_json"]


MessageBlock: TypeAlias = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)
"""An ACP content block of an agent message."""


SessionUpdate: TypeAlias = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
)
"""The updates the server sends."""


WireUpdate: TypeAlias = dict[str, Any]
"""An update as its wire JSON: the `update` object of a `session/update` notification."""


Sender: TypeAlias = Callable[[WireUpdate], Awaitable[None]]
"""Sends one update (as wire JSON) to the client."""


def update_to_json(update: SessionUpdate) -> dict[str, Any]:
    """The wire JSON of an update (what the transcript stores)."""
    return update.model_dump(mode="json", by_alias=True, exclude_none=True)


def update_from_json(wire: WireUpdate) -> SessionUpdate:
    """The SDK model of an update's wire JSON (validated; raises `pydantic.ValidationError`)."""
    note = SessionNotification.model_validate({"sessionId": "-", "update": wire})
    return cast(SessionUpdate, note.update)
