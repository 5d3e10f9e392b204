"""Real `acpkit serve` processes: two replicas on one store, SIGKILL mid-turn, the session goes on elsewhere.

Also the editor's side through `acpkit bridge`, `acpkit chat --url`, and SIGTERM draining a turn.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acpkit_core.testing import AcpTestClient
from replicas import replica

TOKEN = "replica-token-0123456789abcdef"


def _texts(updates: list[object], kind: str) -> list[str]:
    return [u.content.text for u in updates if getattr(u, "session_update", None) == kind]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]


@pytest.fixture(params=["sqlite", "postgres"])
def shared_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The store both replicas use: one SQLite file, or one Postgres database (the `postgres_url` fixture)."""
    if request.param == "sqlite":
        return str(tmp_path / "shared.sqlite3")
    try:
        return str(request.getfixturevalue("postgres_url"))
    except pytest.FixtureLookupError:
        pytest.skip("the Postgres test fixture (postgres_url) is not in this tree")


async def _prompt_when_free(client: AcpTestClient, text: str, session_id: str) -> Any:
    """Prompt; while the dead replica's lease is still seen (a few ms on Postgres), retry briefly."""
    for _ in range(50):
        try:
            return await client.prompt(text, session_id=session_id)
        except RequestError as exc:
            if "busy" not in str(exc).lower() and "running a turn" not in str(exc).lower():
                raise
            await asyncio.sleep(0.1)
    return await client.prompt(text, session_id=session_id)


async def test_a_session_survives_the_loss_of_its_replica(tmp_path: Path, shared_store: str) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"team:{TOKEN}\n")
    args = ["--token-file", str(tokens)]
    async with replica(shared_store, args=args) as a, replica(shared_store, args=args) as b:
        async with AcpTestClient.connect_url(a.url, token=TOKEN) as client:
            await client.initialize()
            sid = await client.new_session()
            first = await client.prompt("say first answer", session_id=sid)
            assert first.stop_reason == "end_turn"
            turn = asyncio.ensure_future(client.prompt("say partial words\nsleep 60", session_id=sid))
            while "partial " not in _texts(client.updates[sid], "agent_message_chunk"):
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)  # past the store's flush interval (100 ms)
            a.process.send_signal(signal.SIGKILL)
            await a.process.wait()
            with pytest.raises(Exception):  # noqa: B017 - the connection is gone, however the SDK says it
                await asyncio.wait_for(turn, 30)
        async with AcpTestClient.connect_url(b.http_url, token=TOKEN) as client:
            await client.initialize()
            _, replayed = await client.load_session(sid)
            assert _texts(replayed, "user_message_chunk") == ["say first answer", "say partial words\nsleep 60"]
            said = "".join(_texts(replayed, "agent_message_chunk"))
            assert said.startswith("first answerpartial ")
            assert "interrupted" in said  # the lost turn is closed with a note, once
            after = await _prompt_when_free(client, "say after failover", sid)
            assert after.stop_reason == "end_turn" and after.text == "after failover"


@pytest.fixture(scope="module")
def tokens_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tokens") / "tokens"
    path.write_text(f"{TOKEN}\n")
    return path


async def test_bridge_chat_by_url_and_sigterm_on_one_server(tmp_path: Path, tokens_file: Path) -> None:
    async with replica(str(tmp_path / "s.sqlite3"), args=["--token-file", str(tokens_file)]) as server:
        bridge = [sys.executable, "-m", "acpkit_core.cli", "bridge", server.http_url, "--token-file", str(tokens_file)]
        async with AcpTestClient.spawn(*bridge) as client:
            await client.initialize()
            sid = await client.new_session()
            (client.root / "a.txt").write_text("from the editor's disk")
            result = await client.prompt(f"say via bridge\nread {client.root / 'a.txt'}", session_id=sid)
            assert result.stop_reason == "end_turn"
            assert result.text == "via bridgefrom the editor's disk"

        chat = [sys.executable, "-m", "acpkit_core.cli", "chat", "--url", server.url]
        ok = await asyncio.create_subprocess_exec(
            *chat, "--token-file", str(tokens_file), "-p", "say hello over the wire", stdout=asyncio.subprocess.PIPE
        )
        out, _ = await asyncio.wait_for(ok.communicate(), 60)
        assert ok.returncode == 0 and "hello over the wire" in out.decode()
        wrong = tmp_path / "wrong"
        wrong.write_text("not-the-token-0123456789\n")
        refused = await asyncio.create_subprocess_exec(
            *chat, "--token-file", str(wrong), "-p", "hi", stderr=asyncio.subprocess.PIPE
        )
        _, err = await asyncio.wait_for(refused.communicate(), 60)
        assert refused.returncode == 2 and "HTTP 401" in err.decode() and "token" in err.decode()

        # SIGTERM: the running turn finishes (within --shutdown-grace), then the server exits 0.
        async with AcpTestClient.connect_url(server.url, token=TOKEN) as client:
            await client.initialize()
            sid = await client.new_session()
            turn = asyncio.ensure_future(client.prompt("say begun\nsleep 1\nsay done", session_id=sid))
            while "begun" not in _texts(client.updates[sid], "agent_message_chunk"):
                await asyncio.sleep(0.02)
            server.process.send_signal(signal.SIGTERM)
            result = await asyncio.wait_for(turn, 30)
            assert result.stop_reason == "end_turn" and result.text == "begundone"
        assert await asyncio.wait_for(server.process.wait(), 30) == 0
        assert b"acpkit serve: stopped" in server.stderr
        # a client refused with 401 is an answer, not a server error (uvicorn logged one per refusal)
        assert b"ERROR" not in server.stderr and b"handshake" not in server.stderr, server.stderr.decode()
