"""The RFD's rules on a real `acpkit serve` process, and the flags that cannot apply to a target.

- `DELETE /acp` ends the connection's `GET` event stream (not only its POSTs).
- A WebSocket request before `initialize` is refused (-32600); a notification is dropped.
- `Acp-Session-Id`: required on the session-scoped methods; when given it must name the message's
  session, or for the client's answer to an agent request, the session that request was about.
  Without it, `session/load`, `session/resume` and answers are accepted: the deviation documented
  in docs/remote.md (the SDK's own client does not send it there).
- `--store` / `--name` on a ready `AcpAgent` exit 2 (`serve` and `run`), and `--help` says which
  flags apply to which targets.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from acpkit_core.testing import AcpTestClient
from replicas import TARGET, replica
from test_frames import RawFrames

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


async def _events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    async for line in lines:
        if line.startswith("data: "):
            yield json.loads(line[6:])


async def _until(events: AsyncIterator[dict[str, Any]], check: Any) -> dict[str, Any]:
    async for event in events:
        if check(event):
            return event
    raise AssertionError("the stream ended")


async def test_delete_ends_the_event_stream(tmp_path: Path) -> None:
    async with replica(str(tmp_path / "s.sqlite3")) as served, httpx.AsyncClient(timeout=10) as http:
        url = served.http_url
        conn = {"Acp-Connection-Id": (await http.post(url, json=INIT)).headers["Acp-Connection-Id"]}
        async with http.stream("GET", url, headers={**conn, "Accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            deleted = await http.delete(url, headers=conn)
            assert deleted.status_code == 202
            started = time.monotonic()
            rest = [chunk async for chunk in stream.aiter_bytes()]  # ends: the server closed the stream
            assert time.monotonic() - started < 2 and b"keepalive" not in b"".join(rest)
        new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}}
        assert (await http.post(url, json=new, headers=conn)).status_code == 404


async def test_a_websocket_request_before_initialize_is_refused(tmp_path: Path) -> None:
    async with replica(str(tmp_path / "s.sqlite3")) as served:
        ws = await RawFrames.connect(served.url)
        ws.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}})  # dropped
        (refused,) = await ws.call(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert refused["error"]["code"] == -32600
        assert refused["error"]["message"].startswith("initialize first")
        (init,) = await ws.call(2, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert init["result"]["protocolVersion"] == 1
        created = await ws.call(3, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert "sessionId" in created[-1]["result"]
        ws.writer.close()
        with contextlib.suppress(OSError):
            await ws.writer.wait_closed()


async def test_session_header_rules_over_streamable_http(tmp_path: Path) -> None:
    async with replica(str(tmp_path / "s.sqlite3")) as served, httpx.AsyncClient(timeout=10) as http:
        url = served.http_url
        caps = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}
        first = await http.post(url, json={**INIT, "params": caps})
        conn = {"Acp-Connection-Id": first.headers["Acp-Connection-Id"]}
        async with http.stream("GET", url, headers={**conn, "Accept": "text/event-stream"}) as stream:
            events = _events(stream.aiter_lines())
            sids: list[str] = []
            for i in (1, 2):
                params = {"cwd": str(tmp_path), "mcpServers": []}
                new = {"jsonrpc": "2.0", "id": i, "method": "session/new", "params": params}
                assert (await http.post(url, json=new, headers=conn)).status_code == 202
                sids.append((await _until(events, lambda e, i=i: e.get("id") == i))["result"]["sessionId"])
            a, b = sids

            def post(message: dict[str, Any], session: str | None) -> Any:
                headers = {**conn, "Acp-Session-Id": session} if session else conn
                return http.post(url, json=message, headers=headers)

            # Session-scoped methods need the header, naming their session.
            blocks = [{"type": "text", "text": f"read {tmp_path}/f"}]
            params = {"sessionId": a, "prompt": blocks}
            prompt = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": params}
            assert (await post(prompt, None)).status_code == 400
            assert (await post(prompt, b)).status_code == 400
            assert (await post(prompt, a)).status_code == 202
            # The agent asks the client to read a file (about session a): an answer naming b is refused.
            asked = await _until(events, lambda e: e.get("method") == "fs/read_text_file")
            answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"content": "from the client"}}
            wrong = await post(answer, b)
            assert wrong.status_code == 400 and "the session of the request this answers" in wrong.json()["error"]
            assert (await post(answer, None)).status_code == 202  # accepted without the header (documented)
            done = await _until(events, lambda e: e.get("id") == 3)
            assert done["result"]["stopReason"] == "end_turn"

            # session/load: a header naming another session is refused; none is accepted (documented).
            load_params = {"sessionId": a, "cwd": str(tmp_path), "mcpServers": []}
            close = {"jsonrpc": "2.0", "id": 4, "method": "session/close", "params": {"sessionId": a}}
            assert (await post(close, a)).status_code == 202
            await _until(events, lambda e: e.get("id") == 4)
            load = {"jsonrpc": "2.0", "id": 5, "method": "session/load", "params": load_params}
            assert (await post(load, b)).status_code == 400
            assert (await post(load, None)).status_code == 202
            loaded = await _until(events, lambda e: e.get("id") == 5)
            assert "result" in loaded
        await http.delete(url, headers=conn)


def _acpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_store_and_name_set_by_a_ready_agent_exit_2(tmp_path: Path) -> None:
    """The replica target's code sets its store (from `$REPLICA_STORE`) and its name."""
    env = {**os.environ, "REPLICA_STORE": str(tmp_path / "s.sqlite3")}
    for command in ("serve", "run"):
        for flag, value, said in (
            ("--store", "postgresql://db/acp", "--store: its code sets another store (AgentOptions(store=...)"),
            ("--name", "other", "--name: its code names it 'replica' (AgentOptions(name=...))"),
        ):
            result = subprocess.run(
                [sys.executable, "-m", "acpkit_core.cli", command, str(TARGET), flag, value],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                env=env,
            )
            assert result.returncode == 2, result.stderr
            assert f"acpkit {command}: {flag} cannot apply to " in result.stderr
            assert f"it is a ready ACP agent, and {said}" in result.stderr


async def test_store_applies_to_a_ready_agent_whose_code_sets_none(tmp_path: Path) -> None:
    """`examples/echo_runner.py` builds an `AcpAgent` without a store: `--store` chooses it."""
    store = tmp_path / "chosen.sqlite3"
    echo = Path(__file__).parents[2] / "examples" / "echo_runner.py"
    command = [sys.executable, "-m", "acpkit_core.cli", "run", f"{echo}:build_agent", "--store", str(store)]
    async with AcpTestClient.spawn(*command) as client:
        await client.initialize()
        await client.new_session()
    assert store.exists()


def test_help_says_which_flags_apply_to_which_targets() -> None:
    for command in ("serve", "run"):
        shown = _acpkit(command, "--help").stdout
        assert "which flags apply to which targets:" in shown
        assert "--store and --name only where its code sets" in shown
        assert "A ready AcpAgent takes it only if its code sets no store" in " ".join(shown.split())


async def test_the_store_flag_builds_a_framework_agent(tmp_path: Path) -> None:
    """The positive case: on a framework agent `--store` takes effect (sessions land in that file)."""
    target = tmp_path / "plain_agent.py"
    target.write_text(
        "from pydantic_ai import Agent\nfrom pydantic_ai.models.test import TestModel\n"
        "agent = Agent(TestModel(custom_output_text='ok'))\n"
    )
    store = tmp_path / "chosen.sqlite3"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "acpkit_core.cli", "serve", str(target), "--port", "0", "--store", str(store),
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        while b"serving" not in (line := await asyncio.wait_for(process.stderr.readline(), 60)):
            assert line, "acpkit serve exited"
        assert store.exists()
    finally:
        process.kill()
        await process.wait()


async def test_session_scoped_streams(tmp_path: Path) -> None:
    """A session's turn goes on its own stream once the client opened it, and never switches mid-turn."""
    async with replica(str(tmp_path / "s.sqlite3")) as served, httpx.AsyncClient(timeout=10) as http:
        url = served.http_url
        conn = {"Acp-Connection-Id": (await http.post(url, json=INIT)).headers["Acp-Connection-Id"]}
        accept = {"Accept": "text/event-stream"}
        async with http.stream("GET", url, headers={**conn, **accept}) as main:
            events = _events(main.aiter_lines())
            new = {"jsonrpc": "2.0", "id": 1, "method": "session/new",
                   "params": {"cwd": str(tmp_path), "mcpServers": []}}  # fmt: skip
            await http.post(url, json=new, headers=conn)
            sid = (await _until(events, lambda e: e.get("id") == 1))["result"]["sessionId"]
            unknown = await http.get(url, headers={**conn, **accept, "Acp-Session-Id": "nope"})
            assert unknown.status_code == 404
            session = {**conn, "Acp-Session-Id": sid}

            # A turn started before the session's stream is open stays on the connection's stream.
            script = [{"type": "text", "text": "say a b\nsleep 0.5\nsay c d"}]
            params = {"sessionId": sid, "prompt": script}
            slow = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": params}
            await http.post(url, json=slow, headers=session)
            first = await _until(events, lambda e: e.get("method") == "session/update")
            async with http.stream("GET", url, headers={**session, **accept}) as own:
                assert own.status_code == 200 and own.headers["Acp-Session-Id"] == sid
                again = await http.get(url, headers={**session, **accept})
                assert again.status_code == 409
                rest = [first]
                async for event in events:
                    rest.append(event)
                    if event.get("id") == 2:
                        break
                said = [e["params"]["update"]["content"]["text"] for e in rest if e.get("method") == "session/update"
                        and e["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]  # fmt: skip
                assert said == ["a ", "b", "c ", "d"] and rest[-1]["result"]["stopReason"] == "end_turn"

                # The next turn: all on the session's stream, nothing on the connection's.
                fast = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                        "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "say e f"}]}}  # fmt: skip
                await http.post(url, json=fast, headers=session)
                mine = _events(own.aiter_lines())
                got = [await _until(mine, lambda e: True) for _ in range(2)]
                done = await _until(mine, lambda e: e.get("id") == 3)
                assert [e["params"]["update"]["content"]["text"] for e in got] == ["e ", "f"]
                assert done["result"]["stopReason"] == "end_turn"
            lst = {"jsonrpc": "2.0", "id": 4, "method": "session/list", "params": {}}
            await http.post(url, json=lst, headers=conn)
            nothing_else = await _until(events, lambda e: "id" in e or e.get("method") != "session/update")
            assert nothing_else.get("id") == 4  # the connection's stream got no update of turn 3
        await http.delete(url, headers=conn)


async def test_a_turn_whose_session_stream_closes_ends_on_the_connections_stream(tmp_path: Path) -> None:
    """The client closes its session's stream mid-turn: the rest of the turn, its answer included,
    comes on the connection's stream, in order (the answer used to be put on the closed stream, and
    the client waited for it for ever)."""
    async with replica(str(tmp_path / "s.sqlite3")) as served, httpx.AsyncClient(timeout=10) as http:
        url = served.http_url
        conn = {"Acp-Connection-Id": (await http.post(url, json=INIT)).headers["Acp-Connection-Id"]}
        accept = {"Accept": "text/event-stream"}
        async with http.stream("GET", url, headers={**conn, **accept}) as main:
            events = _events(main.aiter_lines())
            new = {"jsonrpc": "2.0", "id": 1, "method": "session/new",
                   "params": {"cwd": str(tmp_path), "mcpServers": []}}  # fmt: skip
            await http.post(url, json=new, headers=conn)
            sid = (await _until(events, lambda e: e.get("id") == 1))["result"]["sessionId"]
            session = {**conn, "Acp-Session-Id": sid}
            async with http.stream("GET", url, headers={**session, **accept}) as own:
                assert own.status_code == 200
                script = [{"type": "text", "text": "say a b\nsleep 1\nsay c d"}]
                turn = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                        "params": {"sessionId": sid, "prompt": script}}  # fmt: skip
                await http.post(url, json=turn, headers=session)
                mine = _events(own.aiter_lines())
                first = [await asyncio.wait_for(_until(mine, _said), 10) for _ in range(2)]
                assert [e["params"]["update"]["content"]["text"] for e in first] == ["a ", "b"]
            # The session's stream is closed: what is left of the turn comes on the connection's.
            rest: list[dict[str, Any]] = []

            async def until_answered() -> None:
                async for event in events:
                    rest.append(event)
                    if event.get("id") == 2:
                        return

            await asyncio.wait_for(until_answered(), 10)
            said = [e["params"]["update"]["content"]["text"] for e in rest if _said(e)]
            assert said == ["c ", "d"] and rest[-1]["result"]["stopReason"] == "end_turn"
        await http.delete(url, headers=conn)


def _said(event: dict[str, Any]) -> bool:
    """A text chunk of the agent's answer."""
    if event.get("method") != "session/update":
        return False
    return event["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
