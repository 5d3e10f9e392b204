"""How `acpkit chat` shows a session in the terminal (with `rich`; imported only by `acpkit chat`).

Streamed text as it arrives, thoughts dimmed, tool calls with kind and status, diffs coloured,
plans as a checklist, usage in a footer line.
"""

from __future__ import annotations

import difflib
from typing import Any, Literal

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandsUpdate,
    ContentToolCallContent,
    CurrentModeUpdate,
    FileEditToolCallContent,
    PermissionOption,
    PlanEntry,
    PromptResponse,
    SessionInfoUpdate,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
)
from rich.console import Console
from rich.text import Text

__all__ = ["ChatView"]

_STATUS_MARK = {"pending": "…", "in_progress": "⋯", "completed": "✓", "failed": "✗"}
_PLAN_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
_MAX_TOOL_OUTPUT_LINES = 8


def _block_text(block: Any) -> str:
    if isinstance(block, TextContentBlock):
        return block.text
    kind = getattr(block, "type", "content")
    uri = getattr(block, "uri", None) or getattr(getattr(block, "resource", None), "uri", None)
    return f"[{kind}{': ' + uri if uri else ''}]"


class ChatView:
    """Renders session updates and turn results to a `rich` console."""

    def __init__(self, console: Console, *, show_thoughts: bool = True) -> None:
        self.console = console
        self.show_thoughts = show_thoughts
        self.commands: list[AvailableCommand] = []
        """The agent's slash commands, as last announced."""
        self.mode: str | None = None
        """The current mode id, as last announced."""
        self.title: str | None = None
        """The session title, as last announced."""
        self._stream: Literal["text", "thought", "user"] | None = None
        self._tools: dict[str, str] = {}
        self._shown: dict[str, list[Any]] = {}

    # --- streams ------------------------------------------------------------------------------

    def _open(self, kind: Literal["text", "thought", "user"]) -> None:
        if self._stream == kind:
            return
        self.end_line()
        self._stream = kind
        if kind == "thought":
            self.console.print(Text("thinking: ", style="dim italic"), end="")
        elif kind == "user":
            self.console.print(Text("you: ", style="bold cyan"), end="")

    def end_line(self) -> None:
        """Close an open stream of text with a newline."""
        if self._stream is not None:
            self.console.print()
            self._stream = None

    def note(self, message: str, *, style: str = "dim") -> None:
        """A line of the client's own (attachments, cancellation, errors)."""
        self.end_line()
        self.console.print(Text(message, style=style))

    # --- updates ------------------------------------------------------------------------------

    def update(self, update: Any) -> None:
        """Show one `session/update`."""
        if isinstance(update, AgentMessageChunk):
            self._open("text")
            self.console.print(Text(_block_text(update.content)), end="")
        elif isinstance(update, AgentThoughtChunk):
            if self.show_thoughts:
                self._open("thought")
                self.console.print(Text(_block_text(update.content), style="dim italic"), end="")
        elif isinstance(update, UserMessageChunk):
            self._open("user")
            self.console.print(Text(_block_text(update.content), style="cyan"), end="")
        elif isinstance(update, ToolCallStart):
            self._tool_start(update)
        elif isinstance(update, ToolCallProgress):
            self._tool_update(update)
        elif isinstance(update, AgentPlanUpdate):
            self._plan(update.entries)
        elif isinstance(update, AvailableCommandsUpdate):
            self.commands = list(update.available_commands)
        elif isinstance(update, CurrentModeUpdate):
            self.mode = update.current_mode_id
            self.note(f"mode: {update.current_mode_id}")
        elif isinstance(update, SessionInfoUpdate):
            if update.title:
                self.title = update.title
        elif isinstance(update, UsageUpdate):
            cost = f", cost {update.cost.amount:.4f} {update.cost.currency}" if update.cost else ""
            self.note(f"context: {update.used}/{update.size} tokens{cost}")

    def _tool_start(self, update: ToolCallStart) -> None:
        self.end_line()
        self._tools[update.tool_call_id] = update.title
        line = Text("▸ ", style="bold yellow")
        line.append(update.title, style="bold")
        line.append(f"  [{update.kind or 'other'}]", style="magenta")
        status = update.status or "pending"
        line.append(f" {_STATUS_MARK.get(status, '')} {status}", style="dim")
        self.console.print(line)
        for loc in update.locations or []:
            self.console.print(Text(f"    at {loc.path}{f':{loc.line}' if loc.line else ''}", style="dim"))
        self._new_tool_content(update.tool_call_id, update.content or [])

    def _tool_update(self, update: ToolCallProgress) -> None:
        title = update.title or self._tools.get(update.tool_call_id, update.tool_call_id)
        if update.title:
            self._tools[update.tool_call_id] = update.title
        if update.status:
            self.end_line()
            style = {"completed": "green", "failed": "red"}.get(update.status, "yellow")
            line = Text(f"  {_STATUS_MARK.get(update.status, '')} ", style=style)
            line.append(title)
            line.append(f" {update.status}", style=style)
            if update.kind:
                line.append(f"  [{update.kind}]", style="magenta")
            self.console.print(line)
        self._new_tool_content(update.tool_call_id, update.content or [])

    def _new_tool_content(self, tool_call_id: str, content: list[Any]) -> None:
        """Show the content items not yet shown for this call (a diff is often sent again on completion)."""
        shown = self._shown.setdefault(tool_call_id, [])
        fresh = [item for item in content if item not in shown]
        shown.extend(fresh)
        if fresh:
            self._tool_content(fresh)

    def _tool_content(self, content: list[Any]) -> None:
        for item in content:
            if isinstance(item, FileEditToolCallContent):
                self._diff(item)
            elif isinstance(item, ContentToolCallContent):
                text = _block_text(item.content)
                lines = text.splitlines()
                for raw in lines[:_MAX_TOOL_OUTPUT_LINES]:
                    self.console.print(Text(f"    {raw}", style="dim"))
                if len(lines) > _MAX_TOOL_OUTPUT_LINES:
                    self.console.print(Text(f"    … {len(lines) - _MAX_TOOL_OUTPUT_LINES} more lines", style="dim"))
            else:
                self.console.print(Text(f"    terminal {item.terminal_id}", style="dim"))

    def _diff(self, item: FileEditToolCallContent) -> None:
        self.end_line()
        self.console.print(Text(f"    diff {item.path}", style="bold"))
        old = (item.old_text or "").splitlines()
        new = item.new_text.splitlines()
        if old == new and item.old_text is not None:
            self.console.print(Text("    (no changes)", style="dim"))
            return
        for line in difflib.unified_diff(old, new, "before", "after", lineterm="", n=2):
            if line.startswith(("---", "+++")):
                continue
            style = (
                "green"
                if line.startswith("+")
                else "red"
                if line.startswith("-")
                else "cyan"
                if line.startswith("@@")
                else ""
            )
            self.console.print(Text(f"    {line}", style=style))

    def _plan(self, entries: list[PlanEntry]) -> None:
        self.end_line()
        self.console.print(Text("plan:", style="bold"))
        for entry in entries:
            style = {"completed": "green", "in_progress": "yellow"}.get(entry.status, "")
            self.console.print(Text(f"  {_PLAN_MARK.get(entry.status, '[ ]')} {entry.content}", style=style))

    # --- turns and questions ------------------------------------------------------------------

    def permission_question(self, tool_call: ToolCallUpdate, options: list[PermissionOption]) -> None:
        """Show a permission request and its numbered options."""
        self.end_line()
        title = tool_call.title or self._tools.get(tool_call.tool_call_id, tool_call.tool_call_id)
        line = Text("? ", style="bold red")
        line.append("permission: ", style="bold")
        line.append(title)
        if tool_call.kind:
            line.append(f"  [{tool_call.kind}]", style="magenta")
        self.console.print(line)
        self._tool_content(tool_call.content or [])
        for i, option in enumerate(options, 1):
            self.console.print(Text(f"  {i}) {option.name} ({option.kind})"))

    def turn_end(self, response: PromptResponse) -> None:
        """Close the turn with its stop reason and token usage."""
        self.end_line()
        parts = [f"stop: {response.stop_reason}"]
        usage = response.usage
        if usage is not None:
            parts.append(f"tokens: {usage.input_tokens} in, {usage.output_tokens} out")
            if usage.thought_tokens:
                parts.append(f"{usage.thought_tokens} thinking")
        self.console.print(Text(" · ".join(parts), style="dim"))
