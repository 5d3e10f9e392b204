"""`acpkit serve -- CMD`: any stdio ACP agent behind the remote endpoint, one real child process per connection.

Every test runs a real `acpkit serve` process serving a third-party agent written only against the
bare `acp` SDK (`agents/sdk_child_agent.py`), or the examples through `acpkit run`, and drives it
with real remote clients. A child's life is checked on the process table: it is gone (with what it
started) once its connection ends, whoever ended it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from acp import RequestError
from acpkit_core.server import PRINCIPAL_ENV
from acpkit_core.testing import AcpTestClient
from replicas import Replica, replica
from websockets.exceptions import InvalidStatus

CHILD = Path(__file__).parent / "agents" / "sdk_child_agent.py"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef"
SECONDS = 15.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: only its exit status is left
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


async def _gone(pid: int, timeout: float = SECONDS) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


def _served(
    *flags: str, command: tuple[str, ...] = (sys.executable, str(CHILD)), env: dict[str, str] | None = None
) -> contextlib.AbstractAsyncContextManager[Replica]:
    return replica("", target=None, args=[*flags, "--", *command], env=env)


async def _pid(client: AcpTestClient, session_id: str, word: str = "pid") -> int:
    result = await client.prompt(word, session_id=session_id)
    assert result.stop_reason == "end_turn", result.text
    return int(result.text.removeprefix("pid "))


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_a_bare_sdk_agent_serves_turns_over_both_profiles(scheme: str) -> None:
    async with _served() as server:
        url = server.url if scheme == "ws" else server.http_url
        async with AcpTestClient.connect_url(url) as client:
            init = await client.initialize()
            assert init.agent_info is not None and init.agent_info.name == "sdk-child"
            sid = await client.new_session()
            result = await client.prompt("hello remote child", session_id=sid)
            assert result.stop_reason == "end_turn"
            assert result.text == "echo: hello remote child"
            (client.root / "notes.txt").write_text("the client's own file")
            read = await client.prompt(f"read {client.root / 'notes.txt'}", session_id=sid)
            assert read.text == "the client's own file"  # host_tools="client": the request reached the client
            shell = await client.prompt("shell echo from-the-client", session_id=sid)
            assert shell.text == "from-the-client (exit 0)"


async def test_each_connection_has_its_own_child_killed_with_what_it_started_when_it_ends() -> None:
    async with _served() as server:
        async with AcpTestClient.connect_url(server.url) as second:
            await second.initialize()
            second_sid = await second.new_session()
            second_pid = await _pid(second, second_sid)
            async with AcpTestClient.connect_url(server.http_url) as first:
                await first.initialize()
                sid = await first.new_session()
                first_pid = await _pid(first, sid)
                grandchild = await _pid(first, sid, "spawn")
                assert first_pid != second_pid and _alive(first_pid) and _alive(grandchild)
                listed = await first.list_sessions()
                assert [s.session_id for s in listed.sessions] == [sid]  # the child's own sessions only
            assert await _gone(first_pid), "the child outlived its connection"
            assert await _gone(grandchild), "what the child started outlived its connection"
            assert _alive(second_pid)  # the other connection's child is untouched and serves on
            again = await second.prompt("still here", session_id=second_sid)
            assert again.text == "echo: still here"
        assert await _gone(second_pid)


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_a_child_that_crashes_answers_with_a_clear_error_and_closes_the_connection(scheme: str) -> None:
    async with _served() as server:
        url = server.url if scheme == "ws" else server.http_url
        async with AcpTestClient.connect_url(url) as client:
            await client.initialize()
            sid = await client.new_session()
            pid = await _pid(client, sid)
            with pytest.raises(RequestError) as caught:
                await asyncio.wait_for(client.prompt("crash", session_id=sid), SECONDS)
            assert caught.value.code == -32603
            assert str(caught.value) == (
                "the agent process exited (exit code 3): boom: the child agent crashed on purpose"
            )
            data = caught.value.data
            assert isinstance(data, dict) and data["exitCode"] == 3 and data["method"] == "session/prompt"
            assert await _gone(pid)
            with pytest.raises(Exception) as closed:  # the connection is closed: the request cannot go
                await asyncio.wait_for(client.prompt("anyone?", session_id=sid), SECONDS)
            assert not isinstance(closed.value, TimeoutError)
        async with AcpTestClient.connect_url(server.url) as fresh:  # the server itself serves on
            await fresh.initialize()
            sid = await fresh.new_session()
            assert (await fresh.prompt("ok", session_id=sid)).text == "echo: ok"


async def test_tokens_principals_and_quotas_hold_for_a_served_command(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"alice:{ALICE}\nbob:{BOB}\n")
    flags = ("--token-file", str(tokens), "--max-sessions", "1", "--max-turns-per-principal", "1")
    async with _served(*flags) as server:
        with pytest.raises(InvalidStatus) as refused:
            async with websockets.connect(server.url):
                pass
        assert refused.value.response.status_code == 401
        async with httpx.AsyncClient() as http:
            answer = await http.post(server.http_url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize"})
            assert answer.status_code == 401
        async with (
            AcpTestClient.connect_url(server.url, token=ALICE) as alice,
            AcpTestClient.connect_url(server.http_url, token=ALICE) as alice_too,
            AcpTestClient.connect_url(server.url, token=BOB) as bob,
        ):
            for client in (alice, alice_too, bob):
                await client.initialize()
            sid = await alice.new_session()
            with pytest.raises(RequestError) as full:
                await alice.new_session()
            assert full.value.code == -32600 and "max_sessions_per_connection=1" in _details(full.value)
            other = await alice_too.new_session()
            slow = asyncio.ensure_future(alice.prompt("slow", session_id=sid))
            await _until(lambda: any("working slowly" in str(m) for _, m in alice.wire))
            with pytest.raises(RequestError) as busy:
                await alice_too.prompt("me too", session_id=other)
            assert busy.value.code == -32600 and "max_turns_per_principal=1" in _details(busy.value)
            bob_sid = await bob.new_session()  # another principal has its own quota
            assert (await bob.prompt("bob here", session_id=bob_sid)).text == "echo: bob here"
            listed = await bob.list_sessions()
            assert [s.session_id for s in listed.sessions] == [bob_sid]
            await alice.cancel(sid)
            assert (await asyncio.wait_for(slow, SECONDS)).stop_reason == "cancelled"
            assert (await alice_too.prompt("now", session_id=other)).text == "echo: now"


@pytest.mark.parametrize("child_per", ["connection", "session"])
async def test_children_of_two_principals_sharing_a_store_keep_their_sessions_apart(
    child_per: str, tmp_path: Path
) -> None:
    """`acpkit serve -- acpkit run AGENT`: every child opens the same default store, and each sees only
    its principal's sessions there (the server tells it who in `ACPKIT_PRINCIPAL`), as an agent served
    in process does; an anonymous connection's child is told no one, whatever the server inherited."""
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"alice:{ALICE}\nbob:{BOB}\n")
    command = (sys.executable, "-m", "acpkit_core.cli", "run", str(EXAMPLES / "echo_runner.py"))
    env = {"ACPKIT_STATE_DIR": str(tmp_path / "state"), PRINCIPAL_ENV: "mallory"}
    flags = ("--token-file", str(tokens), "--child-per", child_per)
    async with _served(*flags, command=command, env=env) as server:
        async with AcpTestClient.connect_url(server.url, token=ALICE) as alice:
            await alice.initialize()
            sid = await alice.new_session()
            assert (await alice.prompt("alice's secret", session_id=sid)).text.startswith("You said: alice's secret")
        async with AcpTestClient.connect_url(server.http_url, token=BOB) as bob:
            await bob.initialize()
            assert (await bob.list_sessions()).sessions == []
            for opening in (bob.load_session(sid), bob.resume_session(sid)):
                with pytest.raises(RequestError) as refused:
                    await opening
                assert refused.value.code == -32002  # not found: another principal's session is none of bob's
            bob_sid = await bob.new_session()
        async with AcpTestClient.connect_url(server.url, token=ALICE) as alice_again:
            await alice_again.initialize()
            assert [s.session_id for s in (await alice_again.list_sessions()).sessions] == [sid]
            _, replayed = await alice_again.load_session(sid)
            assert "alice's secret" in str(replayed)
    anonymous = _served("--child-per", child_per, command=command, env=env)
    async with anonymous as server, AcpTestClient.connect_url(server.url) as anyone:  # no principals: one store
        await anyone.initialize()
        assert {s.session_id for s in (await anyone.list_sessions()).sessions} == {sid, bob_sid}


def _details(error: RequestError) -> str:
    return str(error.data.get("details")) if isinstance(error.data, dict) else ""


async def _until(condition: object, timeout: float = SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while not callable(condition) or not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_the_message_size_limit_holds_both_ways() -> None:
    async with _served("--max-message-bytes", "8KiB") as server, AcpTestClient.connect_url(server.url) as client:
        await client.initialize()
        sid = await client.new_session()
        pid = await _pid(client, sid)
        with pytest.raises(RequestError) as big:
            await client.prompt("x" * 20_000, session_id=sid)
        assert big.value.code == -32600 and "8192" in str(big.value.data)
        assert (await client.prompt("small", session_id=sid)).text == "echo: small"  # the child never saw it
        with pytest.raises(RequestError) as too_big:
            await asyncio.wait_for(client.prompt("big 20000", session_id=sid), SECONDS)
        assert str(too_big.value) == "the agent sent a message over the 8192 bytes limit (max_message_bytes)"
        assert await _gone(pid)


async def test_an_idle_connection_is_closed_and_its_child_killed() -> None:
    async with _served("--idle-timeout", "1") as server:
        async with websockets.connect(server.url) as ws:
            await ws.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}')
            assert '"sdk-child"' in str(await asyncio.wait_for(ws.recv(), SECONDS))  # however long the child took
            children = _children(server.process.pid)
            assert len(children) == 1
            await asyncio.wait_for(ws.wait_closed(), SECONDS)
            assert ws.close_code == 4408
        assert await _gone(children[0])


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True, check=False)
    return [int(p) for p in out.stdout.split()]


async def test_sigterm_stops_the_server_and_every_child() -> None:
    async with _served() as server:
        async with AcpTestClient.connect_url(server.url) as client:
            await client.initialize()
            sid = await client.new_session()
            pid = await _pid(client, sid)
            grandchild = await _pid(client, sid, "spawn")
            server.process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(server.process.wait(), SECONDS + 10) == 0
        assert await _gone(pid) and await _gone(grandchild)
        assert b"stopped" in server.stderr


async def _serve_exit(*args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acpkit_core.cli",
        "serve",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, err.decode()


async def test_what_cannot_apply_to_a_served_command_is_refused() -> None:
    code, err = await _serve_exit("--store", "memory", "--", sys.executable, str(CHILD))
    assert code == 2 and "--store cannot apply to a served command" in err
    code, err = await _serve_exit("--port", "0", "--", "no-such-agent-binary")
    assert code == 2 and "cannot serve 'no-such-agent-binary': no such executable" in err
    code, err = await _serve_exit("examples/pydantic_agent.py", "--", sys.executable, str(CHILD))
    assert code == 2 and "give a TARGET, or an ACP command after `--`" in err
    code, err = await _serve_exit("--workspace", "/tmp", "--", sys.executable, str(CHILD))
    assert code == 2 and "--workspace is the server's directories for --host-tools server" in err


@pytest.mark.parametrize("example", ["pydantic_agent.py", "langgraph_agent.py"])
async def test_the_examples_served_as_commands(example: str, tmp_path: Path) -> None:
    """An ACP Kit agent is a stdio ACP command too: `acpkit serve -- acpkit run EXAMPLE`."""
    command = (sys.executable, "-m", "acpkit_core.cli", "run", str(EXAMPLES / example))
    env = {"ACPKIT_STATE_DIR": str(tmp_path)}
    async with _served(command=command, env=env) as server, AcpTestClient.connect_url(server.url) as client:
        init = await client.initialize()
        assert init.agent_info is not None and init.agent_info.name.endswith("example")
        (client.root / "README.md").write_text("Client readme\n")
        sid = await client.new_session()
        result = await client.prompt("write notes about README.md", session_id=sid)
        assert result.stop_reason == "end_turn"
        assert result.text.endswith("wrote my notes to `acpkit-notes.md`.") or result.text.endswith(
            "I read README.md and wrote acpkit-notes.md."
        )
        assert (client.root / "acpkit-notes.md").exists()  # the client's files, through the relay
        assert len(result.permission_requests) == 1


@pytest.mark.parametrize("child_per", ["connection", "session"])
async def test_a_client_that_stops_reading_a_flooding_child_is_closed_and_the_child_killed(child_per: str) -> None:
    """The outbound buffer holds the child back (it blocks on its stdout), then the stall rule ends
    the connection and every child of it (with a child per session: the flooding one and the first)."""
    async with _served("--idle-timeout", "1", "--outbound-buffer", "16KiB", "--child-per", child_per) as server:
        async with websockets.connect(server.url, max_queue=1) as ws:
            await ws.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}')
            await asyncio.wait_for(ws.recv(), SECONDS)
            await ws.send('{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}')
            answer = json.loads(await asyncio.wait_for(ws.recv(), SECONDS))
            sid = answer["result"]["sessionId"]
            children = _children(server.process.pid)
            params = {"sessionId": sid, "prompt": [{"type": "text", "text": "flood"}]}
            prompt: dict[str, Any] = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": params}
            await ws.send(json.dumps(prompt))
            # From here the client reads nothing: the server must not buffer the flood, and must end it.
            assert len(children) == (1 if child_per == "connection" else 2)
            for child in children:
                assert await _gone(child, timeout=40), "a child outlived its stalled connection"
        assert b"took nothing for 1 s" in server.stderr
