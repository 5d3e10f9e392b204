"""How `acpkit chat` shows a session in the terminal (with `rich`; imported only by `acpkit chat`).

Agent text rendered as markdown as it streams (plain text when stdout is not a terminal), thoughts
dimmed, tool calls with kind and status, diffs coloured, plans as a checklist, usage in a footer
line, and a status line while the agent works. Everything that comes from the agent or the client
goes through [`printable`][acpkit_core.cli.sanitize.printable] first.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
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
from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.text import Text

from .live import LiveArea, split_lines, split_markdown
from .sanitize import printable

__all__ = ["ChatView"]

_STATUS_MARK = {"pending": "…", "in_progress": "⋯", "completed": "✓", "failed": "✗"}
_PLAN_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
_MAX_TOOL_OUTPUT_LINES = 8


Stream = Literal["text", "thought", "user"]
_PREFIX: dict[Stream, tuple[str, str]] = {"thought": ("thinking: ", "dim italic"), "user": ("you: ", "bold cyan")}
_STREAM_STYLE: dict[Stream, str] = {"text": "", "thought": "dim italic", "user": "cyan"}


def _block_text(block: Any) -> str:
    if isinstance(block, TextContentBlock):
        return printable(block.text)
    kind = getattr(block, "type", "content")
    uri = getattr(block, "uri", None) or getattr(getattr(block, "resource", None), "uri", None)
    return printable(f"[{kind}{': ' + uri if uri else ''}]")


def _text(text: str, style: str = "") -> Text:
    """A `rich` text of agent- or client-supplied `text`, made printable."""
    return Text(printable(text), style=style)


class ChatView:
    """Renders session updates and turn results to a `rich` console.

    On a terminal (`fancy`), agent text is rendered as markdown and a status line shows while the
    agent works; elsewhere everything is plain text, printed as it arrives.
    """

    def __init__(self, console: Console, *, show_thoughts: bool = True, fancy: bool | None = None) -> None:
        self.console = console
        self.show_thoughts = show_thoughts
        self.fancy = console.is_terminal and not console.quiet if fancy is None else fancy
        """Markdown, live regions and the status line (a terminal)."""
        self.commands: list[AvailableCommand] = []
        """The agent's slash commands, as last announced."""
        self.mode: str | None = None
        """The current mode id, as last announced."""
        self.title: str | None = None
        """The session title, as last announced."""
        self._stream: Stream | None = None
        self._buffer = ""
        self._committed = False
        self._ends_with_space = True
        self._line_open = False
        self._tools: dict[str, str] = {}
        self._running: dict[str, str] = {}
        self._waiting = False
        self._shown: dict[str, list[Any]] = {}
        self._live = LiveArea(console) if self.fancy else None
        if self.fancy:
            console.soft_wrap = False  # rich wraps at word boundaries; streamed plain text is never wrapped

    # --- streams ------------------------------------------------------------------------------

    def _open(self, kind: Stream) -> None:
        if self._stream == kind:
            return
        self.end_line()
        self._stream = kind
        self._buffer = ""
        self._committed = False
        self._ends_with_space = True
        if not self.fancy and kind in _PREFIX:
            prefix, style = _PREFIX[kind]
            self.console.print(Text(prefix, style=style), end="")
            self._line_open = True

    def _stream_text(self, kind: Stream, text: str) -> None:
        """Add `text` (already printable) to the `kind` stream."""
        self._open(kind)
        if not text:
            return
        self._ends_with_space = text[-1].isspace()
        if not self.fancy:
            self.console.print(Text(text, style=_STREAM_STYLE[kind]), end="")
            self._line_open = not text.endswith("\n")
            return
        self._buffer += text
        split = split_markdown if kind == "text" else split_lines
        done, rest = split(self._buffer)
        if done:
            self._buffer = rest
            self._commit(kind, done)
        self._show_tail()

    def _commit(self, kind: Stream, text: str) -> None:
        """Print a finished part of the stream for good (markdown for agent text)."""
        if not text.strip():
            return
        if kind == "text":
            if self._committed:
                self.console.print()
            self.console.print(Markdown(text.strip("\n")))
        else:
            self.console.print(self._stream_line(kind, text.rstrip("\n")))
        self._committed = True

    def _stream_line(self, kind: Stream, text: str) -> Text:
        line = Text()
        if kind in _PREFIX and not self._committed:
            prefix, style = _PREFIX[kind]
            line.append(prefix, style=style)
        line.append(text, style=_STREAM_STYLE[kind])
        return line

    def _show_tail(self) -> None:
        if self._live is None:
            return
        tail: RenderableType | None = None
        if self._stream is not None and self._buffer.strip():
            kind = self._stream
            tail = Markdown(self._buffer) if kind == "text" else self._stream_line(kind, self._buffer)
        self._live.set_tail(tail)

    def end_line(self) -> None:
        """Finish an open stream: print what is left of it (with a newline)."""
        if self._stream is None:
            return
        kind, self._stream = self._stream, None
        if self.fancy:
            rest, self._buffer = self._buffer, ""
            self._show_tail()
            self._commit(kind, rest)
        elif self._line_open:
            self.console.print()
            self._line_open = False

    def note(self, message: str, *, style: str = "dim") -> None:
        """A line of the client's own (attachments, cancellation, errors); `message` is made printable."""
        self.end_line()
        self.console.print(_text(message, style=style))

    # --- the status line ------------------------------------------------------------------------

    def starting(self) -> None:
        """The agent process was started: show the status line until it answers `initialize`."""
        if self._live is not None:
            self._live.set_status("starting the agent")

    def waiting(self) -> None:
        """The prompt was sent: show the status line until the agent shows something."""
        self._waiting = True
        self._running.clear()
        self._show_status()

    def _show_status(self) -> None:
        if self._live is None:
            return
        status: str | None = None
        if self._running:
            titles = list(self._running.values())
            status = f"running {titles[-1]}" + (f" (+{len(titles) - 1} more)" if len(titles) > 1 else "")
        elif self._waiting:
            status = "waiting for the agent"
        self._live.set_status(status)

    def idle(self) -> None:
        """The turn is over (or a question is asked): clear the status line and finish the stream."""
        self.end_line()
        self._waiting = False
        self._running.clear()
        if self._live is not None:
            self._live.set_status(None)
            self._live.stop()

    def pause(self) -> Callable[[], None]:
        """Hand the terminal to a prompt (a permission question) until the returned function is called."""
        self.end_line()
        if self._live is None:
            return lambda: None
        return self._live.pause()

    # --- updates ------------------------------------------------------------------------------

    def update(self, update: Any) -> None:
        """Show one `session/update`."""
        if isinstance(update, AgentMessageChunk | AgentThoughtChunk | ToolCallStart | AgentPlanUpdate):
            self._waiting = False
        if isinstance(update, AgentMessageChunk):
            self._stream_text("text", _block_text(update.content))
        elif isinstance(update, AgentThoughtChunk):
            if self.show_thoughts:
                self._stream_text("thought", _block_text(update.content))
        elif isinstance(update, UserMessageChunk):
            text = _block_text(update.content)
            after_text = self._stream == "user" and not self._ends_with_space
            if after_text and not isinstance(update.content, TextContentBlock):
                text = " " + text  # `you: look at [resource: file:///...]`
            self._stream_text("user", text)
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
                self.title = printable(update.title)
        elif isinstance(update, UsageUpdate):
            cost = f", cost {update.cost.amount:.4f} {update.cost.currency}" if update.cost else ""
            self.note(f"context: {update.used}/{update.size} tokens{cost}")
        self._show_status()

    def _tool_start(self, update: ToolCallStart) -> None:
        self.end_line()
        title = printable(update.title)
        self._tools[update.tool_call_id] = title
        status = update.status or "pending"
        self._track(update.tool_call_id, status, title)
        line = Text("▸ ", style="bold yellow")
        line.append(title, style="bold")
        line.append(f"  [{printable(update.kind or 'other')}]", style="magenta")
        line.append(f" {_STATUS_MARK.get(status, '')} {printable(status)}", style="dim")
        self.console.print(line)
        for loc in update.locations or []:
            self.console.print(_text(f"    at {loc.path}{f':{loc.line}' if loc.line else ''}", style="dim"))
        self._new_tool_content(update.tool_call_id, update.content or [])

    def _tool_update(self, update: ToolCallProgress) -> None:
        if update.title:
            self._tools[update.tool_call_id] = printable(update.title)
        title = self._tools.get(update.tool_call_id) or printable(update.tool_call_id)
        if update.status:
            self._waiting = self._waiting or (update.tool_call_id in self._running)
            self._track(update.tool_call_id, update.status, title)
            self.end_line()
            style = {"completed": "green", "failed": "red"}.get(update.status, "yellow")
            line = Text(f"  {_STATUS_MARK.get(update.status, '')} ", style=style)
            line.append(title)
            line.append(f" {printable(update.status)}", style=style)
            if update.kind:
                line.append(f"  [{printable(update.kind)}]", style="magenta")
            self.console.print(line)
        self._new_tool_content(update.tool_call_id, update.content or [])

    def _track(self, tool_call_id: str, status: str, title: str) -> None:
        """Keep the set of running tool calls (for the status line); after the last one, wait for the agent."""
        if status in {"pending", "in_progress"}:
            self._running[tool_call_id] = title
        elif self._running.pop(tool_call_id, None) is not None and not self._running:
            self._waiting = True

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
                for raw in lines[:_MAX_TOOL_OUTPUT_LINES]:  # already printable; one screen line each
                    line = Text(f"    {raw}", style="dim")
                    if self.fancy:  # on a terminal, cut at the screen's edge rather than wrap
                        self.console.print(line, no_wrap=True, overflow="ellipsis")
                    else:
                        self.console.print(line)
                if len(lines) > _MAX_TOOL_OUTPUT_LINES:
                    self.console.print(Text(f"    … {len(lines) - _MAX_TOOL_OUTPUT_LINES} more lines", style="dim"))
            else:
                self.console.print(_text(f"    terminal {item.terminal_id}", style="dim"))

    def _diff(self, item: FileEditToolCallContent) -> None:
        self.end_line()
        self.console.print(_text(f"    diff {item.path}", style="bold"))
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
            self.console.print(_text(f"    {line}", style=style))

    def _plan(self, entries: list[PlanEntry]) -> None:
        self.end_line()
        self.console.print(Text("plan:", style="bold"))
        for entry in entries:
            style = {"completed": "green", "in_progress": "yellow"}.get(entry.status, "")
            self.console.print(_text(f"  {_PLAN_MARK.get(entry.status, '[ ]')} {entry.content}", style=style))

    # --- turns and questions ------------------------------------------------------------------

    def permission_question(self, tool_call: ToolCallUpdate, options: list[PermissionOption]) -> None:
        """Show a permission request and its numbered options."""
        self.end_line()
        title = printable(tool_call.title or "") or self._tools.get(tool_call.tool_call_id) or tool_call.tool_call_id
        line = Text("? ", style="bold red")
        line.append("permission: ", style="bold")
        line.append(printable(title))
        if tool_call.kind:
            line.append(f"  [{printable(tool_call.kind)}]", style="magenta")
        self.console.print(line)
        self._tool_content(tool_call.content or [])
        for i, option in enumerate(options, 1):
            self.console.print(_text(f"  {i}) {option.name} ({option.kind})"))

    def turn_end(self, response: PromptResponse, *, command: bool = False) -> None:
        """Close the turn with its stop reason and token usage.

        A slash `command` the agent answered itself (`/mode`, `/tools`: it ended `end_turn` and no
        model ran, so no usage) gets no stop line: it was not a turn of the conversation.
        """
        self.idle()
        if command and response.stop_reason == "end_turn" and response.usage is None:
            return
        parts = [f"stop: {printable(response.stop_reason)}"]
        usage = response.usage
        if usage is not None:
            parts.append(f"tokens: {usage.input_tokens} in, {usage.output_tokens} out")
            if usage.thought_tokens:
                parts.append(f"{usage.thought_tokens} thinking")
        self.console.print(Text(" · ".join(parts), style="dim"))
