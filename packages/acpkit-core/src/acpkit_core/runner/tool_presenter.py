"""The engine of tool presentation: a turn's tool calls shown as their
[`ToolPresentation`][acpkit_core.runner.tool_presentation.ToolPresentation] says.

[`ToolPresenter`][acpkit_core.runner.tool_presenter.ToolPresenter] fills in a call's title,
kind, locations, diff and shown output; [`ToolCalls`][acpkit_core.runner.tool_lifecycle.ToolCalls]
uses it at each transition.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from acp.helpers import text_block, tool_content, tool_terminal_ref
from acp.schema import ContentToolCallContent, FileEditToolCallContent, ResourceContentBlock, TerminalToolCallContent

from .tool_presentation import TITLE_LIMIT, Diff, ToolCallView, ToolPresentation, presentation_for, shorten, tool_arg
from .types import ToolCallContent

__all__ = ["ToolPresenter", "disk_reader"]


ReadText = Callable[[str], Awaitable["str | None"]]
"""Reads a file's current text for a diff (`None`: no such file; raises when it cannot be read)."""


_DIFF_LIMIT = 1_000_000


def disk_reader(*roots: str) -> ReadText:
    """A [`ReadText`][acpkit_core.runner.tool_presenter.ReadText] reading this machine's disk, inside `roots` only.

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

    [`ToolCalls`][acpkit_core.runner.tool_lifecycle.ToolCalls] calls it; the server gives every turn one.
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
                return shorten(f"Run {command}") if isinstance(command, str) and command.strip() else None
            return None
        if callable(title):
            result = title(view)
            return shorten(result) if result else None
        values = _TemplateArgs(view.args)
        try:
            return shorten(title.format_map(values))
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
                value = tool_arg(view.args, key)
                for path in cast(Sequence[object], value) if isinstance(value, list | tuple) else [value]:
                    if isinstance(path, str) and path.strip():
                        found.append((self._absolute(path.strip()), None))
        line = tool_arg(view.args, presentation.line) if presentation.line is not None else None
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
            if isinstance(command, str) and ("\n" in command.strip() or len(command) > TITLE_LIMIT - 4):
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
        from .tool_classification import tool_locations

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
        value = tool_arg(self._args, key)
        if value is None or value == "":
            raise _MissingArg(key)
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        return shorten(text, 60)


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
    url = tool_arg(fields, _URL_KEYS)
    path = tool_arg(fields, _PATH_KEYS)
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
    title = tool_arg(fields, _NAME_KEYS)
    snippet = tool_arg(fields, _SNIPPET_KEYS)
    return ResourceContentBlock(
        type="resource_link",
        uri=uri,
        name=name,
        title=shorten(title, 120) if isinstance(title, str) and title.strip() else None,
        description=shorten(snippet, 240) if isinstance(snippet, str) and snippet.strip() else None,
    )
