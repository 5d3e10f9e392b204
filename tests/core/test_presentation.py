"""`acpkit_core.runner.tool_presentation` through the turn's real `ToolCalls` and emitter: what each update carries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp.helpers import text_block, tool_content, tool_terminal_ref
from acp.schema import FileEditToolCallContent, ResourceContentBlock
from acpkit_core.errors import UserError
from acpkit_core.runner.emitter import TurnEmitter
from acpkit_core.runner.tool_lifecycle import StaticClassifier, ToolCalls
from acpkit_core.runner.tool_presentation import Diff, ToolPresentation, kind_overrides
from acpkit_core.runner.tool_presenter import ToolPresenter
from acpkit_core.runner.tool_presets import (
    TOOL_PRESETS,
    read_file_tool,
    search_files_tool,
    shell_tool,
    web_fetch_tool,
    write_file_tool,
)

CWD = "/work/app"


def _calls(
    table: dict[str, ToolPresentation], files: dict[str, str | None] | None = None
) -> tuple[ToolCalls, list[Any]]:
    sent: list[dict[str, Any]] = []

    async def send(wire: dict[str, Any]) -> None:
        sent.append(wire)

    async def read_text(path: str) -> str | None:
        if files is None or path not in files:
            raise PermissionError(path)
        return files[path]

    emitter = TurnEmitter(send)
    calls = emitter.tool_calls
    calls.classifier = StaticClassifier(CWD, kind_overrides({}, table))
    calls.cwd = CWD
    calls.presenter = ToolPresenter(table, cwd=CWD, read_text=read_text if files is not None else None)
    return calls, sent


def _diff(path: str, old: str | None, new: str) -> dict[str, Any]:
    return FileEditToolCallContent(type="diff", path=path, old_text=old, new_text=new).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )


def _wire(content: Any) -> dict[str, Any]:
    return content.model_dump(mode="json", by_alias=True, exclude_none=True)


async def test_a_write_diffs_against_the_current_text_a_new_file_or_nothing() -> None:
    calls, sent = _calls(
        {"write_file": write_file_tool()}, files={"/work/app/a.txt": "old\n", "/work/app/new.txt": None}
    )
    await calls.announce("1", "write_file", {"path": "a.txt", "content": "new\n"})
    await calls.announce("2", "write_file", {"path": "new.txt", "content": "hi\n"})
    await calls.announce("3", "write_file", {"path": "/etc/passwd", "content": "x"})  # unreadable: no diff
    assert [u.get("content") for u in sent] == [
        [_diff("/work/app/a.txt", "old\n", "new\n")],
        [_diff("/work/app/new.txt", None, "hi\n")],
        None,
    ]
    assert [u["kind"] for u in sent] == ["edit"] * 3
    assert sent[0]["locations"] == [{"path": "/work/app/a.txt"}]


async def test_an_edit_diffs_the_whole_file_or_the_replaced_text() -> None:
    files: dict[str, str | None] = {"/work/app/m.py": "a = 1\nb = 1\n"}
    calls, sent = _calls(dict(TOOL_PRESETS), files=files)
    await calls.announce("1", "edit_file", {"file_path": "m.py", "old_string": "1", "new_string": "2"})
    await calls.announce("2", "edit_file", {"filePath": "m.py", "oldString": "1", "newString": "2", "replaceAll": True})
    await calls.announce("3", "edit_file", {"path": "m.py", "old_string": "zzz", "new_string": "y"})
    assert [u["content"] for u in sent] == [
        [_diff("/work/app/m.py", "a = 1\nb = 1\n", "a = 2\nb = 1\n")],
        [_diff("/work/app/m.py", "a = 1\nb = 1\n", "a = 2\nb = 2\n")],
        [_diff("/work/app/m.py", "zzz", "y")],  # not found in the file: just the replacement
    ]


async def test_the_tool_s_own_diff_replaces_the_presented_one() -> None:
    calls, sent = _calls({"write_file": write_file_tool()}, files={"/work/app/a.txt": "old\n"})
    await calls.announce("1", "write_file", {"path": "a.txt", "content": "new\n"})
    await calls.start("1")
    real = FileEditToolCallContent(type="diff", path="/work/app/a.txt", old_text="unsaved\n", new_text="new\n")
    await calls.attach("1", real)
    await calls.finish("1", content=[tool_content(text_block("ok"))], raw_output="ok")
    assert sent[-1]["content"] == [_wire(real), _wire(tool_content(text_block("ok")))]


async def test_code_output_is_fenced_in_the_file_s_language() -> None:
    calls, sent = _calls({"read_file": read_file_tool()})
    await calls.announce("1", "read_file", {"path": "src/app.py", "line": 3})
    assert sent[0]["locations"] == [{"path": "/work/app/src/app.py", "line": 3}]
    await calls.finish("1", content=[tool_content(text_block("x = '```'"))], raw_output="x = '```'")
    assert sent[-1]["content"] == [_wire(tool_content(text_block("````python\nx = '```'\n````")))]


async def test_terminal_output_uses_the_client_terminal_when_there_is_one() -> None:
    calls, sent = _calls({"bash": shell_tool()})
    await calls.announce("1", "bash", {"command": "make test"})
    await calls.finish("1", raw_output={"terminal_id": "t-1", "exit_code": 0})
    await calls.announce("2", "bash", {"command": "ls"})
    await calls.attach("2", tool_terminal_ref("t-2"))
    await calls.finish("2", content=[tool_content(text_block("a\n"))], raw_output="a\n")
    await calls.announce("3", "bash", {"command": "for f in *; do\n  echo $f\ndone"})
    assert sent[1]["content"] == [_wire(tool_terminal_ref("t-1"))]
    assert sent[-2]["content"] == [_wire(tool_terminal_ref("t-2"))]  # the live terminal, no copy of its output
    # a command too long for the title is shown whole
    assert sent[-1]["title"] == "Run for f in *; do echo $f done"
    assert sent[-1]["content"] == [_wire(tool_content(text_block("```sh\nfor f in *; do\n  echo $f\ndone\n```")))]


async def test_search_results_become_links_and_anything_else_stays_text() -> None:
    calls, sent = _calls({"grep": search_files_tool(), "fetch": web_fetch_tool()})
    await calls.announce("1", "grep", {"pattern": "TODO"})
    await calls.finish(
        "1", content=[tool_content(text_block("src/a.py\n/elsewhere/b.py"))], raw_output="src/a.py\n/elsewhere/b.py"
    )
    await calls.announce("2", "grep", {"pattern": "TODO"})
    await calls.finish("2", content=[tool_content(text_block("no matches found"))], raw_output="no matches found")
    await calls.announce("3", "grep", {"pattern": "x"})
    await calls.finish("3", raw_output=[f"f{i}.py" for i in range(52)])
    await calls.announce("4", "fetch", {"url": "https://example.com/a"})
    assert sent[0]["title"] == 'Search "TODO"' and sent[0]["kind"] == "search"
    assert sent[1]["content"] == [
        _wire(
            tool_content(ResourceContentBlock(type="resource_link", uri="file:///work/app/src/a.py", name="src/a.py"))
        ),
        _wire(
            tool_content(
                ResourceContentBlock(type="resource_link", uri="file:///elsewhere/b.py", name="/elsewhere/b.py")
            )
        ),
    ]
    assert sent[3]["content"] == [_wire(tool_content(text_block("no matches found")))]
    assert len(sent[5]["content"]) == 51
    assert sent[5]["content"][-1] == _wire(tool_content(text_block("… and 2 more")))
    assert (sent[6]["title"], sent[6]["kind"]) == ("Fetch https://example.com/a", "fetch")
    assert sent[6]["content"] == [
        _wire(
            tool_content(
                ResourceContentBlock(type="resource_link", uri="https://example.com/a", name="https://example.com/a")
            )
        )
    ]


async def test_a_failed_call_shows_its_error_as_the_adapter_gives_it() -> None:
    calls, sent = _calls({"bash": shell_tool()})
    await calls.announce("1", "bash", {"command": "false"})
    await calls.fail("1", "exit 1")
    assert sent[-1]["status"] == "failed"
    assert sent[-1]["content"] == [_wire(tool_content(text_block("exit 1")))]


async def test_content_functions_and_locations_functions() -> None:
    table = {
        "mcp__db__*": ToolPresentation(
            locations=lambda call: [(f"schema/{call.args['table']}.sql", 1)],
            content=lambda call: [tool_content(text_block(str(call.args["sql"])))],
            title=lambda call: None,
        )
    }
    calls, sent = _calls(table)
    await calls.announce("1", "mcp__db__query", {"table": "users", "sql": "select 1"})
    assert sent[0]["locations"] == [{"path": "/work/app/schema/users.sql", "line": 1}]
    assert sent[0]["content"] == [_wire(tool_content(text_block("select 1")))]
    assert sent[0]["title"] == "mcp__db__query"


def test_kinds_from_tool_kinds_win_then_presentations() -> None:
    table = {"lookup": ToolPresentation(kind="fetch"), "db_*": ToolPresentation(kind="read"), "x": ToolPresentation()}
    assert kind_overrides({"lookup": "search"}, table) == {"lookup": "search", "db_*": "read"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "write"}, r"kind='write' is not an ACP tool kind \(delete, edit, execute"),
        ({"output": "html"}, r"output='html' is not an output style \(code, none, results, terminal, text\)"),
        ({"title": "Read {path"}, r"title='Read \{path'"),
        ({"title": "Read {0}"}, r"fields must be argument names"),
    ],
)
def test_a_bad_presentation_says_what_is_wrong(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=message):
        ToolPresentation(**kwargs)


def test_the_presets_cover_the_common_tool_families() -> None:
    kinds = {name: p.kind for name, p in TOOL_PRESETS.items()}
    assert kinds["read_file"] == "read" and kinds["write_file"] == "edit" and kinds["edit_file"] == "edit"
    assert kinds["bash"] == kinds["execute"] == "execute"
    assert kinds["grep"] == kinds["web_search"] == "search" and kinds["web_fetch"] == "fetch"
    assert Diff().old is None


def test_paths_in_diffs_and_locations_are_absolute(tmp_path: Path) -> None:
    presenter = ToolPresenter({}, cwd=str(tmp_path))
    presentation = ToolPresentation(locations=("src", "dst"))
    assert presenter.locations(presentation, "copy", {"src": "a", "dst": "file:///x/b"}) == [
        (str(tmp_path / "a"), None),
        ("/x/b", None),
    ]
