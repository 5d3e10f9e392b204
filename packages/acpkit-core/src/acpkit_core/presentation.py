"""How a tool call is shown, per tool name or pattern, without writing a runner.

A [`ToolPresentation`][acpkit_core.presentation.ToolPresentation] says, for the tools whose name
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

Fields left `None` keep the core's defaults ([`classify_tool`][acpkit_core.tools.classify_tool],
[`tool_title`][acpkit_core.tools.tool_title], [`tool_locations`][acpkit_core.tools.tool_locations]).
The presets ([`TOOL_PRESETS`][acpkit_core.presentation.TOOL_PRESETS] and the functions that build
them) cover files, shells, web search and web fetch.

Presentations act in the turn's [`ToolCalls`][acpkit_core.tool_calls.ToolCalls], the one tool-call
lifecycle every runner reports through, so they take effect on every adapter.
"""

from __future__ import annotations

import json
import os
import string
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal, cast, get_args

from acp.helpers import text_block, tool_content, tool_terminal_ref
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    ResourceContentBlock,
    TerminalToolCallContent,
    ToolKind,
)

from .errors import UserError
from .runner import ToolCallContent

__all__ = [
    "TOOL_PRESETS",
    "ArgNames",
    "Diff",
    "OutputStyle",
    "ToolCallView",
    "ToolPresentation",
    "ToolPresenter",
    "disk_reader",
    "edit_file_tool",
    "kind_overrides",
    "presentation_for",
    "read_file_tool",
    "search_files_tool",
    "shell_tool",
    "web_fetch_tool",
    "web_search_tool",
    "write_file_tool",
]

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
        return _arg(self.args, names)


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
    [`ToolCallView`][acpkit_core.presentation.ToolCallView]. A template naming a missing argument, or a
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

    The one place the two options meet: [`classify_tool`][acpkit_core.tools.classify_tool] with these
    overrides gives a tool's kind for its call, its permission rules, the modes and `/tools`. An exact
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

ReadText = Callable[[str], Awaitable["str | None"]]
"""Reads a file's current text for a diff (`None`: no such file; raises when it cannot be read)."""

_DIFF_LIMIT = 1_000_000
_TITLE_LIMIT = 80


def disk_reader(*roots: str) -> ReadText:
    """A [`ReadText`][acpkit_core.presentation.ReadText] reading this machine's disk, inside `roots` only.

    For runners without a client connection to read through (a server turn reads through the
    client, so unsaved buffers count). A path outside `roots` raises `PermissionError`; a missing
    file reads as `None`.
    """
    bases = [os.path.realpath(root) for root in roots]

    async def read(path: str) -> str | None:
        real = os.path.realpath(path)
        if not any(real == base or real.startswith(base.rstrip(os.sep) + os.sep) for base in bases):
            raise PermissionError(f"{path} is outside {', '.join(roots)}")
        try:
            with open(real, encoding="utf-8", errors="replace") as file:
                return file.read(_DIFF_LIMIT + 1)
        except FileNotFoundError:
            return None

    return read


_RESULTS_LIMIT = 50


class ToolPresenter:
    """Applies a `tool_presentation` table to the calls of one turn.

    [`ToolCalls`][acpkit_core.tool_calls.ToolCalls] calls it; the server gives every turn one.
    """

    def __init__(self, table: Mapping[str, ToolPresentation], *, cwd: str, read_text: ReadText | None = None) -> None:
        """Present with `table`; paths relative to `cwd`; whole-file diffs through `read_text`."""
        self.table = table
        """Tool name or glob pattern -> presentation."""
        self.cwd = cwd
        """The session's working directory."""
        self.read_text = read_text
        """Reads a file's current text for a diff; without it, diffs show only the replaced text."""

    def find(self, name: str) -> ToolPresentation | None:
        """The presentation of tool `name`, if any."""
        return presentation_for(name, self.table)

    def _view(self, name: str, args: Mapping[str, Any] | None) -> ToolCallView:
        return ToolCallView(name=name, args=args or {}, cwd=self.cwd)

    def title(self, presentation: ToolPresentation, name: str, args: Mapping[str, Any] | None) -> str | None:
        """The presented title, or `None` for the default one."""
        view = self._view(name, args)
        title = presentation.title
        if title is None:
            if presentation.command is not None:
                command = view.arg(presentation.command)
                return _short(f"Run {command}") if isinstance(command, str) and command.strip() else None
            return None
        if callable(title):
            result = title(view)
            return _short(result) if result else None
        values = _TemplateArgs(view.args)
        try:
            return _short(title.format_map(values))
        except _MissingArg:
            return None

    def locations(
        self, presentation: ToolPresentation, name: str, args: Mapping[str, Any] | None
    ) -> list[tuple[str, int | None]] | None:
        """The presented locations, or `None` for the default ones."""
        spec = presentation.locations
        if spec is None:
            return None
        view = self._view(name, args)
        found: list[tuple[str, int | None]] = []
        if callable(spec):
            for item in spec(view):
                path, line = item if isinstance(item, tuple) else (item, None)
                found.append((self._absolute(path), line))
        else:
            for key in [spec] if isinstance(spec, str) else spec:
                value = _arg(view.args, key)
                for path in cast(Sequence[object], value) if isinstance(value, list | tuple) else [value]:
                    if isinstance(path, str) and path.strip():
                        found.append((self._absolute(path.strip()), None))
        line = _arg(view.args, presentation.line) if presentation.line is not None else None
        if found and isinstance(line, int) and not isinstance(line, bool) and line >= 1:
            found[0] = (found[0][0], line)
        unique: dict[str, int | None] = {}
        for path, at in found:
            unique.setdefault(path, at)
        return list(unique.items())

    async def content(
        self, presentation: ToolPresentation, name: str, args: Mapping[str, Any] | None
    ) -> list[ToolCallContent]:
        """The content shown from the announcement on: the diff, a long command, the `content` function's."""
        view = self._view(name, args)
        shown: list[ToolCallContent] = []
        if presentation.diff is not None:
            diff = await self._diff(presentation.diff, view)
            if diff is not None:
                shown.append(diff)
        if presentation.command is not None and presentation.title is None:
            command = view.arg(presentation.command)
            if isinstance(command, str) and ("\n" in command.strip() or len(command) > _TITLE_LIMIT - 4):
                shown.append(_fenced(command.strip(), "sh"))
        if presentation.content is not None:
            shown.extend(presentation.content(view))
        return shown

    async def _diff(self, spec: Diff, view: ToolCallView) -> FileEditToolCallContent | None:
        path = view.arg(spec.path)
        new = view.arg(spec.new)
        if not isinstance(path, str) or not path.strip() or not isinstance(new, str):
            return None
        path = self._absolute(path.strip())
        if spec.old is None:
            known, current = await self._current(path)
            if not known:
                return None  # an overwrite of a file we cannot read would look like a new file: show nothing
            return FileEditToolCallContent(type="diff", path=path, old_text=current, new_text=new)
        old = view.arg(spec.old)
        if not isinstance(old, str):
            return None
        known, current = await self._current(path)
        if known and current is not None and old and old in current:
            count = -1 if view.arg(spec.replace_all) is True else 1
            return FileEditToolCallContent(
                type="diff", path=path, old_text=current, new_text=current.replace(old, new, count)
            )
        return FileEditToolCallContent(type="diff", path=path, old_text=old, new_text=new)

    async def _current(self, path: str) -> tuple[bool, str | None]:
        """`(known, text)`: the file's text (`None`: no such file), or `known=False` when it cannot be read."""
        if self.read_text is None:
            return False, None
        try:
            text = await self.read_text(path)
        except Exception:  # outside the allowed directories, unreadable: no whole-file diff
            return False, None
        if text is not None and len(text) > _DIFF_LIMIT:
            return False, None
        return True, text

    def output(
        self,
        presentation: ToolPresentation,
        name: str,
        args: Mapping[str, Any] | None,
        *,
        raw_output: Any,
        content: Sequence[ToolCallContent],
        shown: Sequence[ToolCallContent],
    ) -> list[ToolCallContent]:
        """The output content of a finished call: `content` is the adapter's, `shown` what the call already shows."""
        style = presentation.output
        view = self._view(name, args)
        if callable(style):
            result = style(view, raw_output)
            return list(content) if result is None else list(result)
        if style == "text":
            return list(content)
        if style == "none":
            return []
        text = _output_text(content, raw_output)
        if style == "code":
            if not text:
                return list(content)
            paths = self.locations(presentation, name, args) or self._default_paths(view)
            return [_fenced(text, _language(paths[0][0]) if paths else "")]
        if style == "terminal":
            terminal = _terminal_id(raw_output)
            if terminal is not None:
                return [tool_terminal_ref(terminal)]
            if any(isinstance(item, TerminalToolCallContent) for item in shown):
                return []  # the live terminal already shows the output
            command = view.arg(presentation.command) if presentation.command is not None else None
            lines = [f"$ {command.strip()}"] if isinstance(command, str) and command.strip() else []
            if text:
                lines.append(text.rstrip("\n"))
            return [_fenced("\n".join(lines), "console")] if lines else list(content)
        links = _results(raw_output if raw_output is not None else text, self.cwd)
        return links if links else list(content)

    def _default_paths(self, view: ToolCallView) -> list[tuple[str, int | None]]:
        from .tools import tool_locations

        return tool_locations(view.args, self.cwd)

    def _absolute(self, path: str) -> str:
        if path.startswith("file://"):
            path = path[len("file://") :]
        path = os.path.expanduser(path) if path.startswith("~") else path
        return os.path.normpath(os.path.join(self.cwd, path))


class _MissingArg(KeyError):
    pass


class _TemplateArgs(dict[str, str]):
    """Template values: the call's arguments (snake or camel case), each cut to one short line."""

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__()
        self._args = args

    def __missing__(self, key: str) -> str:
        value = _arg(self._args, key)
        if value is None or value == "":
            raise _MissingArg(key)
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        return _short(text, 60)


def _norm(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


def _arg(args: Mapping[str, Any], names: ArgNames) -> Any:
    if not args:
        return None
    by_key = {_norm(k): v for k, v in args.items()}
    for name in [names] if isinstance(names, str) else names:
        value = by_key.get(_norm(name))
        if value is not None:
            return value
    return None


def _short(text: str, limit: int = _TITLE_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fenced(text: str, language: str) -> ContentToolCallContent:
    fence = "```"
    while fence in text:
        fence += "`"
    return tool_content(text_block(f"{fence}{language}\n{text}\n{fence}"))


_LANGUAGES: Mapping[str, str] = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".ts": "typescript",
    ".tsx": "tsx", ".jsx": "jsx", ".json": "json", ".md": "markdown", ".toml": "toml", ".yaml": "yaml",
    ".yml": "yaml", ".sh": "sh", ".bash": "bash", ".rs": "rust", ".go": "go", ".java": "java", ".c": "c",
    ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".rb": "ruby", ".html": "html", ".css": "css",
    ".sql": "sql", ".kt": "kotlin", ".swift": "swift", ".php": "php", ".xml": "xml", ".txt": "text",
}  # fmt: skip


def _language(path: str) -> str:
    return _LANGUAGES.get(os.path.splitext(path)[1].lower(), "")


def _output_text(content: Sequence[ToolCallContent], raw_output: Any) -> str:
    texts = [
        item.content.text
        for item in content
        if isinstance(item, ContentToolCallContent) and item.content.type == "text"
    ]
    if texts:
        return "\n".join(texts)
    if isinstance(raw_output, str):
        return raw_output
    return "" if raw_output is None else json.dumps(raw_output, default=str, indent=2)


def _terminal_id(raw_output: Any) -> str | None:
    if isinstance(raw_output, Mapping):
        for key in ("terminal_id", "terminalId"):
            value = cast(Mapping[str, Any], raw_output).get(key)
            if isinstance(value, str) and value:
                return value
    return None


_LIST_KEYS = ("results", "items", "matches", "hits", "files", "paths", "links", "organic", "data")
_URL_KEYS = ("url", "link", "href", "uri")
_PATH_KEYS = ("path", "file", "file_path", "filename")
_NAME_KEYS = ("title", "name")
_SNIPPET_KEYS = ("snippet", "description", "summary", "content", "text")


def _results(raw: Any, cwd: str) -> list[ToolCallContent]:
    """Search results as `resource_link` contents (at most 50, then a note of how many more)."""
    if isinstance(raw, str):
        stripped = raw.strip()
        try:
            raw = json.loads(stripped) if stripped[:1] in "[{" and stripped else None
        except ValueError:
            raw = None
        if raw is None:
            lines = [line.strip() for line in stripped.splitlines() if line.strip()]
            raw = lines if lines and all(_looks_like_target(line) for line in lines) else None
    if isinstance(raw, Mapping):
        mapping = cast(Mapping[str, Any], raw)
        raw = next((mapping[k] for k in _LIST_KEYS if isinstance(mapping.get(k), list)), None)
    if not isinstance(raw, list):
        return []
    links: list[ToolCallContent] = []
    items = cast(list[Any], raw)
    for item in items[:_RESULTS_LIMIT]:
        link = _link(item, cwd)
        if link is None:
            return []  # not a result list after all: show the output as text
        links.append(tool_content(link))
    if len(items) > _RESULTS_LIMIT:
        links.append(tool_content(text_block(f"… and {len(items) - _RESULTS_LIMIT} more")))
    return links


def _looks_like_target(text: str) -> bool:
    return " " not in text and ("://" in text or "/" in text or "." in text)


def _link(item: Any, cwd: str) -> ResourceContentBlock | None:
    if isinstance(item, str):
        fields: Mapping[str, Any] = {"url": item} if "://" in item else {"path": item}
    elif isinstance(item, Mapping):
        fields = cast(Mapping[str, Any], item)
    else:
        return None
    url = _arg(fields, _URL_KEYS)
    path = _arg(fields, _PATH_KEYS)
    if isinstance(url, str) and url.strip():
        uri = url.strip()
        name = uri
    elif isinstance(path, str) and path.strip():
        absolute = os.path.normpath(os.path.join(cwd, path.strip()))
        uri = "file://" + absolute
        relative = os.path.relpath(absolute, cwd)
        name = path.strip() if relative.startswith("..") else relative
    else:
        return None
    title = _arg(fields, _NAME_KEYS)
    snippet = _arg(fields, _SNIPPET_KEYS)
    return ResourceContentBlock(
        type="resource_link",
        uri=uri,
        name=name,
        title=_short(title, 120) if isinstance(title, str) and title.strip() else None,
        description=_short(snippet, 240) if isinstance(snippet, str) and snippet.strip() else None,
    )


# --- presets ---------------------------------------------------------------------------------------

_PATH: tuple[str, ...] = ("path", "file_path", "filepath", "file", "filename", "target_file", "absolute_path")
_LINE: tuple[str, ...] = ("line", "start_line", "line_number")


def read_file_tool(*, path: ArgNames = _PATH, line: ArgNames = _LINE) -> ToolPresentation:
    """A tool that reads a file: kind `read`, the file as location, the text read as a code block."""
    return ToolPresentation(kind="read", locations=path, line=line, output="code")


def write_file_tool(
    *, path: ArgNames = _PATH, content: ArgNames = ("content", "contents", "text", "file_text")
) -> ToolPresentation:
    """A tool that writes a whole file: kind `edit`, the file as location, a diff against its current text."""
    return ToolPresentation(kind="edit", locations=path, diff=Diff(path=path, new=content))


def edit_file_tool(
    *,
    path: ArgNames = _PATH,
    old: ArgNames = ("old_string", "old_str", "old_text", "old"),
    new: ArgNames = ("new_string", "new_str", "new_text", "new"),
) -> ToolPresentation:
    """A tool that replaces text in a file: kind `edit`, the file as location, the diff of the replacement."""
    return ToolPresentation(kind="edit", locations=path, diff=Diff(path=path, old=old, new=new))


def shell_tool(*, command: ArgNames = ("command", "cmd", "script")) -> ToolPresentation:
    """A tool that runs a shell command: kind `execute`, `Run <command>`, the output as a terminal."""
    return ToolPresentation(kind="execute", command=command, output="terminal")


def search_files_tool(*, pattern: ArgNames = ("pattern", "query", "regex", "glob")) -> ToolPresentation:
    """A tool that finds files (glob, grep): kind `search`, `Search "<pattern>"`, the files found as links."""
    names = [pattern] if isinstance(pattern, str) else list(pattern)
    return ToolPresentation(kind="search", title=_FirstArgTitle("Search", names, quoted=True), output="results")


def web_search_tool(*, query: ArgNames = ("query", "q", "search_query")) -> ToolPresentation:
    """A web search tool: kind `search`, `Search the web for "<query>"`, the results as links."""
    names = [query] if isinstance(query, str) else list(query)
    title = _FirstArgTitle("Search the web for", names, quoted=True)
    return ToolPresentation(kind="search", title=title, output="results")


def web_fetch_tool(*, url: ArgNames = ("url", "uri", "href", "link")) -> ToolPresentation:
    """A tool that fetches a URL: kind `fetch`, `Fetch <url>`, a link to the URL, the page as text."""
    names = [url] if isinstance(url, str) else list(url)

    def link(view: ToolCallView) -> list[ToolCallContent]:
        value = view.arg(names)
        if not isinstance(value, str) or "://" not in value:
            return []
        return [tool_content(ResourceContentBlock(type="resource_link", uri=value.strip(), name=value.strip()))]

    return ToolPresentation(kind="fetch", title=_FirstArgTitle("Fetch", names, quoted=False), content=link)


@dataclass(frozen=True, slots=True)
class _FirstArgTitle:
    """A title function: `<verb> <the first of names the call has>`."""

    verb: str
    names: Sequence[str]
    quoted: bool = False

    def __call__(self, view: ToolCallView) -> str | None:
        value = view.arg(self.names)
        if not isinstance(value, str) or not value.strip():
            return None
        value = _short(value, 60)
        return f'{self.verb} "{value}"' if self.quoted else f"{self.verb} {value}"


TOOL_PRESETS: Mapping[str, ToolPresentation] = {
    **dict.fromkeys(("read_file", "read", "view_file", "cat"), read_file_tool()),
    **dict.fromkeys(("write_file", "create_file", "write"), write_file_tool()),
    **dict.fromkeys(("edit_file", "edit", "str_replace", "replace_in_file"), edit_file_tool()),
    **dict.fromkeys(
        ("bash", "shell", "sh", "run_command", "run_shell_command", "execute", "execute_command", "terminal"),
        shell_tool(),
    ),
    **dict.fromkeys(("grep", "glob", "search_files", "find_files", "file_search"), search_files_tool()),
    **dict.fromkeys(
        ("web_search", "search_web", "internet_search", "tavily_search", "duckduckgo_search", "brave_search"),
        web_search_tool(),
    ),
    **dict.fromkeys(("web_fetch", "fetch", "fetch_url", "read_url", "http_get"), web_fetch_tool()),
}
"""Presets for common tool names (the names of Claude Code, DeepAgents, the LangChain community tools and
ACP Kit's client tools): file read / write / edit, shell, file search, web search, web fetch. Use it as
`tool_presentation=TOOL_PRESETS`, or extend it: `{**TOOL_PRESETS, "query_db": ToolPresentation(kind="read")}`."""
