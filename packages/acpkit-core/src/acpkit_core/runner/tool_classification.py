"""Tool calls as an editor sees them: the ACP kind, a short title, the file locations, a diff.

- [`classify_tool`][acpkit_core.runner.tool_classification.classify_tool] maps a tool name (and, for a few
  multi-command tools, its arguments) to an ACP `ToolKind` through a word table;
- [`tool_title`][acpkit_core.runner.tool_classification.tool_title] gives a human title
  (`Read src/app.py`, `Run pytest -q`);
- [`tool_locations`][acpkit_core.runner.tool_classification.tool_locations] finds path-like arguments
  for the editor's follow-along, as absolute paths with 1-based lines;
- [`diff_content`][acpkit_core.runner.tool_classification.diff_content] builds the `diff` content of an edit tool call.

All of them are pure functions: no file is read, nothing is cached across calls except the word
splitting of tool names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from acp.schema import FileEditToolCallContent, ToolKind

from ..errors import UserError

__all__ = [
    "KIND_WORDS",
    "classify_tool",
    "diff_content",
    "tool_locations",
    "tool_title",
    "tool_words",
]

# --- Classification -----------------------------------------------------------------------------

# Each kind with the words that signal it, strongest kinds first: when a name holds words of
# several kinds (`create_terminal`, `web_search`, `write_todos`), the earliest kind in this table
# wins. `mode` makes a mode switch (`exit_plan_mode`); `todo`/`plan` make a planning ("think")
# tool whatever its verb; running something beats changing files; changing files beats looking
# things up; searching beats fetching (so `web_search` is a search) and fetching beats reading
# (so `read_url` is a fetch).
KIND_WORDS: Mapping[ToolKind, frozenset[str]] = {
    "switch_mode": frozenset({"mode"}),
    "think": frozenset("think thinking thought reason reasoning todo todos plan planner".split()),  # noqa: SIM905
    "execute": frozenset(
        "bash sh zsh shell terminal exec execute run command cmd powershell pwsh subprocess spawn eval repl "  # noqa: SIM905
        "python script".split()
    ),
    "delete": frozenset("delete remove rm rmdir unlink del erase trash destroy".split()),  # noqa: SIM905
    "move": frozenset("move mv rename relocate".split()),  # noqa: SIM905
    "edit": frozenset(
        "write edit editor edits replace patch create insert append modify update save overwrite touch mkdir "  # noqa: SIM905
        "cp copy apply".split()
    ),
    "search": frozenset("search grep rg ripgrep find glob query lookup locate ls list tree codebase".split()),  # noqa: SIM905
    "fetch": frozenset("fetch http https url web download curl wget browse browser".split()),  # noqa: SIM905
    "read": frozenset("read cat view open load show head tail stat inspect".split()),  # noqa: SIM905
}
"""The word table behind [`classify_tool`][acpkit_core.runner.tool_classification.classify_tool], strongest
kind first."""

_KIND_OF_WORD: dict[str, ToolKind] = {}
for _kind, _words in reversed(list(KIND_WORDS.items())):
    _KIND_OF_WORD.update(dict.fromkeys(_words, _kind))
_RANK: dict[ToolKind, int] = {kind: rank for rank, kind in enumerate(KIND_WORDS)}

# Words that carry no kind but help split names written without separators (`readfile`, `todowrite`).
_NEUTRAL_WORDS = frozenset(
    "file files dir directory directories folder text content contents multi notebook tool path paths code "  # noqa: SIM905
    "page pages to and all new old line lines item items task tasks str fs mcp".split()
)
_VOCABULARY = frozenset(_KIND_OF_WORD) | _NEUTRAL_WORDS

# Tools that take a sub-command argument (`{"command": "view"}`), where the argument says the kind.
_MULTI_COMMAND_TOOLS = frozenset(
    "str_replace_editor str_replace_based_edit_tool text_editor file files fs filesystem file_system".split()  # noqa: SIM905
)
_SUBCOMMAND_KEYS = ("command", "action", "operation", "op", "subcommand")

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _segment(word: str) -> tuple[str, ...]:
    """Split a run-together word (`readfile`) into known words, or keep it whole."""
    if word in _VOCABULARY or len(word) > 40:
        return (word,)
    # best[i]: the fewest known words covering word[:i]
    best: list[tuple[str, ...] | None] = [None] * (len(word) + 1)
    best[0] = ()
    for end in range(1, len(word) + 1):
        for start in range(end):
            head = best[start]
            if head is not None and word[start:end] in _VOCABULARY:
                candidate = (*head, word[start:end])
                current = best[end]
                if current is None or len(candidate) < len(current):
                    best[end] = candidate
    return best[-1] or (word,)


@lru_cache(maxsize=2048)
def tool_words(name: str) -> tuple[str, ...]:
    """The lower-case words of a tool name.

    Splits on `_`, `-`, `.`, `/`, `:` and spaces, on camelCase, and run-together known words;
    drops the `mcp__<server>__` prefix of MCP tools: `mcp__fs__readFile` gives `("read", "file")`.
    """
    if name.startswith("mcp__"):
        parts = [p for p in name.split("__") if p]
        if len(parts) >= 3:
            name = "__".join(parts[2:])
    words: list[str] = []
    for chunk in re.split(r"[\s_\-./:]+", name):
        for piece in _CAMEL.findall(chunk):
            words.extend(_segment(piece.lower()))
    return tuple(words)


def _kind_of_words(words: Sequence[str]) -> ToolKind:
    kinds: list[ToolKind] = [_KIND_OF_WORD[w] for w in words if w in _KIND_OF_WORD]
    if not kinds:
        return "other"
    return min(kinds, key=_RANK.__getitem__)


def classify_tool(
    name: str,
    args: Mapping[str, Any] | None = None,
    overrides: Mapping[str, ToolKind] | None = None,
) -> ToolKind:
    """The ACP tool kind of the tool `name`.

    1. `overrides` win: an exact name first, then glob patterns in their order (`{"mcp__db__*": "read"}`).
    2. The words of the name (see [`tool_words`][acpkit_core.runner.tool_classification.tool_words]) are looked up in
       [`KIND_WORDS`][acpkit_core.runner.tool_classification.KIND_WORDS]; the strongest kind found wins:
       `read_file` -> read, `run_command` -> execute, `web_search` -> search, `write_todos` -> think.
    3. For multi-command tools (`str_replace_editor`, ...) and tools whose name says nothing, a
       sub-command argument (`command`, `action`, `operation`) decides when it names a kind:
       `str_replace_editor` with `{"command": "view"}` -> read.
    4. Otherwise `other`.
    """
    if overrides:
        kind = overrides.get(name)
        if kind is not None:
            return kind
        for pattern, kind in overrides.items():
            if fnmatchcase(name, pattern):
                return kind
    words = tool_words(name)
    kind = _kind_of_words(words)
    if args and (kind == "other" or "_".join(words) in _MULTI_COMMAND_TOOLS or name in _MULTI_COMMAND_TOOLS):
        for key in _SUBCOMMAND_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value and len(value) < 64 and " " not in value.strip():
                sub_kind = _kind_of_words(tool_words(value))
                if sub_kind != "other":
                    return sub_kind
    return kind


# --- Locations ----------------------------------------------------------------------------------

_PATH_KEYS = (
    "path", "filepath", "file", "filename", "target", "targetfile", "notebookpath", "absolutepath", "source",
    "src", "oldpath", "destination", "dest", "dst", "newpath", "directory", "dir",
)  # fmt: skip
_PATH_LIST_KEYS = ("paths", "filepaths", "files", "filenames", "targets")
_LINE_KEYS = ("line", "startline", "linenumber", "lineno", "fromline")


def _norm_key(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


def _as_path(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    if not value or len(value) > 4096 or "\n" in value or "\x00" in value:
        return None
    if "://" in value:
        parts = urlsplit(value)
        if parts.scheme != "file":
            return None
        value = unquote(parts.path)
    return value


def _line(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    return value if isinstance(value, int) and value >= 1 else None


def tool_locations(
    args: Mapping[str, Any] | None, cwd: str, *, roots: Sequence[str] | None = None
) -> list[tuple[str, int | None]]:
    """File locations named by a tool call's arguments: `(absolute path, 1-based line or None)`.

    Looks at path-like keys (`path`, `file_path`, `filename`, `target`, `source`/`destination`,
    ... in snake or camel case), lists under `paths`/`files`, and a line under `line`/`start_line`
    (applied to the first path). Relative paths are joined to `cwd`; `..` is collapsed; `file://`
    URIs become paths; other URLs are skipped. Duplicates are dropped, order is kept.

    With `roots` (the session's directories), a path outside all of them that does not exist on
    disk is left out: it names no file the editor could follow (a virtual path such as the
    in-state files of a DeepAgents graph, `/notes.md`).
    """
    if not args:
        return []
    by_key = {_norm_key(k): v for k, v in args.items() if isinstance(k, str)}  # pyright: ignore[reportUnnecessaryIsInstance]
    raw: list[str] = []
    for key in _PATH_KEYS:
        path = _as_path(by_key.get(key))
        if path is not None:
            raw.append(path)
    for key in _PATH_LIST_KEYS:
        values = by_key.get(key)
        if isinstance(values, list | tuple):
            raw.extend(p for v in cast(Sequence[object], values) if (p := _as_path(v)) is not None)
    line = next((n for k in _LINE_KEYS if (n := _line(by_key.get(k))) is not None), None)
    locations: list[tuple[str, int | None]] = []
    seen: set[str] = set()
    for path in raw:
        absolute = os.path.normpath(os.path.join(cwd, os.path.expanduser(path) if path.startswith("~") else path))
        if absolute in seen:
            continue
        seen.add(absolute)
        if roots is not None and not _followable(absolute, roots):
            continue
        locations.append((absolute, line if not locations else None))
    return locations


def _followable(path: str, roots: Sequence[str]) -> bool:
    for root in roots:
        base = os.path.normpath(root)
        if path == base or path.startswith(base.rstrip(os.sep) + os.sep):
            return True
    return os.path.exists(path)


# --- Titles -------------------------------------------------------------------------------------

_TITLE_LIMIT = 80
_COMMAND_KEYS = ("command", "cmd", "script", "code")
_QUERY_KEYS = ("pattern", "query", "regex", "q", "search", "glob")
_URL_KEYS = ("url", "uri", "href", "link")


def _short(text: str, limit: int = _TITLE_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _display_path(path: str, cwd: str | None) -> str:
    if cwd and os.path.isabs(path):
        relative = os.path.relpath(path, cwd)
        if not relative.startswith(".."):
            return relative
    return path


def _first_str(args: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    by_key = {_norm_key(k): v for k, v in args.items()}
    for key in keys:
        value = by_key.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _command_text(args: Mapping[str, Any]) -> str | None:
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            extra = args.get("args")
            if isinstance(extra, list | tuple):
                value = " ".join([value, *(str(a) for a in cast(Sequence[object], extra))])
            return value
        if isinstance(value, list | tuple) and value:
            return " ".join(str(a) for a in cast(Sequence[object], value))
    return None


def tool_title(
    name: str,
    args: Mapping[str, Any] | None = None,
    *,
    kind: ToolKind | None = None,
    cwd: str | None = None,
) -> str:
    """A short human title for a tool call: `Read src/app.py`, `Run pytest -q`, `Search "TODO" in src`.

    `kind` defaults to [`classify_tool(name, args)`][acpkit_core.runner.tool_classification.classify_tool]. Paths under
    `cwd` are shown relative to it. A tool with a `description` argument (one that delegates work)
    is `name: description`. Without a recognisable argument the title is the tool name.
    Titles are one line of at most 80 characters.
    """
    args = args or {}
    kind = kind or classify_tool(name, args)
    by_key = {_norm_key(k): v for k, v in args.items()}
    paths = [p for key in _PATH_KEYS if (p := _as_path(by_key.get(key)))]
    path = _display_path(paths[0], cwd) if paths else None
    title: str | None = None
    if kind == "execute":
        command = _command_text(args)
        title = f"Run {command}" if command else None
    elif kind == "move" and len(paths) >= 2:
        title = f"Move {_display_path(paths[0], cwd)} → {_display_path(paths[1], cwd)}"
    elif kind in ("read", "edit", "delete", "move") and path:
        verb = {"read": "Read", "edit": "Edit", "delete": "Delete", "move": "Move"}[kind]
        if kind == "edit" and {"write", "create"} & set(tool_words(name)):
            verb = "Write"
        title = f"{verb} {path}"
    elif kind == "search":
        query = _first_str(args, _QUERY_KEYS)
        if query:
            title = f'Search "{_short(query, 40)}"' + (f" in {path}" if path else "")
        elif path:
            title = f"List {path}"
    elif kind == "fetch":
        url = _first_str(args, _URL_KEYS)
        query = _first_str(args, _QUERY_KEYS)
        title = f"Fetch {url}" if url else (f'Search the web for "{query}"' if query else None)
    elif kind == "think":
        title = "Update plan" if {"todo", "todos", "plan"} & set(tool_words(name)) else "Think"
    if title is None:
        # Tools that delegate work (a DeepAgents `task`, an agent-as-tool) say what in `description`.
        description = by_key.get("description")
        if isinstance(description, str) and description.strip():
            title = f"{name}: {_short(' '.join(description.split()), 60)}"
    return _short(title or name)


# --- Diffs --------------------------------------------------------------------------------------


def diff_content(path: str, old_text: str | None, new_text: str) -> FileEditToolCallContent:
    """The `diff` content of an edit tool call; `old_text=None` for a new file.

    `path` must be absolute (ACP paths are). Build `old_text` from the client's view of the file
    ([`ClientHost.read_for_diff`][acpkit_core.runner.host.ClientHost.read_for_diff]) so unsaved editor
    buffers are diffed against what the user sees.
    """
    if not os.path.isabs(path):
        raise UserError(f"diff_content: path must be absolute, got {path!r} (join it to the session cwd)")
    return FileEditToolCallContent(type="diff", path=path, old_text=old_text, new_text=new_text)
