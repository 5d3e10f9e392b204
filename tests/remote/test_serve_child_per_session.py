"""`acpkit serve --child-per session -- CMD`: a child process per session, on one remote connection.

Real `acpkit serve` processes serve the bare-SDK third-party agent (`agents/sdk_child_agent.py`) or an
ACP Kit agent through `acpkit run`; real remote clients drive them. Children are checked on the
process table: which exist, and that they are gone when their session or connection ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import websockets
from acp import RequestError
from acp.schema import RequestPermissionRequest
from acpkit_core.testing import AcpTestClient
from replicas import Replica, replica

AGENTS = Path(__file__).parent / "agents"
CHILD = AGENTS / "sdk_child_agent.py"
ALICE = "alice-token-0123456789abcdef"
SECONDS = 15.0


def _served(
    *flags: str, command: tuple[str, ...] = (sys.executable, str(CHILD)), env: dict[str, str] | None = None
) -> contextlib.AbstractAsyncContextManager[Replica]:
    return replica("memory", target=None, args=["--child-per", "session", *flags, "--", *command], env=env)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


async def _until(condition: Callable[[], object], what: str, timeout: float = SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def _children(server: Replica) -> list[int]:
    out = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(server.process.pid)], capture_output=True, text=True, check=False
    )
    return sorted(int(p) for p in out.stdout.split())


async def _pid(client: AcpTestClient, session_id: str) -> int:
    result = await asyncio.wait_for(client.prompt("pid", session_id=session_id), SECONDS)
    assert result.stop_reason == "end_turn", result.text
    return int(result.text.removeprefix("pid "))


async def test_each_session_has_its_own_child_its_turns_interleave_and_close_stops_it() -> None:
    async with _served() as server:
        async with AcpTestClient.connect_url(server.url) as client:
            init = await client.initialize()
            assert init.agent_info is not None and init.agent_info.name == "sdk-child"
            (control,) = _children(server)  # the connection's first child answered initialize
            first, second = await client.new_session(), await client.new_session()
            first_pid, second_pid = await _pid(client, first), await _pid(client, second)
            assert len({control, first_pid, second_pid}) == 3
            assert _children(server) == sorted([control, first_pid, second_pid])
            caps = await asyncio.wait_for(client.prompt("caps", session_id=second), SECONDS)
            fs = {"readTextFile": True, "writeTextFile": True}
            assert json.loads(caps.text) == {"fs": fs, "terminal": True}  # the client's initialize, replayed
            slow = asyncio.ensure_future(client.prompt("slow", session_id=first))
            await _until(lambda: any("working slowly" in str(m) for _, m in client.wire), "the slow turn")
            meanwhile = await asyncio.wait_for(client.prompt("meanwhile", session_id=second), SECONDS)
            assert meanwhile.text == "echo: meanwhile"  # the other session's child answers at once
            await client.cancel(first)
            assert (await asyncio.wait_for(slow, SECONDS)).stop_reason == "cancelled"
            await client.close_session(first)
            await _until(lambda: not _alive(first_pid), "the closed session's child to stop")
            assert _alive(second_pid) and _alive(control)
            again = await asyncio.wait_for(client.prompt("still here", session_id=second), SECONDS)
            assert again.text == "echo: still here"
        await _until(lambda: not _alive(second_pid) and not _alive(control), "every child to stop")
        assert _children(server) == []


async def test_a_successful_authenticate_is_replayed_to_each_new_child() -> None:
    async with _served() as server, AcpTestClient.connect_url(server.url) as client:
        await client.initialize()
        before = await client.new_session()
        await client.authenticate("agent-login")
        after = await client.new_session()
        said = [(await asyncio.wait_for(client.prompt("auth", session_id=s), SECONDS)).text for s in (before, after)]
        assert said == ["<none>", "agent-login"]  # the session opened after it has a child that was told


async def test_permission_requests_from_two_children_with_the_same_id_reach_the_right_child() -> None:
    both = asyncio.Event()

    async def answer(request: RequestPermissionRequest) -> str:
        await both.wait()  # both children's requests are open at once
        return "yes" if request.session_id == first else "no"

    async with (
        _served() as server,
        AcpTestClient.connect_url(server.url, permission_answers=answer) as client,
    ):
        await client.initialize()
        first, second = await client.new_session(), await client.new_session()
        turns = [asyncio.ensure_future(client.prompt("ask", session_id=sid)) for sid in (first, second)]
        await _until(lambda: len(client.permission_requests) == 2, "both permission requests")
        both.set()
        results = await asyncio.wait_for(asyncio.gather(*turns), SECONDS)
        assert [r.text for r in results] == ["chose yes", "chose no"]
        ids = [m["id"] for d, m in client.wire if d == "received" and m.get("method") == "session/request_permission"]
        assert len(set(ids)) == 2  # each child numbered its request alike; the client saw two ids


async def test_a_session_child_that_crashes_fails_only_its_session() -> None:
    async with _served() as server, AcpTestClient.connect_url(server.url) as client:
        await client.initialize()
        doomed, other = await client.new_session(), await client.new_session()
        doomed_pid = await _pid(client, doomed)
        with pytest.raises(RequestError) as crashed:
            await asyncio.wait_for(client.prompt("crash", session_id=doomed), SECONDS)
        why = "the agent process exited (exit code 3): boom: the child agent crashed on purpose"
        assert (crashed.value.code, str(crashed.value)) == (-32603, why)
        assert isinstance(crashed.value.data, dict) and crashed.value.data["exitCode"] == 3
        await _until(lambda: not _alive(doomed_pid), "the crashed child to be reaped")
        with pytest.raises(RequestError) as gone:
            await asyncio.wait_for(client.prompt("anyone?", session_id=doomed), SECONDS)
        assert (gone.value.code, str(gone.value)) == (-32603, f"session {doomed} is gone: {why}")
        assert (await asyncio.wait_for(client.prompt("fine", session_id=other), SECONDS)).text == "echo: fine"
        fresh = await client.new_session()  # the connection serves on
        assert (await asyncio.wait_for(client.prompt("new", session_id=fresh), SECONDS)).text == "echo: new"


async def test_the_first_child_crashing_closes_the_connection_and_stops_every_child() -> None:
    async with _served() as server, AcpTestClient.connect_url(server.url) as client:
        await client.initialize()
        (control,) = _children(server)
        sid = await client.new_session()
        session_pid = await _pid(client, sid)
        with pytest.raises(RequestError) as crashed:  # a session no child serves: the first child's to answer
            await asyncio.wait_for(client.prompt("crash", session_id="no-such-session"), SECONDS)
        assert str(crashed.value).startswith("the agent process exited (exit code 3)")
        await _until(lambda: not _alive(control) and not _alive(session_pid), "every child to stop")
        with pytest.raises(Exception) as closed:
            await asyncio.wait_for(client.prompt("anyone?", session_id=sid), SECONDS)
        assert not isinstance(closed.value, TimeoutError)


async def test_a_cancel_request_goes_to_the_child_running_the_request(tmp_path: Path) -> None:
    """An ACP Kit agent served as a command answers `$/cancel_request` (the bare SDK does not)."""
    command = (sys.executable, "-m", "acpkit_core.cli", "run", str(AGENTS / "reconnect_pydantic.py"))
    env = {"RECONNECT_CHUNK_DELAY": "0.3", "ACPKIT_STATE_DIR": str(tmp_path)}
    async with _served(command=command, env=env) as server, AcpTestClient.connect_url(server.url) as client:
        await client.initialize()
        first, second = await client.new_session(), await client.new_session()
        turn = asyncio.ensure_future(client.prompt("go", session_id=second))
        await _until(lambda: "s0w1" in str(client.wire), "the turn's first words")
        (prompt_id,) = client.pending_requests("session/prompt")
        await client.cancel_request(prompt_id)
        result = await asyncio.wait_for(turn, 5)  # the turn streams for 9 s when the cancel goes astray
        assert result.stop_reason == "cancelled"
        assert first != second


async def test_a_principal_opening_many_sessions_at_once_starts_no_child_past_its_quota(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"alice:{ALICE}\n")
    async with _served("--token-file", str(tokens), "--max-sessions-per-principal", "2") as server:
        headers = {"Authorization": f"Bearer {ALICE}"}
        async with websockets.connect(server.url, additional_headers=headers) as ws:
            await ws.send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}')
            assert json.loads(await asyncio.wait_for(ws.recv(), SECONDS))["id"] == 0
            for n in range(1, 7):  # all sent before any child could answer
                params = {"cwd": str(tmp_path), "mcpServers": []}
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": n, "method": "session/new", "params": params}))
            answers: dict[int, dict[str, Any]] = {}
            while len(answers) < 6:
                message = json.loads(await asyncio.wait_for(ws.recv(), SECONDS))
                answers[message["id"]] = message
            opened = [n for n, a in answers.items() if "result" in a]
            refused = [a["error"] for a in answers.values() if "error" in a]
            assert sorted(opened) == [1, 2]  # the first two received (their answers may come in either order)
            assert len(refused) == 4
            assert all(e["code"] == -32600 and "max_sessions_per_principal=2" in str(e["data"]) for e in refused)
            assert len(_children(server)) == 3  # the first child and one per open session: none past the quota


async def test_a_new_child_that_fails_its_start_answers_the_session_request_clearly(tmp_path: Path) -> None:
    """The first start serves; every later one exits at once (a broken install, a full machine)."""
    mark = tmp_path / "started"
    script = f'if [ -e "{mark}" ]; then echo "no more agents today" >&2; exit 5; fi; touch "{mark}"; exec "$0" "$1"'
    command = ("sh", "-c", script, sys.executable, str(CHILD))
    async with _served(command=command) as server, AcpTestClient.connect_url(server.url) as client:
        await client.initialize()
        with pytest.raises(RequestError) as failed:
            await asyncio.wait_for(client.new_session(), SECONDS)
        assert failed.value.code == -32603
        assert str(failed.value) == (
            "the agent process for this session/new failed: its initialize failed: "
            "the agent process exited (exit code 5): no more agents today"
        )
        assert len(_children(server)) == 1
        assert (await client.list_sessions()).sessions == []  # the first child still answers


async def test_host_tools_and_the_message_limit_hold_for_each_sessions_child(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("server notes\n")
    flags = ("--host-tools", "server", "--workspace", str(workspace), "--max-message-bytes", "8KiB")
    async with _served(*flags) as server, AcpTestClient.connect_url(server.url) as client:
        await client.initialize()
        sid = await client.new_session()
        said = [(await asyncio.wait_for(client.prompt(w, session_id=sid), SECONDS)).text for w in ("cwd", "pid")]
        assert said[0] == str(workspace)  # the session's cwd, rewritten for its own child
        read = await asyncio.wait_for(client.prompt(f"read {workspace / 'notes.txt'}", session_id=sid), SECONDS)
        assert read.text == "server notes\n"  # served from the workspace, to the child that asked
        assert not [m for d, m in client.wire if d == "received" and str(m.get("method", "")).startswith("fs/")]
        with pytest.raises(RequestError) as too_big:
            await asyncio.wait_for(client.prompt("big 20000", session_id=sid), SECONDS)
        assert str(too_big.value) == "the agent sent a message over the 8192 bytes limit (max_message_bytes)"
        await _until(lambda: not _alive(int(said[1].removeprefix("pid "))), "the child past the limit to stop")
        other = await client.new_session()  # only that session's child broke the limit
        assert (await asyncio.wait_for(client.prompt("ok", session_id=other), SECONDS)).text == "echo: ok"


async def test_child_per_is_refused_for_a_target() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "acpkit_core.cli", "serve", "--child-per", "session", "examples/pydantic_agent.py"),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ},
    )
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert "--child-per applies to a served command only" in err.decode()
