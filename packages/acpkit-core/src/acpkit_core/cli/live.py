"""The bottom of the terminal while a turn runs: the message still streaming, and a status line.

On a terminal, `acpkit chat` prints each finished part of a message once, for good, and keeps only
the part still arriving (the current markdown block) in a `rich` live region, redrawn in place, with
the status line (a spinner, what the agent is doing, the seconds it has taken) under it. Nothing is
ever printed twice: the live region is cleared before a part is printed for good.

[`split_markdown`][acpkit_core.cli.live.split_markdown] decides which part of a streamed message is
finished: everything up to the last blank line outside a code fence, once the next block has begun.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.segment import Segment
from rich.spinner import Spinner
from rich.text import Text

__all__ = ["LiveArea", "split_lines", "split_markdown"]

_FENCES = ("```", "~~~")


def split_markdown(text: str) -> tuple[str, str]:
    """Split streamed markdown into (finished blocks, the block still arriving).

    A block is finished at a blank line outside a fenced code block, once a line that is not
    indented follows it (an indented line may continue a list item), or when its fence closed.
    """
    fence: str | None = None
    cut = 0
    blank_at: int | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        complete = line.endswith("\n")
        if fence is not None:
            if complete and stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
                cut = pos + len(line)
                blank_at = None
        elif not stripped:
            if complete:
                blank_at = pos + len(line)
        else:
            if blank_at is not None and not line[0].isspace():
                cut = blank_at
            blank_at = None
            if complete and stripped.startswith(_FENCES):
                fence = stripped[:3]
        pos += len(line)
    return text[:cut], text[cut:]


def split_lines(text: str) -> tuple[str, str]:
    """Split streamed plain text into (finished lines, the line still arriving)."""
    cut = text.rfind("\n") + 1
    return text[:cut], text[cut:]


class _Bottom:
    """A renderable showing only the last `height` lines of another (the newest text)."""

    def __init__(self, renderable: RenderableType, height: int) -> None:
        self.renderable = renderable
        self.height = height

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options, pad=False)
        for line in lines[-self.height :] if self.height > 0 else []:
            yield from line
            yield Segment.line()


class LiveArea:
    """A `rich` live region: the unfinished part of a stream above a status line (terminal only).

    It runs only while it has something to show, and never while `paused` (a question is asked).
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.tail: RenderableType | None = None
        """The part of the current stream still arriving."""
        self.status: str | None = None
        """What the agent is doing, or `None` for no status line."""
        self.paused = False
        """Set while the terminal belongs to someone else (a prompt)."""
        self._since = time.monotonic()
        self._live: Live | None = None

    def set_status(self, status: str | None) -> None:
        """Show `status` under the stream (the elapsed time restarts when it changes)."""
        if status != self.status:
            self._since = time.monotonic()
        self.status = status
        self.refresh()

    def set_tail(self, tail: RenderableType | None) -> None:
        """Show `tail` as the unfinished part of the stream."""
        self.tail = tail
        self.refresh()

    def refresh(self) -> None:
        """Start, redraw or stop the region to match what it has to show."""
        wanted = not self.paused and (self.tail is not None or self.status is not None)
        if not wanted:
            self.stop()
            return
        if self._live is None:
            self._live = Live(
                console=self.console,
                get_renderable=self._render,
                refresh_per_second=8,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
                vertical_overflow="crop",
            )
            self._live.start()
        else:
            self._live.refresh()

    def stop(self) -> None:
        """Clear the region from the screen."""
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()

    def pause(self) -> Callable[[], None]:
        """Clear the region until the returned function is called."""
        self.paused = True
        self.stop()

        def resume() -> None:
            self.paused = False
            self.refresh()

        return resume

    def _render(self) -> RenderableType:
        parts: list[RenderableType] = []
        height = self.console.size.height
        if self.tail is not None:
            parts.append(_Bottom(self.tail, height - (2 if self.status else 1)))
        if self.status is not None:
            seconds = int(time.monotonic() - self._since)
            label = Text(self.status, style="dim")
            if seconds:
                label.append(f" · {seconds}s", style="dim")
            label.append(" · Ctrl-C to cancel", style="dim")
            parts.append(Spinner("dots", text=label, style="cyan"))
        return Group(*parts)
