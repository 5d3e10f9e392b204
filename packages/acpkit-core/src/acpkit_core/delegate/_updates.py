"""Turn the `session/update` notifications of a remote agent into [`RemoteEvent`][acpkit_core.delegate.RemoteEvent]s."""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    PromptResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from ..runner.tool_lifecycle import unwrap_output
from ..runner.types import TurnUsage
from .events import RemoteEvent, RemoteText, RemoteThought, RemoteToolCall, RemoteTurnEnd

__all__ = ["ToolCallTracker", "block_text", "turn_end"]


def block_text(block: Any) -> str:
    """The text of a content block; other blocks as a short bracketed note, so nothing vanishes unseen."""
    if isinstance(block, TextContentBlock):
        return block.text
    kind = getattr(block, "type", "content")
    label = getattr(block, "uri", None) or getattr(block, "mime_type", None) or ""
    return f"[{kind}: {label}]" if label else f"[{kind}]"


def _content_text(items: list[Any] | None) -> str | None:
    if items is None:
        return None
    texts: list[str] = []
    for item in items:
        if isinstance(item, ContentToolCallContent):
            texts.append(block_text(item.content))
        elif isinstance(item, FileEditToolCallContent):
            texts.append(f"{item.path}:\n{item.new_text}")
        else:
            texts.append(f"[terminal {getattr(item, 'terminal_id', '')}]")
    return "\n\n".join(texts)


class ToolCallTracker:
    """Merges the updates of each remote tool call, so every event carries the call's whole state."""

    def __init__(self) -> None:
        self._calls: dict[str, RemoteToolCall] = {}

    def event(self, update: Any) -> RemoteEvent | None:
        """The event for one `session/update`, or `None` for updates a caller has no use for (plans, commands...)."""
        if isinstance(update, AgentMessageChunk):
            return RemoteText(text=block_text(update.content), message_id=update.message_id)
        if isinstance(update, AgentThoughtChunk):
            return RemoteThought(text=block_text(update.content), message_id=update.message_id)
        if isinstance(update, ToolCallStart):
            call = RemoteToolCall(
                tool_call_id=update.tool_call_id,
                title=update.title,
                tool_kind=update.kind,
                status=update.status or "pending",
                raw_input=update.raw_input,
                raw_output=unwrap_output(update.raw_output),
                text=_content_text(update.content) or "",
                started=True,
            )
            self._calls[call.tool_call_id] = call
            return call
        if isinstance(update, ToolCallProgress):
            call = self.merge(update)
            self._calls[call.tool_call_id] = call
            return call
        return None

    def merge(self, update: ToolCallUpdate | ToolCallProgress) -> RemoteToolCall:
        """The known state of `update`'s call with the fields `update` sets replaced."""
        known = self._calls.get(update.tool_call_id) or RemoteToolCall(
            tool_call_id=update.tool_call_id, title=update.title or update.tool_call_id
        )
        text = _content_text(update.content)
        return RemoteToolCall(
            tool_call_id=known.tool_call_id,
            title=update.title or known.title,
            tool_kind=update.kind or known.tool_kind,
            status=update.status or known.status,
            raw_input=known.raw_input if update.raw_input is None else update.raw_input,
            raw_output=known.raw_output if update.raw_output is None else unwrap_output(update.raw_output),
            text=known.text if text is None else text,
        )


def turn_end(response: PromptResponse) -> RemoteTurnEnd:
    """The last event of a prompt, from the remote agent's answer."""
    usage = response.usage
    return RemoteTurnEnd(
        stop_reason=response.stop_reason,
        usage=None
        if usage is None
        else TurnUsage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            thought_tokens=usage.thought_tokens,
            cached_read_tokens=usage.cached_read_tokens,
            cached_write_tokens=usage.cached_write_tokens,
        ),
    )
