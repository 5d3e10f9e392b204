"""LocalClientHost: the client's file and terminal methods on the real disk and real subprocesses."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import EnvVariable, TerminalExitStatus
from acpkit_core.client.local_host import LocalClientHost

pytestmark = pytest.mark.timeout(30)

PY = sys.executable


@pytest.fixture
async def host(tmp_path: Path) -> AsyncGenerator[LocalClientHost]:
    h = LocalClientHost(tmp_path)
    yield h
    await h.close()


async def test_read_whole_file_and_line_limit_slices(host: LocalClientHost, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("one\ntwo\nthree\nfour\n")
    assert (await host.read_text_file(str(path))).content == "one\ntwo\nthree\nfour\n"
    assert (await host.read_text_file(str(path), line=2, limit=2)).content == "two\nthree\n"
    assert (await host.read_text_file(str(path), line=3)).content == "three\nfour\n"
    assert (await host.read_text_file(str(path), limit=1)).content == "one\n"
    assert (await host.read_text_file(str(path), line=9)).content == ""


async def test_write_creates_parents_then_reads_back(host: LocalClientHost, tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "out.txt"
    await host.write_text_file(str(path), "héllo\n")
    assert path.read_text(encoding="utf-8") == "héllo\n"
    assert (await host.read_text_file(str(path))).content == "héllo\n"


async def test_missing_file_is_resource_not_found(host: LocalClientHost, tmp_path: Path) -> None:
    missing = str(tmp_path / "ghost.txt")
    with pytest.raises(RequestError) as info:
        await host.read_text_file(missing)
    assert info.value.code == -32002
    assert info.value.data == {"uri": missing}


async def test_other_os_errors_are_invalid_params_with_path_and_reason(host: LocalClientHost, tmp_path: Path) -> None:
    with pytest.raises(RequestError) as info:
        await host.read_text_file(str(tmp_path))  # a directory
    assert info.value.code == -32602
    assert info.value.data is not None
    assert info.value.data["path"] == str(tmp_path)
    assert "directory" in info.value.data["reason"].lower()


@pytest.mark.parametrize("template", ["relative.txt", "{root}/../outside.txt", "/etc/hostname"])
async def test_confinement_refuses_relative_and_outside_paths(
    template: str, host: LocalClientHost, tmp_path: Path
) -> None:
    path = template.format(root=tmp_path)
    with pytest.raises(RequestError) as info:
        await host.read_text_file(path)
    assert info.value.code == -32602
    with pytest.raises(RequestError):
        await host.write_text_file(path, "x")
    assert not (tmp_path.parent / "outside.txt").exists()


async def test_symlink_out_of_the_root_is_refused(
    host: LocalClientHost, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "secret.txt"
    elsewhere.write_text("secret")
    (tmp_path / "link.txt").symlink_to(elsewhere)
    with pytest.raises(RequestError) as info:
        await host.read_text_file(str(tmp_path / "link.txt"))
    assert info.value.code == -32602


async def test_without_root_any_absolute_path_but_no_relative(tmp_path_factory: pytest.TempPathFactory) -> None:
    free = LocalClientHost()
    path = tmp_path_factory.mktemp("free") / "x.txt"
    path.write_text("ok")
    assert (await free.read_text_file(str(path))).content == "ok"
    with pytest.raises(RequestError) as info:
        await free.read_text_file("x.txt")
    assert info.value.code == -32602


async def test_terminal_output_and_exit_code(host: LocalClientHost, tmp_path: Path) -> None:
    created = await host.create_terminal(
        PY,
        [
            "-c",
            "import os, sys; print(os.getcwd()); print(os.environ['GREETING']);"
            " sys.stderr.write('err\\n'); sys.exit(3)",
        ],
        env=[EnvVariable(name="GREETING", value="hi")],
    )
    done = await host.wait_for_terminal_exit(created.terminal_id)
    assert (done.exit_code, done.signal) == (3, None)
    out = await host.terminal_output(created.terminal_id)
    assert out.output == f"{tmp_path}\nhi\nerr\n"
    assert out.truncated is False
    assert out.exit_status == TerminalExitStatus(exit_code=3, signal=None)


async def test_command_without_args_runs_through_the_shell(host: LocalClientHost) -> None:
    created = await host.create_terminal("echo a b | tr a-z A-Z")
    await host.wait_for_terminal_exit(created.terminal_id)
    assert (await host.terminal_output(created.terminal_id)).output == "A B\n"


async def test_output_limit_keeps_the_tail(host: LocalClientHost) -> None:
    created = await host.create_terminal(PY, ["-c", "print('x' * 50 + 'é' + 'tail', end='')"], output_byte_limit=5)
    await host.wait_for_terminal_exit(created.terminal_id)
    out = await host.terminal_output(created.terminal_id)
    assert out.output == "tail"  # the last 5 bytes start inside "é": the cut moves to the next character
    assert out.truncated is True


@pytest.mark.timeout(90)  # an interpreter starting on a loaded machine: see below
async def test_kill_reports_the_signal_and_keeps_output_until_release(host: LocalClientHost) -> None:
    created = await host.create_terminal(PY, ["-c", "import time; print('started', flush=True); time.sleep(120)"])
    terminal_id = created.terminal_id
    # Kill it once it has printed, waiting for that by the clock: 200 polls of 20 ms killed a child
    # still starting after 4 s of polls (its output then empty), and on a loaded machine took far
    # longer than 4 s themselves, past the file's 30 s timeout.
    deadline = asyncio.get_running_loop().time() + 60
    while not (await host.terminal_output(terminal_id)).output:
        assert asyncio.get_running_loop().time() < deadline, "the child printed nothing in 60 s"
        await asyncio.sleep(0.02)
    assert (await host.terminal_output(terminal_id)).exit_status is None
    await host.kill_terminal(terminal_id)
    done = await host.wait_for_terminal_exit(terminal_id)
    assert (done.exit_code, done.signal) == (None, "SIGKILL")
    assert (await host.terminal_output(terminal_id)).output == "started\n"
    await host.release_terminal(terminal_id)
    assert host.released == [terminal_id]
    with pytest.raises(RequestError) as info:
        await host.terminal_output(terminal_id)
    assert info.value.code == -32002


async def test_unknown_terminal_id_is_resource_not_found(host: LocalClientHost) -> None:
    for call in (
        host.terminal_output,
        host.wait_for_terminal_exit,
        host.kill_terminal,
        host.release_terminal,
    ):
        with pytest.raises(RequestError) as info:
            await call("term-404")
        assert info.value.code == -32002
        assert info.value.data == {"uri": "term-404"}


async def test_terminal_cwd_outside_the_root_is_refused(host: LocalClientHost, tmp_path: Path) -> None:
    with pytest.raises(RequestError) as info:
        await host.create_terminal("true", cwd=str(tmp_path.parent))
    assert info.value.code == -32602
    assert host.terminals == {}


async def test_close_kills_every_open_terminal(tmp_path: Path) -> None:
    host = LocalClientHost(tmp_path)
    ids = [(await host.create_terminal("sleep", ["60"])).terminal_id for _ in range(2)]
    processes = [host.terminals[i].process for i in ids]
    await host.close()
    assert host.terminals == {}
    assert host.released == ids
    assert [p.returncode for p in processes] == [-9, -9]
