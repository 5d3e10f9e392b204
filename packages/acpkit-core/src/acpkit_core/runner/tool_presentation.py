"""How a tool call is shown, per tool name or pattern, without writing a runner.

A [`ToolPresentation`][acpkit_core.runner.tool_presentation.ToolPresentation] says, for the tools whose name
matches its key in the `tool_presentation` option, what the client sees:

| field | shown as |
|---|---|
| `kind` | the call's ACP kind (it also feeds the permission policy and the modes) |
| `title` | the title: a template over the arguments (`"Query {table}"`) or a function |
| `locations` | the files the editor follows: argument names holding paths, or a function |
| `diff` | a `diff` content computed from the arguments, shown from the moment the call is announced |
| `command` | the argument holding a shell command (the title, the console output, a long command's text) |
| `content` | any content computed from the arguments (a function) |
| `output` | how the result is shown: `text`, `code`, `terminal`, `results`, `none`, or a function |

Fields left `None` keep the core's defaults
([`classify_tool`][acpkit_core.runner.tool_classification.classify_tool],
[`tool_title`][acpkit_core.runner.tool_classification.tool_title],
[`tool_locations`][acpkit_core.runner.tool_classification.tool_locations]).
The presets ([`TOOL_PRESETS`][acpkit_core.runner.tool_presets.TOOL_PRESETS] and the functions that build
them) cover files, shells, web search and web fetch.

Presentations act in the turn's [`ToolCalls`][acpkit_core.runner.tool_lifecycle.ToolCalls], the one tool-call
lifecycle every runner reports through, so they take effect on every adapter.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal, get_args

from acp.schema import (
    ToolKind,
)

from ..errors import UserError
from .types import ToolCallContent

__all__ = ["ArgNames", "Diff", "OutputStyle", "ToolCallView", "ToolPresentation", "kind_overrides", "presentation_for"]

ArgNames = str | Sequence[str]
"""An argument name, or several candidates (the first one the call has wins). Names match in snake
or camel case: `"file_path"` also finds `filePath`."""

OutputStyle = Literal["text", "code", "terminal", "results", "none"]
"""How a finished call's output is shown:

- `text`: as the adapter shows it (the tool's output as text);
- `code`: in a fenced code block, in the language of the call's first file (`.py` -> `python`);
- `terminal`: the client's terminal when the output names one (`terminal_id`), else the command and
  its output as a `console` block;
- `results`: a list of search results (URLs or paths, with titles and snippets) as resource links;
- `none`: no output content (the diff or terminal stays; `rawOutput` is still sent).
"""

_STYLES: frozenset[str] = frozenset(get_args(OutputStyle))
_KINDS: frozenset[str] = frozenset(get_args(ToolKind))


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallView:
    """A tool call as a presentation function sees it."""

    name: str
    """The tool's name."""
    args: Mapping[str, Any]
    """The call's arguments (`{}` while unknown)."""
    cwd: str
    """The session's working directory (relative paths are resolved against it)."""

    def arg(self, names: ArgNames) -> Any:
        """The value of the first of `names` the call has (snake or camel case), else `None`."""
        return tool_arg(self.args, names)


@dataclass(frozen=True, slots=True, kw_only=True)
class Diff:
    """A `diff` content computed from the call's arguments.

    With `old`, the call replaces the text `old` by `new` in the file at `path` (an edit tool); the
    diff covers the whole file when the file can be read (through the client, so unsaved buffers
    count), else just the replaced text. Without `old`, `new` is the file's whole new text (a write
    tool); the diff is against the file's current text, and shows a new file when there is none.
    """

    path: ArgNames = ("path", "file_path", "filepath", "file", "filename", "target_file", "absolute_path")
    """The argument holding the file's path (relative paths are joined to the session's cwd)."""
    new: ArgNames = ("content", "contents", "text", "file_text", "new_content")
    """The argument holding the new text."""
    old: ArgNames | None = None
    """The argument holding the text `new` replaces; `None` for a write of the whole file."""
    replace_all: ArgNames = ("replace_all", "replaceAll")
    """The boolean argument asking to replace every occurrence of `old` (default: the first only)."""


TitleFunction = Callable[[ToolCallView], "str | None"]
LocationsFunction = Callable[[ToolCallView], "Sequence[str | tuple[str, int | None]]"]
ContentFunction = Callable[[ToolCallView], "Sequence[ToolCallContent]"]
OutputFunction = Callable[[ToolCallView, Any], "Sequence[ToolCallContent] | None"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolPresentation:
    """How the calls of a tool are shown (see the module docs); `None` keeps the default.

    Raises `UserError` for a kind that is not an ACP kind, an unknown output style, or a title
    template that does not parse.
    """

    kind: ToolKind | None = None
    """The ACP kind. It is the tool's kind everywhere: permission rules and modes see it too."""
    title: str | TitleFunction | None = None
    """A template over the arguments (`"Query {table}"`, values cut to one line), or a function of the
    [`ToolCallView`][acpkit_core.runner.tool_presentation.ToolCallView]. A template naming a missing argument, or a
    function returning `None`, gives the default title."""
    locations: ArgNames | LocationsFunction | None = None
    """Arguments holding the paths the call touches, or a function giving paths (or `(path, line)`)."""
    line: ArgNames | None = None
    """The argument holding the 1-based line of the first location."""
    diff: Diff | None = None
    """A diff computed from the arguments, shown while the call is pending (so a permission question
    shows it) and kept when it finishes."""
    command: ArgNames | None = None
    """The argument holding a shell command: the default title is `Run <command>`, a command too long
    for the title is shown as a `sh` block, and the `terminal` output style starts with `$ <command>`."""
    content: ContentFunction | None = None
    """More content computed from the arguments, shown from the moment the call is announced."""
    output: OutputStyle | OutputFunction = "text"
    """How the result is shown: a style, or a function `(call, raw output) -> content` (returning `None`
    keeps `text`). The raw output is what the adapter reports as `rawOutput` before it is wrapped in an
    object: the tool's return value in pydantic-ai (its text when it is not JSON), the `ToolMessage`
    content in LangChain (usually text). A failed call always shows its error as text."""

    def __post_init__(self) -> None:
        if self.kind is not None and self.kind not in _KINDS:
            kinds = ", ".join(sorted(_KINDS))
            raise UserError(f"ToolPresentation.kind={self.kind!r} is not an ACP tool kind ({kinds})")
        if isinstance(self.output, str) and self.output not in _STYLES:
            raise UserError(
                f"ToolPresentation.output={self.output!r} is not an output style ({', '.join(sorted(_STYLES))}) "
                "or a function"
            )
        if isinstance(self.title, str):
            try:
                fields = [f for _, f, _, _ in string.Formatter().parse(self.title) if f is not None]
            except ValueError as error:
                raise UserError(f"ToolPresentation.title={self.title!r}: {error}") from error
            if any(not f.isidentifier() for f in fields):
                raise UserError(f"ToolPresentation.title={self.title!r}: fields must be argument names, like {{path}}")


def presentation_for(name: str, table: Mapping[str, ToolPresentation] | None) -> ToolPresentation | None:
    """The presentation of tool `name`: its exact name first, then glob patterns in their order."""
    if not table:
        return None
    found = table.get(name)
    if found is not None:
        return found
    for pattern, presentation in table.items():
        if fnmatchcase(name, pattern):
            return presentation
    return None


def kind_overrides(
    tool_kinds: Mapping[str, ToolKind], presentation: Mapping[str, ToolPresentation] | None
) -> dict[str, ToolKind]:
    """The kind overrides a turn classifies tools with: `tool_kinds`, then the presentations' kinds.

    The one place the two options meet:
    [`classify_tool`][acpkit_core.runner.tool_classification.classify_tool] with these overrides gives
    a tool's kind for its call, its permission rules, the modes and `/tools`. An exact
    name beats a pattern; for the same key, `tool_kinds` wins.
    """
    merged = dict(tool_kinds)
    for key, value in (presentation or {}).items():
        if value.kind is not None and key not in merged:
            merged[key] = value.kind
    return merged


def validate_presentation(table: Mapping[str, ToolPresentation]) -> None:
    """Raise `UserError` for a `tool_presentation` entry that is not a name/pattern -> `ToolPresentation`."""
    for key, value in table.items():
        if not isinstance(key, str) or not key:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UserError(f"tool_presentation: the keys are tool names or glob patterns, got {key!r}")
        if not isinstance(value, ToolPresentation):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UserError(
                f"tool_presentation[{key!r}]: expected a ToolPresentation, got {type(value).__name__} "
                "(build one with ToolPresentation(...) or a preset such as shell_tool())"
            )


# --- applying a presentation ---------------------------------------------------------------------


TITLE_LIMIT = 80


def _norm(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


def tool_arg(args: Mapping[str, Any], names: ArgNames) -> Any:
    if not args:
        return None
    by_key = {_norm(k): v for k, v in args.items()}
    for name in [names] if isinstance(names, str) else names:
        value = by_key.get(_norm(name))
        if value is not None:
            return value
    return None


def shorten(text: str, limit: int = TITLE_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- presets ---------------------------------------------------------------------------------------
