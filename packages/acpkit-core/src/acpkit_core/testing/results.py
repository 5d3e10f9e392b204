"""What the test client hands back: prompt results and tool calls in their final state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    PromptResponse,
    RequestPermissionRequest,
    StopReason,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    Usage,
    UserMessageChunk,
)

from ..client.unstable_updates import NoticeUpdate

__all__ = ["PromptResult", "ToolCallState", "fold_tool_calls", "joined_text"]


@dataclass(kw_only=True)
class ToolCallState:
    """A tool call as the client sees it after all its updates."""

    id: str
    """`toolCallId`."""
    title: str = ""
    """The latest title."""
    kind: str | None = None
    """The latest kind."""
    status: str | None = None
    """The latest status."""
    statuses: list[str] = field(default_factory=list[str])
    """Every status it went through, in order."""
    content: list[Any] = field(default_factory=list[Any])
    """The latest content list (schema models)."""
    locations: list[tuple[str, int | None]] = field(default_factory=list[tuple[str, int | None]])
    """The latest locations."""
    raw_input: Any = None
    """The latest `rawInput`."""
    raw_output: Any = None
    """The latest `rawOutput`."""
    name: str | None = None
    """The tool's `name`, when the agent sent it (a client that negotiated `toolCallName`)."""


def fold_tool_calls(updates: Sequence[Any]) -> dict[str, ToolCallState]:
    """Every tool call in `updates`, in the order they started, in their final state."""
    calls: dict[str, ToolCallState] = {}
    for u in updates:
        if not isinstance(u, ToolCallStart | ToolCallProgress):
            continue
        state = calls.get(u.tool_call_id)
        if state is None:
            state = calls[u.tool_call_id] = ToolCallState(id=u.tool_call_id)
        if u.title is not None:
            state.title = u.title
        if u.kind is not None:
            state.kind = u.kind
        if u.status is not None:
            state.status = u.status
            state.statuses.append(u.status)
        if u.content is not None:
            state.content = list(u.content)
        if u.locations is not None:
            state.locations = [(loc.path, loc.line) for loc in u.locations]
        if u.raw_input is not None:
            state.raw_input = u.raw_input
        if u.raw_output is not None:
            state.raw_output = u.raw_output
        name = getattr(u, "name", None)
        if isinstance(name, str):
            state.name = name
    return calls


def joined_text(updates: Sequence[Any], kind: type[AgentMessageChunk | AgentThoughtChunk | UserMessageChunk]) -> str:
    """The text of every chunk of one kind, joined."""
    return "".join(u.content.text for u in updates if isinstance(u, kind) and isinstance(u.content, TextContentBlock))


@dataclass(kw_only=True)
class PromptResult:
    """The outcome of one `session/prompt` as the client saw it."""

    response: PromptResponse
    """The raw response."""
    updates: list[Any]
    """Every `session/update` of this session received during the prompt, in order (schema models)."""
    permission_requests: list[RequestPermissionRequest]
    """Permission requests received during the prompt."""

    @property
    def stop_reason(self) -> StopReason:
        """The stop reason."""
        return self.response.stop_reason

    @property
    def usage(self) -> Usage | None:
        """Usage reported on the response: at its root (a client that opted into `promptUsage`), else
        under `_meta["acpkit.usage"]` (a plain v1 client)."""
        if self.response.usage is not None:
            return self.response.usage
        meta = self.response.field_meta or {}
        found = meta.get("acpkit.usage")
        return Usage.model_validate(found) if isinstance(found, dict) else None

    @property
    def text(self) -> str:
        """The agent's answer: every `agent_message_chunk` text joined."""
        return joined_text(self.updates, AgentMessageChunk)

    @property
    def thoughts(self) -> str:
        """Every `agent_thought_chunk` text joined."""
        return joined_text(self.updates, AgentThoughtChunk)

    @property
    def tool_calls(self) -> dict[str, ToolCallState]:
        """Tool calls by id, in their final state."""
        return fold_tool_calls(self.updates)

    @property
    def notices(self) -> list[NoticeUpdate]:
        """The `notice` updates (a client that negotiated `sessionNotices`)."""
        return [u for u in self.updates if isinstance(u, NoticeUpdate)]

    @property
    def kinds(self) -> list[str]:
        """The `sessionUpdate` kind of each update, in order (handy in assertions)."""
        return [u.session_update for u in self.updates]
