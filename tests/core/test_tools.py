"""Tool-kind classification, titles, locations and diffs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from acp.schema import ToolKind
from acpkit_core.errors import UserError
from acpkit_core.runner.tool_classification import (
    KIND_WORDS,
    classify_tool,
    diff_content,
    tool_locations,
    tool_title,
    tool_words,
)
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        # the table
        ("read_file", "read"),
        ("bash", "execute"),
        ("run_command", "execute"),
        ("grep", "search"),
        ("search", "search"),
        ("write_file", "edit"),
        ("edit", "edit"),
        ("rm", "delete"),
        ("delete_file", "delete"),
        ("delete_branch", "delete"),
        ("mv", "move"),
        ("rename", "move"),
        ("fetch", "fetch"),
        ("http_get", "fetch"),
        ("think", "think"),
        ("get_weather", "other"),
        ("calculator", "other"),
        # spellings
        ("readFile", "read"),
        ("read-file", "read"),
        ("ReadFile", "read"),
        ("read.file", "read"),
        ("readfile", "read"),
        ("mcp__fs__read_file", "read"),
        ("mcp__filesystem__write_file", "edit"),
        ("mcp__shell__list_files", "search"),  # the server name is not a word of the tool
        # common agent tools
        ("ls", "search"),
        ("list_directory", "search"),
        ("glob", "search"),
        ("web_search", "search"),
        ("WebSearch", "search"),
        ("WebFetch", "fetch"),
        ("read_url", "fetch"),
        ("str_replace_editor", "edit"),
        ("search_replace", "edit"),
        ("create_file", "edit"),
        ("apply_patch", "edit"),
        ("MultiEdit", "edit"),
        ("NotebookEdit", "edit"),
        ("copy_file", "edit"),
        ("write_todos", "think"),
        ("TodoWrite", "think"),
        ("update_plan", "think"),
        ("ExitPlanMode", "switch_mode"),
        ("create_terminal", "execute"),
        ("python_repl", "execute"),
        ("cat", "read"),
        ("view", "read"),
        ("", "other"),
        ("___", "other"),
    ],
)
def test_classify_by_name(name: str, kind: ToolKind) -> None:
    assert classify_tool(name) == kind


@pytest.mark.parametrize(
    ("name", "args", "kind"),
    [
        ("str_replace_editor", {"command": "view", "path": "/a"}, "read"),
        ("str_replace_editor", {"command": "create", "path": "/a"}, "edit"),
        ("str_replace_editor", {"command": "nonsense"}, "edit"),
        ("filesystem", {"operation": "delete"}, "delete"),
        ("github", {"action": "search"}, "search"),
        # a tool whose name says what it does is not re-classified by its arguments
        ("bash", {"command": "rm"}, "execute"),
        ("read_file", {"action": "delete"}, "read"),
        # arguments that are not sub-commands are ignored
        ("tool", {"command": "rm -rf /"}, "other"),
        ("tool", {"command": 3}, "other"),
    ],
)
def test_classify_with_args(name: str, args: dict[str, Any], kind: ToolKind) -> None:
    assert classify_tool(name, args) == kind


def test_overrides_win_exact_then_patterns_in_order() -> None:
    overrides: dict[str, ToolKind] = {"read_file": "fetch", "mcp__db__*": "read", "mcp__*": "other"}
    assert classify_tool("read_file", overrides=overrides) == "fetch"
    assert classify_tool("mcp__db__delete_row", overrides=overrides) == "read"
    assert classify_tool("mcp__fs__write_file", overrides=overrides) == "other"
    assert classify_tool("write_file", overrides=overrides) == "edit"


def test_tool_words() -> None:
    assert tool_words("mcp__fs__readFile") == ("read", "file")
    assert tool_words("HTTPGet") == ("http", "get")
    assert tool_words("todowrite") == ("todo", "write")
    assert tool_words("xyzzy") == ("xyzzy",)


def test_every_word_has_one_kind() -> None:
    seen: dict[str, ToolKind] = {}
    for kind, words in KIND_WORDS.items():
        for word in words:
            assert word not in seen, f"{word!r} is listed under {seen[word]} and {kind}"
            seen[word] = kind
            assert classify_tool(word) == kind


@given(st.text(max_size=60))
def test_classify_never_fails(name: str) -> None:
    assert classify_tool(name) in {*KIND_WORDS, "other"}


# --- locations -----------------------------------------------------------------------------------

CWD = "/work/project"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"path": "src/app.py"}, [(f"{CWD}/src/app.py", None)]),
        ({"file_path": "/abs/x.py", "line": 12}, [("/abs/x.py", 12)]),
        ({"filePath": "a.py", "startLine": "7"}, [(f"{CWD}/a.py", 7)]),
        ({"filename": "../up.txt"}, [("/work/up.txt", None)]),
        ({"target": "./b/../c.txt", "start_line": 0}, [(f"{CWD}/c.txt", None)]),  # lines are 1-based
        ({"path": "a", "line": True}, [(f"{CWD}/a", None)]),
        ({"paths": ["a", "b", "a"], "line": 3}, [(f"{CWD}/a", 3), (f"{CWD}/b", None)]),
        ({"source": "old.txt", "destination": "new.txt"}, [(f"{CWD}/old.txt", None), (f"{CWD}/new.txt", None)]),
        ({"path": "file:///tmp/with%20space.txt"}, [("/tmp/with space.txt", None)]),
        ({"path": "https://example.com/x"}, []),
        ({"path": ""}, []),
        ({"path": "two\nlines"}, []),
        ({"path": 42}, []),
        ({"command": "ls"}, []),
        ({}, []),
    ],
)
def test_tool_locations(args: dict[str, Any], expected: list[tuple[str, int | None]]) -> None:
    assert tool_locations(args, CWD) == expected


def test_tool_locations_leave_out_virtual_paths_outside_the_roots(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.txt"
    real.write_text("x")
    args = {"paths": [f"{CWD}/new.py", "/notes.md", str(real), "/extra/a.txt"]}
    kept = tool_locations(args, CWD, roots=(CWD, "/extra"))
    assert kept == [(f"{CWD}/new.py", None), (str(real), None), ("/extra/a.txt", None)]
    assert len(tool_locations(args, CWD)) == 4  # without roots nothing is left out


def test_tool_locations_none() -> None:
    assert tool_locations(None, CWD) == []


@given(st.dictionaries(st.sampled_from(["path", "file_path", "paths", "line", "x"]), st.from_type(object), max_size=4))
def test_tool_locations_are_absolute_with_positive_lines(args: dict[str, Any]) -> None:
    for path, line in tool_locations(args, CWD):
        assert os.path.isabs(path)
        assert line is None or line >= 1


# --- titles --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "args", "title"),
    [
        ("read_file", {"path": f"{CWD}/src/app.py"}, "Read src/app.py"),
        ("read_file", {"path": "/etc/hosts"}, "Read /etc/hosts"),
        ("bash", {"command": "pytest -q"}, "Run pytest -q"),
        ("run_command", {"command": "pytest", "args": ["-q", "-x"]}, "Run pytest -q -x"),
        ("execute", {"cmd": ["git", "status"]}, "Run git status"),
        ("write_file", {"file_path": "a.py"}, "Write a.py"),
        ("edit", {"path": "a.py"}, "Edit a.py"),
        ("delete_file", {"path": "tmp.txt"}, "Delete tmp.txt"),
        ("mv", {"source": "a", "destination": "b"}, "Move a → b"),
        ("grep", {"pattern": "TODO", "path": "src"}, 'Search "TODO" in src'),
        ("ls", {"path": "src"}, "List src"),
        ("fetch", {"url": "https://example.com"}, "Fetch https://example.com"),
        ("web_fetch", {"query": "acp"}, 'Search the web for "acp"'),
        ("write_todos", {"todos": []}, "Update plan"),
        ("think", {"thought": "hmm"}, "Think"),
        ("calculator", {"expression": "1+1"}, "calculator"),
        ("task", {"description": "Find the\n  answer.", "subagent_type": "r"}, "task: Find the answer."),
        ("task", {"description": "  "}, "task"),
        ("bash", {}, "bash"),
        ("bash", {"command": "echo " + "x" * 200}, "Run echo " + "x" * 70 + "…"),
        ("bash", {"command": "a\n  b"}, "Run a b"),
    ],
)
def test_tool_title(name: str, args: dict[str, Any], title: str) -> None:
    assert tool_title(name, args, cwd=CWD) == title


def test_tool_title_with_explicit_kind() -> None:
    assert tool_title("frobnicate", {"path": "x"}, kind="read") == "Read x"


# --- diffs ---------------------------------------------------------------------------------------


def test_diff_content() -> None:
    content = diff_content("/a/b.py", "old\n", "new\n")
    assert content.model_dump(by_alias=True, exclude_none=True) == {
        "type": "diff",
        "path": "/a/b.py",
        "oldText": "old\n",
        "newText": "new\n",
    }
    assert diff_content("/a/new.py", None, "x").old_text is None


def test_diff_content_needs_an_absolute_path() -> None:
    with pytest.raises(UserError, match="path must be absolute"):
        diff_content("b.py", None, "x")


@given(
    name=st.text(max_size=40),
    args=st.dictionaries(
        st.sampled_from(["path", "command", "pattern", "url", "source", "destination", "query", "args"]),
        st.one_of(st.text(max_size=200), st.lists(st.text(max_size=20), max_size=5), st.integers()),
        max_size=4,
    ),
)
def test_titles_are_one_short_line(name: str, args: dict[str, Any]) -> None:
    title = tool_title(name, args, cwd=CWD)
    assert len(title) <= 80
    assert "\n" not in title
