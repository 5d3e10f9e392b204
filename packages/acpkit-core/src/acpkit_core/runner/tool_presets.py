"""Ready-made tool presentations for common tool shapes and names.

One function per shape (`read_file_tool`, `shell_tool`, ...) takes the argument names a tool
uses; [`TOOL_PRESETS`][acpkit_core.runner.tool_presets.TOOL_PRESETS] maps the usual tool names
to them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from acp.helpers import tool_content
from acp.schema import ResourceContentBlock

from .tool_presentation import ArgNames, Diff, ToolCallView, ToolPresentation, shorten
from .types import ToolCallContent

__all__ = [
    "TOOL_PRESETS",
    "edit_file_tool",
    "read_file_tool",
    "search_files_tool",
    "shell_tool",
    "web_fetch_tool",
    "web_search_tool",
    "write_file_tool",
]


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
        value = shorten(value, 60)
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
