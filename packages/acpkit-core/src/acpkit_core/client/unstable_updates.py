"""Models of the unstable `session/update` kinds the ACP SDK (0.12) has no model for, for clients.

ACP Kit sends these only to a client that negotiated them
([`acpkit_core.runner.unstable`][acpkit_core.runner.unstable]), as wire JSON; a client that reads them (the test client,
[`AcpTestClient`][acpkit_core.testing.AcpTestClient]) parses `session/update` with
[`UnstableSessionNotification`][acpkit_core.client.unstable_updates.UnstableSessionNotification]: every
kind the SDK knows, as the SDK's own models, plus

- [`NoticeUpdate`][acpkit_core.client.unstable_updates.NoticeUpdate] (`notice`, "session notices" RFD);
- [`CompactionUpdate`][acpkit_core.client.unstable_updates.CompactionUpdate] and
  [`CompactionSummaryChunk`][acpkit_core.client.unstable_updates.CompactionSummaryChunk]
  (`compaction_update`, `compaction_summary_chunk`, "session compaction" RFD);
- [`NamedToolCallStart`][acpkit_core.client.unstable_updates.NamedToolCallStart] and
  [`NamedToolCallProgress`][acpkit_core.client.unstable_updates.NamedToolCallProgress]: `tool_call` and
  `tool_call_update` with the tool's `name` ("tool call name" RFD), which the SDK's models drop.

Plan operations (`plan_update`, `plan_removed`) have SDK models already
(`AgentPlanContentUpdate`, `AgentPlanRemovedUpdate`). The fields follow `schema.unstable.json`
(schema 1.21); open enums (`severity`, `status`) are plain strings, as the schema allows values it
does not list.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from acp.schema import (
    AgentMessageChunk,
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
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
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CompactionSummaryChunk",
    "CompactionUpdate",
    "NamedToolCallProgress",
    "NamedToolCallStart",
    "NoticeUpdate",
    "UnstableSessionNotification",
]

_ContentBlock = Annotated[
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock,
    Field(discriminator="type"),
]


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class NoticeUpdate(_Model):
    """`notice`: advisory, live-only information for the user (not part of the conversation)."""

    session_update: Annotated[Literal["notice"], Field(alias="sessionUpdate")] = "notice"
    """The kind."""
    severity: str
    """`info`, `warning`, `error` (or a value of a later protocol)."""
    title: Annotated[str, Field(min_length=1)]
    """Plain text that stands alone."""
    description: str | None = None
    """More detail, when given."""
    field_meta: Annotated[dict[str, Any] | None, Field(alias="_meta")] = None
    """Extensibility."""


class CompactionUpdate(_Model):
    """`compaction_update`: a compaction of the agent's context, created or patched by its id."""

    session_update: Annotated[Literal["compaction_update"], Field(alias="sessionUpdate")] = "compaction_update"
    """The kind."""
    compaction_id: Annotated[str, Field(alias="compactionId")]
    """The agent's id of this compaction (unique in the session)."""
    status: str
    """`in_progress`, `completed`, `failed`, `cancelled` (or a value of a later protocol)."""
    summary: list[_ContentBlock] | None = None
    """What the compaction kept, for the user (with `completed`)."""
    error: str | None = None
    """Why it failed (with `failed`)."""
    field_meta: Annotated[dict[str, Any] | None, Field(alias="_meta")] = None
    """Extensibility."""


class CompactionSummaryChunk(_Model):
    """`compaction_summary_chunk`: one content block appended to an in-progress compaction's summary."""

    session_update: Annotated[Literal["compaction_summary_chunk"], Field(alias="sessionUpdate")] = (
        "compaction_summary_chunk"
    )
    """The kind."""
    compaction_id: Annotated[str, Field(alias="compactionId")]
    """The compaction it belongs to."""
    content: _ContentBlock
    """The block to append."""
    field_meta: Annotated[dict[str, Any] | None, Field(alias="_meta")] = None
    """Extensibility."""


class NamedToolCallStart(ToolCallStart):
    """`tool_call` with the unstable `name`: the tool's programmatic name."""

    name: str | None = None
    """The tool's name (`read_file`), when the agent sent it."""


class NamedToolCallProgress(ToolCallProgress):
    """`tool_call_update` with the unstable `name`."""

    name: str | None = None
    """The tool's name, when the agent sent it."""


class UnstableSessionNotification(_Model):
    """`session/update` params, for a client that negotiated unstable surfaces: every update kind the
    SDK knows plus the unstable ones it has no model for."""

    session_id: Annotated[str, Field(alias="sessionId")]
    """The session."""
    update: Annotated[
        UserMessageChunk
        | AgentMessageChunk
        | AgentThoughtChunk
        | NamedToolCallStart
        | NamedToolCallProgress
        | AgentPlanUpdate
        | AgentPlanContentUpdate
        | AgentPlanRemovedUpdate
        | AvailableCommandsUpdate
        | CurrentModeUpdate
        | ConfigOptionUpdate
        | SessionInfoUpdate
        | UsageUpdate
        | NoticeUpdate
        | CompactionUpdate
        | CompactionSummaryChunk,
        Field(discriminator="session_update"),
    ]
    """The update."""
    field_meta: Annotated[dict[str, Any] | None, Field(alias="_meta")] = None
    """Extensibility."""
