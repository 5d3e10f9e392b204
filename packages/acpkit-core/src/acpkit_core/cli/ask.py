"""The terminal input of `acpkit chat`: the prompt line (history, `/` and `@` completion) and permission answers.

`prompt_toolkit` is imported only here, and only by `acpkit chat`.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from acp.schema import (
    AllowedOutcome,
    AvailableCommand,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
)
from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.output import create_output

from ..store.base import default_store_path
from .sanitize import printable

__all__ = [
    "AutoAnswer",
    "LineReader",
    "ask_stdin",
    "cancelled",
    "choose_option",
    "history_path",
    "parse_answer",
    "selected",
]

AutoAnswer = Literal["yes", "no"] | None
"""`--yes`, `--no`, or ask."""


def history_path() -> Path:
    """Where the prompt history lives: beside the default session store in the state directory."""
    return default_store_path().parent / "chat-history"


def choose_option(options: list[PermissionOption], answer: Literal["yes", "no"]) -> PermissionOption | None:
    """The option an automatic answer picks: the `*_once` kind first, then the `*_always` kind."""
    prefix = "allow" if answer == "yes" else "reject"
    for kind in (f"{prefix}_once", f"{prefix}_always"):
        for option in options:
            if option.kind == kind:
                return option
    return None


def parse_answer(text: str, options: list[PermissionOption]) -> PermissionOption | None:
    """Read a typed answer: an option number, `y` (allow once), `a` (allow always), `n` (reject once)."""
    text = text.strip().lower()
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1]
    if text in {"y", "yes"}:
        return choose_option(options, "yes")
    if text in {"n", "no"}:
        return choose_option(options, "no")
    if text in {"a", "always"}:
        return next((o for o in options if o.kind == "allow_always"), None)
    return None


def selected(option: PermissionOption) -> RequestPermissionResponse:
    """The response selecting `option`."""
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option.option_id))


def cancelled() -> RequestPermissionResponse:
    """The response for a question the user did not answer (cancelled turn)."""
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


class _ChatCompleter(Completer):
    """Completes `/commands` at the start of the line and `@paths` anywhere."""

    def __init__(self, commands: Callable[[], list[AvailableCommand]], cwd: Path) -> None:
        self._commands = commands
        self._cwd = cwd
        self._paths = PathCompleter(get_paths=lambda: [str(cwd)], expanduser=True)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            typed = before[1:]
            for command in self._commands():
                if command.name.startswith(typed):
                    meta = printable(command.description)
                    yield Completion(printable(command.name), start_position=-len(typed), display_meta=meta)
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            typed = word[1:]
            inner = Document(typed, len(typed))
            for completion in self._paths.get_completions(inner, complete_event):
                yield self._with_slash(typed, completion)

    def _with_slash(self, typed: str, completion: Completion) -> Completion:
        """A directory completes with a trailing `/`, so Tab goes on into it."""
        full = typed[: len(typed) + completion.start_position] + completion.text
        if full.endswith("/") or not (self._cwd / Path(full).expanduser()).is_dir():
            return completion
        return Completion(
            completion.text + "/",
            start_position=completion.start_position,
            display=completion.display,
            display_meta=completion.display_meta,
        )


class LineReader:
    """The interactive prompt line and the permission question, on one `prompt_toolkit` session each."""

    def __init__(
        self, commands: Callable[[], list[AvailableCommand]], cwd: Path, *, questions_on_stderr: bool = False
    ) -> None:
        history: History
        try:
            path = history_path()
            path.parent.mkdir(parents=True, exist_ok=True)
            history = FileHistory(str(path))
        except OSError:
            history = InMemoryHistory()
        self._line: PromptSession[str] = PromptSession(
            history=history, completer=_ChatCompleter(commands, cwd), complete_while_typing=True
        )
        # with --json, stdout carries the transcript: ask on stderr
        output = create_output(stdout=sys.stderr) if questions_on_stderr else None
        self._question: PromptSession[str] = PromptSession(output=output)
        self._default = ""

    def prefill(self, text: str) -> None:
        """Start the next prompt line with `text` (a rewound prompt, to edit and send again)."""
        self._default = text

    async def read_line(self) -> str:
        """The next prompt line; raises `EOFError` (Ctrl-D) or `KeyboardInterrupt` (Ctrl-C)."""
        default, self._default = self._default, ""
        return await self._line.prompt_async("> ", handle_sigint=False, default=default)

    async def read_answer(self, question: str) -> str | None:
        """One line answering `question` (`None` when the user pressed Ctrl-C or Ctrl-D)."""
        try:
            return await self._question.prompt_async(question, handle_sigint=False)
        except (KeyboardInterrupt, EOFError):
            return None

    async def ask(self, options: list[PermissionOption]) -> PermissionOption | None:
        """Ask until the answer names an option; `None` when the user pressed Ctrl-C or Ctrl-D."""
        hint = f"answer [1-{len(options)}, y/n]: "
        while True:
            try:
                text = await self._question.prompt_async(hint, handle_sigint=False)
            except (KeyboardInterrupt, EOFError):
                return None
            option = parse_answer(text, options)
            if option is not None:
                return option


async def ask_stdin(options: list[PermissionOption]) -> PermissionOption | None:
    """Without a terminal: read one answer line from stdin; end of input rejects."""
    sys.stderr.write(f"answer [1-{len(options)}, y/n] on stdin: ")
    sys.stderr.flush()
    line = await asyncio.to_thread(sys.stdin.readline)
    if not line:
        sys.stderr.write("(no input left: rejected; --yes allows every request, --no rejects without asking)\n")
        return choose_option(options, "no")
    answer = parse_answer(line, options)
    if answer is None:
        sys.stderr.write(f"({line.strip()!r} names no option: rejected)\n")
        return choose_option(options, "no")
    return answer
