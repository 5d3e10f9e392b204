"""ClientHost over a real ACP connection.

The agent side is the SDK's `AgentSideConnection`, the client side the SDK's `ClientSideConnection`
with a small real client that serves files from a temp directory and runs real subprocesses for
the terminal methods; the two talk JSON-RPC over a socket pair.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from acp import Agent, Client, RequestError, connect_to_agent
from acp.agent.connection import AgentSideConnection
from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    InitializeResponse,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acpkit_core.config import AgentOptions
from acpkit_core.errors import HostError, HostUnavailableError, PathPolicyError, UserError
from acpkit_core.runner.host import ClientHost
from acpkit_core.runner.types import ClientInfo, Session, StopReason
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient, ScriptedRunner
from hypothesis import given
from hypothesis import strategies as st

pytestmark = pytest.mark.timeout(30)

SESSION = "sess-1"
ALL = ClientInfo(name="test", read_text_file=True, write_text_file=True, terminal=True)


@dataclass
class _Proc:
    process: asyncio.subprocess.Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None


class FsTerminalClient:
    """A real ACP client: files from disk, terminals as subprocesses; records every request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.terminals: dict[str, _Proc] = {}
        self.released: list[str] = []
        self.killed: list[str] = []
        self.create_gate: asyncio.Event | None = None
        """When set, `terminal/create` waits for this event before starting the command."""

    # --- fs -----------------------------------------------------------------------------------
    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.requests.append(("fs/read_text_file", {"path": path, "line": line, "limit": limit}))
        try:
            text = Path(path).read_text()
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = (line or 1) - 1
            text = "".join(lines[start : None if limit is None else start + limit])
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.requests.append(("fs/write_text_file", {"path": path, "content": content}))
        Path(path).write_text(content)
        return WriteTextFileResponse()

    # --- terminals ----------------------------------------------------------------------------
    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        self.requests.append(("terminal/create", {"command": command, "args": args, "cwd": cwd}))
        if self.create_gate is not None:
            await self.create_gate.wait()
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env={**os.environ, **{e.name: e.value for e in env or []}},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        proc = _Proc(process=process, limit=output_byte_limit)
        proc.reader = asyncio.create_task(self._pump(proc))
        self.terminals[terminal_id] = proc
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def _pump(self, proc: _Proc) -> None:
        assert proc.process.stdout is not None
        while chunk := await proc.process.stdout.read(4096):
            proc.output.extend(chunk)
            if proc.limit is not None and len(proc.output) > proc.limit:
                del proc.output[: len(proc.output) - proc.limit]
                proc.truncated = True

    def _proc(self, terminal_id: str) -> _Proc:
        if terminal_id not in self.terminals or terminal_id in self.released:
            raise RequestError.resource_not_found(terminal_id)
        return self.terminals[terminal_id]

    @staticmethod
    def _status(proc: _Proc) -> tuple[int | None, str | None]:
        code = proc.process.returncode
        if code is not None and code < 0:
            return None, signal.Signals(-code).name
        return code, None

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        self.requests.append(("terminal/output", {"terminal_id": terminal_id}))
        proc = self._proc(terminal_id)
        status = None
        if proc.process.returncode is not None:
            assert proc.reader is not None
            await proc.reader
            code, sig = self._status(proc)
            status = TerminalExitStatus(exit_code=code, signal=sig)
        text = proc.output.decode(errors="replace")
        return TerminalOutputResponse(output=text, truncated=proc.truncated, exit_status=status)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self.requests.append(("terminal/wait_for_exit", {"terminal_id": terminal_id}))
        proc = self._proc(terminal_id)
        await proc.process.wait()
        code, sig = self._status(proc)
        return WaitForTerminalExitResponse(exit_code=code, signal=sig)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        self.requests.append(("terminal/kill", {"terminal_id": terminal_id}))
        proc = self._proc(terminal_id)
        self.killed.append(terminal_id)
        if proc.process.returncode is None:
            _sigkill(proc.process)
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        self.requests.append(("terminal/release", {"terminal_id": terminal_id}))
        proc = self._proc(terminal_id)
        if proc.process.returncode is None:
            _sigkill(proc.process)
        await proc.process.wait()
        self.released.append(terminal_id)
        return ReleaseTerminalResponse()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass

    async def close(self) -> None:
        for proc in self.terminals.values():
            if proc.process.returncode is None:
                _sigkill(proc.process)
                await proc.process.wait()
            if proc.reader is not None:
                await proc.reader


class _Agent:
    """The agent side needs an agent object; the tests only send client requests."""

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=protocol_version)


@asynccontextmanager
async def connection() -> AsyncGenerator[tuple[AgentSideConnection, FsTerminalClient]]:
    """An agent-side connection wired to a real client over a socket pair."""
    agent_sock, client_sock = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=agent_sock)
    client_reader, client_writer = await asyncio.open_connection(sock=client_sock)
    client = FsTerminalClient()
    # partial implementations on purpose: the SDK answers -32601 for what they lack
    agent_conn = AgentSideConnection(cast(Agent, _Agent()), agent_writer, agent_reader)
    client_conn = connect_to_agent(cast(Client, client), client_writer, client_reader)
    try:
        yield agent_conn, client
    finally:
        await client.close()
        await agent_conn.close()
        await client_conn.close()
        for writer in (agent_writer, client_writer):
            writer.close()
            await writer.wait_closed()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("one\ntwo\nthree\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    return root


# --- files ---------------------------------------------------------------------------------------


async def test_read_and_write_inside_cwd(project: Path) -> None:
    async with connection() as (conn, client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        assert (host.can_read, host.can_write, host.can_run) == (True, True, True)
        assert await host.read_text_file(str(project / "src" / "app.py")) == "one\ntwo\nthree\n"
        assert await host.read_text_file(str(project / "src" / "app.py"), line=2, limit=1) == "two\n"
        await host.write_text_file(str(project / "src" / "new.py"), "print('hi')\n")
        assert (project / "src" / "new.py").read_text() == "print('hi')\n"
        await host.write_text_file(str(project / "src" / ".." / "top.txt"), "x")
        assert (project / "top.txt").read_text() == "x"
        assert client.requests[-1] == ("fs/write_text_file", {"path": str(project / "top.txt"), "content": "x"})


async def test_additional_roots(project: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.md").write_text("notes")
    session = Session(id=SESSION, cwd=str(project), additional_directories=(str(shared),))
    async with connection() as (conn, _client):
        host = ClientHost.for_session(conn, session, ALL, allowed_paths=[str(tmp_path / "extra")])
        assert host.roots == (str(project), str(shared), str(tmp_path / "extra"))
        assert await host.read_text_file(str(shared / "notes.md")) == "notes"


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("src/app.py", "path must be absolute, got 'src/app.py'"),
        ("{project}/../outside.txt", "is outside the session's directories"),
        ("{project}/src/../../outside.txt", "is outside the session's directories"),
        ("{project}-sibling/x", "is outside the session's directories"),
        ("{project}/link/outside.txt", "resolves to"),
        ("{project}/escape.txt", "resolves to"),
    ],
)
async def test_paths_outside_the_roots_are_refused_before_asking(template: str, message: str, project: Path) -> None:
    os.symlink(project.parent, project / "link")
    os.symlink(project.parent / "outside.txt", project / "escape.txt")
    path = template.format(project=project)
    async with connection() as (conn, client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        assert not host.allows(path)
        with pytest.raises(PathPolicyError, match=message):
            await host.read_text_file(path)
        with pytest.raises(PathPolicyError, match=message):
            await host.write_text_file(path, "pwned")
        with pytest.raises(PathPolicyError, match=message):
            await host.read_for_diff(path)
        assert client.requests == []
    assert (project.parent / "outside.txt").read_text() == "secret\n"


async def test_symlink_inside_the_roots_is_fine(project: Path) -> None:
    os.symlink(project / "src", project / "alias")
    async with connection() as (conn, _client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        assert await host.read_text_file(str(project / "alias" / "app.py"), limit=1) == "one\n"


async def test_refused_when_not_advertised(project: Path) -> None:
    async with connection() as (conn, client):
        host = ClientHost(conn, SESSION, ClientInfo(), cwd=str(project))
        assert (host.can_read, host.can_write, host.can_run) == (False, False, False)
        with pytest.raises(HostUnavailableError, match=r"the client did not advertise fs\.readTextFile"):
            await host.read_text_file(str(project / "src" / "app.py"))
        with pytest.raises(HostUnavailableError, match=r"the client did not advertise fs\.writeTextFile"):
            await host.write_text_file(str(project / "x"), "")
        with pytest.raises(HostUnavailableError, match="the client did not advertise terminal"):
            await host.run("true")
        with pytest.raises(HostUnavailableError, match="the client did not advertise terminal"):
            await host.kill("term-1")
        assert client.requests == []
    no_client = ClientHost(None, SESSION, ALL, cwd=str(project))
    assert not no_client.can_read
    with pytest.raises(HostUnavailableError):
        await no_client.read_text_file(str(project / "src" / "app.py"))


async def test_client_errors_become_host_errors(project: Path) -> None:
    async with connection() as (conn, _client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        with pytest.raises(HostError, match="fs/read_text_file: the client answered with an error") as info:
            await host.read_text_file(str(project / "missing.txt"))
        assert isinstance(info.value.__cause__, RequestError)
        assert info.value.__cause__.code == -32002


async def test_argument_checks(project: Path) -> None:
    async with connection() as (conn, _client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        with pytest.raises(UserError, match="line is 1-based"):
            await host.read_text_file(str(project / "src" / "app.py"), line=0)
        with pytest.raises(UserError, match="limit must be at least 1"):
            await host.read_text_file(str(project / "src" / "app.py"), limit=0)
    with pytest.raises(UserError, match="roots must be absolute"):
        ClientHost(None, SESSION, ALL, cwd="relative")


async def test_read_for_diff(project: Path) -> None:
    app = str(project / "src" / "app.py")
    async with connection() as (conn, client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        assert await host.read_for_diff(app) == "one\ntwo\nthree\n"
        assert client.requests[-1][0] == "fs/read_text_file"  # the client's view, not the disk
        requests = len(client.requests)
        assert await host.read_for_diff(str(project / "new.py")) is None
        assert len(client.requests) == requests  # a new file beside others: no failing request to show
        # a directory this machine does not see: the client is asked, its "not found" means a new file
        assert await host.read_for_diff(str(project / "elsewhere" / "new.py")) is None
        assert client.requests[-1][0] == "fs/read_text_file"
        # without fs.readTextFile the file comes from disk
        disk = ClientHost(conn, SESSION, ClientInfo(terminal=True), cwd=str(project))
        requests = len(client.requests)
        assert await disk.read_for_diff(app) == "one\ntwo\nthree\n"
        assert await disk.read_for_diff(str(project / "new.py")) is None
        assert len(client.requests) == requests


# --- terminals -----------------------------------------------------------------------------------


async def test_run_returns_output_and_exit_code(project: Path) -> None:
    async with connection() as (conn, client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        result = await host.run("sh", ["-c", 'echo "out $GREETING"; echo err >&2; pwd; exit 3'], env={"GREETING": "hi"})
        assert result.output == f"out hi\nerr\n{project}\n"
        assert (result.exit_code, result.signal, result.truncated, result.timed_out, result.ok) == (
            3,
            None,
            False,
            False,
            False,
        )
        assert client.released == [result.terminal_id]
        ok = await host.run(sys.executable, ["-c", "print('fine')"], cwd=str(project / "src"))
        assert ok.ok and ok.output == "fine\n"
        assert client.requests[-4] == (
            "terminal/create",
            {"command": sys.executable, "args": ["-c", "print('fine')"], "cwd": str(project / "src")},
        )
        assert client.released == [result.terminal_id, ok.terminal_id]


async def test_run_cwd_outside_is_refused(project: Path) -> None:
    async with connection() as (conn, client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        with pytest.raises(PathPolicyError):
            await host.run("true", cwd=str(project.parent))
        assert client.requests == []


async def test_run_timeout_kills_and_releases(project: Path) -> None:
    async with connection() as (conn, client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        loop = asyncio.get_running_loop()
        started = loop.time()
        result = await host.run("sh", ["-c", "echo started; exec sleep 30"], timeout=0.5)
        assert loop.time() - started < 5
        assert result.timed_out and not result.ok
        assert result.output == "started\n"
        assert result.exit_code is None and result.signal == "SIGKILL"
        assert client.killed == [result.terminal_id]
        assert client.released == [result.terminal_id]


async def test_run_output_byte_limit(project: Path) -> None:
    async with connection() as (conn, _client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        result = await host.run(sys.executable, ["-c", "print('x' * 100 + 'END')"], output_byte_limit=10)
        assert result.truncated
        assert result.output == "xxxxxxEND\n"
        with pytest.raises(UserError, match="output_byte_limit must be positive"):
            await host.run("true", output_byte_limit=0)


async def test_cancelled_run_kills_and_releases(project: Path) -> None:
    async with connection() as (conn, client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        task = asyncio.create_task(host.run("sleep", ["30"]))
        while not any(name == "terminal/wait_for_exit" for name, _ in client.requests):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert client.killed == ["term-1"]
        assert client.released == ["term-1"]
        assert client.terminals["term-1"].process.returncode == -signal.SIGKILL


async def test_create_terminal_then_wait(project: Path) -> None:
    async with connection() as (conn, client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        async with await host.create_terminal("sh", ["-c", "echo live"]) as terminal:
            content = terminal.content()
            assert content.model_dump(by_alias=True, exclude_none=True) == {
                "type": "terminal",
                "terminalId": terminal.id,
            }
            result = await terminal.wait()
            assert (result.output, result.exit_code) == ("live\n", 0)
            assert client.released == []
        assert client.released == [terminal.id]
        await terminal.release()  # a second release sends nothing
        assert client.released == [terminal.id]


async def test_kill_a_live_terminal(project: Path) -> None:
    async with connection() as (conn, client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        terminal = await host.create_terminal("sleep", ["30"])
        try:
            await host.kill(terminal.id)
            result = await terminal.wait(timeout=5)
            assert result.signal == "SIGKILL" and not result.timed_out
        finally:
            await host.release(terminal.id)
        assert client.released == [terminal.id]
        with pytest.raises(HostError, match="terminal/output"):
            await terminal.output()


async def test_cancelled_while_creating_still_releases(project: Path) -> None:
    async with connection() as (conn, client):
        host = ClientHost(conn, SESSION, ALL, cwd=str(project))
        gate = client.create_gate = asyncio.Event()
        task = asyncio.create_task(host.run("sleep", ["30"]))
        await asyncio.sleep(0.1)
        task.cancel()
        assert not task.done()  # still waiting for the client's answer
        gate.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert [name for name, _ in client.requests] == ["terminal/create", "terminal/release"]
        assert client.released == ["term-1"]


# --- through the server: what a runner gets as `turn.host` ------------------------------------


async def test_turn_host_through_the_server() -> None:
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        (c.root / "a.txt").write_text("hello file")
        r = await c.prompt(f"read {c.root}/a.txt", session_id=sid)
        assert (r.stop_reason, r.text) == ("end_turn", "hello file")
        r = await c.prompt(f"write {c.root}/sub/../b.txt new text", session_id=sid)
        assert r.text == f"wrote {c.root}/sub/../b.txt"
        assert (c.root / "b.txt").read_text() == "new text"
        r = await c.prompt("run sh -c 'echo hi; exit 2'", session_id=sid)
        assert r.text == "exit 2: hi"
        sent = [name for name, _ in c.requests]
        assert sent == ["fs/read_text_file", "fs/write_text_file", "terminal/create", "terminal/release"]
        assert c.requests[1][1]["path"] == f"{c.root}/b.txt"  # normalised before it is sent

        with pytest.raises(RequestError) as refused:
            await c.prompt(f"read {c.root.parent}/elsewhere.txt", session_id=sid)
        assert refused.value.code == -32013  # permission denied, not an internal error
        assert str(refused.value) == (
            f"The agent failed: PathPolicyError: {c.root.parent}/elsewhere.txt is outside the session's "
            f"directories: {c.root}"
        )
        assert len(c.requests) == len(sent)  # refused before anything reached the client


async def test_turn_host_when_the_client_offers_nothing() -> None:
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))
    async with AcpTestClient.connect(agent, fs=False, terminal=False) as c:
        await c.initialize()
        sid = await c.new_session()
        with pytest.raises(RequestError, match=r"^The agent failed: HostUnavailableError: .* fs\.readTextFile$"):
            await c.prompt(f"read {c.root}/a.txt", session_id=sid)
        with pytest.raises(RequestError, match=r"^The agent failed: HostUnavailableError: .* advertise terminal$"):
            await c.prompt("run true", session_id=sid)
        assert c.requests == []


# --- the examples in docs/core/host.md ---------------------------------------------------------

DOC = Path(__file__).parents[2] / "docs" / "core" / "host.md"


def _doc_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_doc_examples_run() -> None:
    blocks = _doc_blocks()
    assert len(blocks) == 5
    for i, block in enumerate(blocks):
        exec(compile(block, f"{DOC}[{i}]", "exec"), {"__name__": "docs"})


async def test_doc_terminal_and_diff_helpers() -> None:
    namespace: dict[str, Any] = {"__name__": "docs"}
    for block in _doc_blocks():
        if "async def run_in_terminal" in block or "async def write_with_diff" in block:
            exec(compile(block, str(DOC), "exec"), namespace)
    run_in_terminal, write_with_diff = namespace["run_in_terminal"], namespace["write_with_diff"]

    class EditRunner:
        async def run_turn(self, turn: Any) -> StopReason:
            await turn.emit.tool_call("t1", title="Run", kind="execute")
            output = await run_in_terminal(turn, "t1", sys.executable, ["-c", "print('tested')"])
            await turn.emit.tool_call_update("t1", status="completed", raw_output=output)
            path = f"{turn.session.cwd}/app.py"
            await turn.emit.tool_call("t2", title="Edit app.py", kind="edit")
            await write_with_diff(turn, "t2", path, "new = 2\n")
            await turn.emit.tool_call_update("t2", status="completed")
            return "end_turn"

    async with AcpTestClient.connect(AcpAgent(EditRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        (c.root / "app.py").write_text("old = 1\n")
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
        run, edit = r.tool_calls["t1"], r.tool_calls["t2"]
        assert run.statuses == ["pending", "in_progress", "completed"]
        released = [params["terminalId"] for name, params in c.requests if name == "terminal/release"]
        assert [x.model_dump(by_alias=True, exclude_none=True) for x in run.content] == [
            {"type": "terminal", "terminalId": released[0]}
        ]
        assert run.raw_output == {"output": "tested\n"}  # rawOutput is always a JSON object
        assert [x.model_dump(by_alias=True, exclude_none=True) for x in edit.content] == [
            {"type": "diff", "path": f"{c.root}/app.py", "oldText": "old = 1\n", "newText": "new = 2\n"}
        ]
        assert (c.root / "app.py").read_text() == "new = 2\n"


# --- the path policy as a property ---------------------------------------------------------------


@pytest.fixture(scope="module")
def maze(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """root/{a/, in -> root/a, out -> ../outside/}, plus ../outside/."""
    base = tmp_path_factory.mktemp("maze")
    root, outside = base / "root", base / "outside"
    (root / "a").mkdir(parents=True)
    outside.mkdir()
    os.symlink(root / "a", root / "in")
    os.symlink(outside, root / "out")
    return root


@given(st.lists(st.sampled_from(["a", "b", "..", ".", "in", "out"]), max_size=6))
def test_accepted_paths_stay_inside(maze: Path, segments: list[str]) -> None:
    host = ClientHost(None, SESSION, ALL, cwd=str(maze))
    path = os.path.join(str(maze), *segments)
    real_root = os.path.realpath(maze)
    try:
        sent = host.check_path(path)
    except PathPolicyError:
        lexical = os.path.normpath(path)
        escapes = not (lexical == str(maze) or lexical.startswith(f"{maze}/"))
        assert escapes or "out" in segments  # refused only when it leaves the root one way or the other
        return
    assert sent == os.path.normpath(path)
    resolved = os.path.realpath(sent)
    assert resolved == real_root or resolved.startswith(real_root + os.sep)


def _sigkill(process: asyncio.subprocess.Process) -> None:
    """Kill by pid: `Process.kill()` polls the child first on Python 3.11 and can reap it before
    asyncio's watcher sees it, which then reports exit code 255 instead of -SIGKILL."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGKILL)
