"""`acpkit serve` in this process: both RFD profiles on a real uvicorn (loopback, port 0), real clients.

One server serves the whole module (tokens for two principals, an Origin allow-list, a small
message limit and two sessions per connection); a second, tiny one checks the connection and idle
limits and the graceful stop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
import websockets
from acp import RequestError
from acpkit_core.config import AgentOptions
from acpkit_core.errors import UserError
from acpkit_core.remote import RemoteServer, ServeOptions, Tokens
from acpkit_core.server import AcpAgent
from acpkit_core.store import SqliteStore
from acpkit_core.testing import AcpTestClient, ScriptedRunner
from websockets.exceptions import ConnectionClosed, InvalidStatus

pytestmark = pytest.mark.asyncio(loop_scope="module")

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef"
LIMIT = 64 * 1024


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncGenerator[RemoteServer]:
    store = SqliteStore(tmp_path_factory.mktemp("remote") / "sessions.sqlite3")
    agent = AcpAgent(ScriptedRunner(), AgentOptions(name="remote-test", store=store, max_message_bytes=LIMIT))
    tokens = Tokens.parse(f"alice:{ALICE}\nbob:{BOB}\n", source="test")
    options = ServeOptions(
        port=0, tokens=tokens, allowed_origins=("https://ide.example.com",), max_sessions_per_connection=2
    )
    async with RemoteServer(agent, options) as running:
        yield running


def http_url(server: RemoteServer) -> str:
    return server.url.replace("ws://", "http://")


def auth(token: str = ALICE) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# --- a whole turn over each profile ---------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_a_turn_streams_over_both_profiles(server: RemoteServer, scheme: str) -> None:
    url = server.url if scheme == "ws" else http_url(server)
    async with AcpTestClient.connect_url(url, token=ALICE) as client:
        init = await client.initialize()
        assert init.agent_info is not None and init.agent_info.name == "remote-test"
        sid = await client.new_session()
        result = await client.prompt("say hello remote world", session_id=sid)
        assert result.stop_reason == "end_turn"
        assert result.text == "hello remote world"
        chunks = [u.content.text for u in result.updates if u.session_update == "agent_message_chunk"]
        # The first word at once; the others, within the merging window of it, in one chunk (or more
        # when the machine stalls): the same message either way.
        assert chunks[0] == "hello " and "".join(chunks) == "hello remote world"
        assert len({u.message_id for u in result.updates if u.session_update == "agent_message_chunk"}) == 1


async def test_client_files_and_terminals_are_served_by_the_remote_client(server: RemoteServer) -> None:
    """fs/* and terminal/* requests travel back over the WebSocket to the client, which serves them itself."""
    async with AcpTestClient.connect_url(server.url, token=ALICE) as client:
        await client.initialize()
        sid = await client.new_session()
        (client.root / "notes.txt").write_text("client-side text")
        result = await client.prompt(f"read {client.root / 'notes.txt'}", session_id=sid)
        assert result.text == "client-side text"
        await client.prompt(f"write {client.root / 'out.txt'} written remotely", session_id=sid)
        assert (client.root / "out.txt").read_text() == "written remotely"
        ran = await client.prompt("run echo terminal-over-the-wire", session_id=sid)
        assert ran.stop_reason == "end_turn" and "terminal-over-the-wire" in str(ran.updates)
        methods = [m for m, _ in client.requests]
        assert methods[:2] == ["fs/read_text_file", "fs/write_text_file"]
        assert "terminal/create" in methods and "terminal/release" in methods


async def test_websocket_upgrade_names_the_connection_and_ignores_binary_frames(server: RemoteServer) -> None:
    async with websockets.connect(server.url, additional_headers=auth()) as ws:
        assert ws.response is not None and len(ws.response.headers["Acp-Connection-Id"]) == 32
        await ws.send(b"\x00binary is ignored")
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 1}}))
        answer = json.loads(await ws.recv())
        assert answer["id"] == 7 and answer["result"]["protocolVersion"] == 1
        await ws.send("not json")
        assert json.loads(await ws.recv())["error"]["code"] == -32700
        big = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "session/new", "params": {"pad": "x" * LIMIT}})
        await ws.send(big)
        error = json.loads(await ws.recv())
        assert error["id"] == 8 and error["error"]["code"] == -32600
        assert "64 KiB limit" in error["error"]["message"]


# --- Streamable HTTP rules ------------------------------------------------------------------------


async def test_streamable_http_status_codes(server: RemoteServer) -> None:
    url = http_url(server)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    async with httpx.AsyncClient(headers=auth(), timeout=10) as http:
        first = await http.post(url, json=init)
        assert first.status_code == 200 and first.json()["result"]["protocolVersion"] == 1
        conn = {"Acp-Connection-Id": first.headers["Acp-Connection-Id"]}
        new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}}
        assert (await http.post(url, json=new)).status_code == 400  # no connection id
        assert (await http.post(url, json=new, headers={"Acp-Connection-Id": "nope"})).status_code == 404
        bad_type = await http.post(url, content=json.dumps(new), headers={**conn, "Content-Type": "text/plain"})
        assert bad_type.status_code == 415
        assert (await http.post(url, json=[new], headers=conn)).status_code == 501
        too_big = await http.post(url, json={**new, "params": {"pad": "x" * LIMIT}}, headers=conn)
        assert too_big.status_code == 413 and "max_message_bytes" in too_big.json()["error"]
        assert (await http.get(url, headers=conn)).status_code == 406  # no Accept: text/event-stream
        prompt = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}
        assert (await http.post(url, json=prompt, headers=conn)).status_code == 400  # no Acp-Session-Id
        assert (await http.post(url, json=new, headers=conn)).status_code == 202
        async with http.stream("GET", url, headers={**conn, "Accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            second = await http.get(url, headers={**conn, "Accept": "text/event-stream"})
            assert second.status_code == 409  # one stream per connection
            lines = stream.aiter_lines()
            data = [line async for line in _first_data(lines)]
            assert data[0]["id"] == 2 and "sessionId" in data[0]["result"]
        assert (await http.delete(url, headers=conn)).status_code == 202
        assert (await http.post(url, json=new, headers=conn)).status_code == 404


async def _first_data(lines: Any) -> AsyncGenerator[dict[str, Any]]:
    async for line in lines:
        if line.startswith("data: "):
            yield json.loads(line[6:])
            return


# --- security -------------------------------------------------------------------------------------


@pytest.mark.parametrize("header", [None, "Bearer wrong-token-0123456789", f"Basic {ALICE}", ALICE])
async def test_every_failed_authentication_gets_the_same_401(server: RemoteServer, header: str | None) -> None:
    headers = {"Authorization": header} if header else {}
    async with httpx.AsyncClient(timeout=10) as http:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
        answer = await http.post(http_url(server), json=init, headers=headers)
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    assert answer.json() == {"error": "unauthorized: send Authorization: Bearer <token>"}
    with pytest.raises(InvalidStatus) as refused:
        async with websockets.connect(server.url, additional_headers=headers):
            pass
    assert refused.value.response.status_code == 401


async def test_health_needs_no_token(server: RemoteServer) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.get(http_url(server).replace("/acp", "/healthz"))
    assert answer.status_code == 200 and answer.json()["status"] == "ok"


async def test_origin_allow_list(server: RemoteServer) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with websockets.connect(server.url, additional_headers=auth(), origin="https://evil.example"):  # pyright: ignore[reportArgumentType]
            pass
    assert refused.value.response.status_code == 403
    async with websockets.connect(server.url, additional_headers=auth(), origin="https://ide.example.com") as ws:  # pyright: ignore[reportArgumentType]
        assert ws.response is not None and ws.response.status_code == 101


async def test_sessions_belong_to_their_principal(server: RemoteServer) -> None:
    async with AcpTestClient.connect_url(server.url, token=ALICE) as alice:
        await alice.initialize()
        sid = await alice.new_session()
        await alice.prompt("say mine", session_id=sid)
        assert sid in [s.session_id for s in (await alice.list_sessions()).sessions]
    async with AcpTestClient.connect_url(http_url(server), token=BOB) as bob:
        await bob.initialize()
        assert sid not in [s.session_id for s in (await bob.list_sessions()).sessions]
        for attempt in (bob.load_session(sid), bob.resume_session(sid), bob.fork_session(sid)):
            with pytest.raises(RequestError) as not_found:
                await attempt
            assert not_found.value.code == -32002
        await bob.delete_session(sid)  # "already gone" for Bob, as an unknown id: succeeds and deletes nothing
    async with AcpTestClient.connect_url(server.url, token=ALICE) as alice:
        await alice.initialize()
        _, replayed = await alice.load_session(sid)
        assert [u.content.text for u in replayed if u.session_update == "agent_message_chunk"] == ["mine"]


async def test_sessions_per_connection_limit(server: RemoteServer) -> None:
    async with AcpTestClient.connect_url(server.url, token=ALICE) as client:
        await client.initialize()
        first = await client.new_session()
        await client.new_session()
        with pytest.raises(RequestError) as refused:
            await client.new_session()
        assert refused.value.code == -32600
        assert "max_sessions_per_connection=2" in str(refused.value.data)
        await client.close_session(first)
        await client.new_session()  # room again


async def test_listening_beyond_loopback_needs_a_token() -> None:
    with pytest.raises(UserError, match="without a token"):
        ServeOptions(host="0.0.0.0").check()
    ServeOptions(host="0.0.0.0", tokens=Tokens.parse(ALICE, source="test")).check()


async def test_token_file_format(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"# team\nalice:{ALICE}\n\n{BOB}\n")
    tokens = Tokens.load(path)
    assert tokens.principals[0] == "alice" and tokens.principals[1].startswith("token-")
    assert tokens.principal(f"Bearer {ALICE}") == "alice"
    assert tokens.principal(f"bearer {BOB}") == tokens.principals[1]
    assert tokens.principal(f"Bearer {ALICE}x") is None
    path.write_text("alice:short\n")
    with pytest.raises(UserError, match="at least 16 characters"):
        Tokens.load(path)


# --- connection and idle limits, graceful stop ---------------------------------------------------


async def test_connection_limit_idle_close_and_graceful_stop(tmp_path: Path) -> None:
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store=str(tmp_path / "s.sqlite3")))
    options = ServeOptions(port=0, max_connections=1, idle_seconds=0.4, shutdown_grace_seconds=5)
    async with RemoteServer(agent, options) as small:
        async with websockets.connect(small.url) as ws:
            with pytest.raises(InvalidStatus) as full:
                async with websockets.connect(small.url):
                    pass
            assert full.value.response.status_code == 503
            assert b"max_connections" in full.value.response.body
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 5)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4408
            assert "idle_seconds" in closed.value.rcvd.reason
        async with AcpTestClient.connect_url(small.url) as client:
            await client.initialize()
            sid = await client.new_session()
            turn = asyncio.ensure_future(client.prompt("sleep 0.5\nsay finished", session_id=sid))
            await asyncio.sleep(0.2)
            stopping = asyncio.ensure_future(small.stop())
            await asyncio.sleep(0.1)
            async with httpx.AsyncClient(timeout=5) as http:
                health = await http.get(http_url(small).replace("/acp", "/healthz"))
            assert health.status_code == 503  # draining: the load balancer moves on
            result = await turn  # a running turn is let finish
            assert result.stop_reason == "end_turn" and result.text == "finished"
            await stopping


async def test_a_turn_past_the_grace_period_is_cancelled_and_recorded(tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite3")
    options = ServeOptions(port=0, shutdown_grace_seconds=0.2)
    first = RemoteServer(AcpAgent(ScriptedRunner(), AgentOptions(store=store)), options)
    async with first, AcpTestClient.connect_url(first.url) as client:
        await client.initialize()
        sid = await client.new_session()
        turn = asyncio.ensure_future(client.prompt("say started\nsleep 30", session_id=sid))
        while not client.updates.get(sid) or "started" not in str(client.updates[sid]):
            await asyncio.sleep(0.02)
        await first.stop()
        assert (await turn).stop_reason == "cancelled"
    second = RemoteServer(AcpAgent(ScriptedRunner(), AgentOptions(store=store)), ServeOptions(port=0))
    async with second, AcpTestClient.connect_url(second.url) as client:
        await client.initialize()
        _, replayed = await client.load_session(sid)
        user = [u.content.text for u in replayed if u.session_update == "user_message_chunk"]
        assert user == ["say started\nsleep 30"]
        assert "started" in [u.content.text for u in replayed if u.session_update == "agent_message_chunk"]
