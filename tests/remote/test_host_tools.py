"""Who owns files and terminals (`--host-tools client|server|off`): one meaning for both adapters and `serve -- CMD`.

Each case runs a real `acpkit serve` process: the pydantic-ai example, the LangGraph example, or a
bare-SDK agent behind `-- CMD`. The server's workspace and the client's directory each hold a
`notes.txt` and a `README.md` of their own, so what the agent read and where it wrote shows who
served its tools; the client's recorded wire shows whether a file request ever reached it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

import pytest
from acpkit_core.errors import UserError
from acpkit_core.testing import AcpTestClient
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel
from replicas import Replica, replica

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CHILD = Path(__file__).parent / "agents" / "sdk_child_agent.py"
TARGETS = {
    "pydantic": ["serve", str(EXAMPLES / "pydantic_agent.py")],
    "langgraph": ["serve", str(EXAMPLES / "langgraph_agent.py")],
    "command": ["serve", "--", sys.executable, str(CHILD)],
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "server-workspace"
    ws.mkdir()
    (ws / "notes.txt").write_text("server notes\n")
    (ws / "README.md").write_text("Server readme\n")
    (ws / "escape").symlink_to("/etc")
    return ws.resolve()


def _serve(
    kind: str, mode: str, workspace: Path, tmp_path: Path, env: dict[str, str] | None = None
) -> contextlib.AbstractAsyncContextManager[Replica]:
    _, *rest = TARGETS[kind]
    flags = ["--host-tools", mode, "--cwd", str(workspace)]
    if kind == "command":
        args, target = [*flags, *rest], None
    else:
        args, target = flags, rest[0]
    return replica("", target=target, args=args, env={"ACPKIT_STATE_DIR": str(tmp_path / "state"), **(env or {})})


def _client(client_root: Path) -> None:
    (client_root / "notes.txt").write_text("client notes\n")
    (client_root / "README.md").write_text("Client readme\n")


def _fs_requests(client: AcpTestClient) -> list[str]:
    """File and terminal requests the client received."""
    return [
        str(m.get("method"))
        for direction, m in client.wire
        if direction == "received" and str(m.get("method", "")).startswith(("fs/", "terminal/"))
    ]


@pytest.mark.parametrize("kind", ["pydantic", "langgraph"])
async def test_server_mode_the_adapters_read_and_write_the_servers_workspace(
    kind: str, workspace: Path, tmp_path: Path
) -> None:
    async with _serve(kind, "server", workspace, tmp_path) as server, AcpTestClient.connect_url(server.url) as client:
        _client(client.root)
        await client.initialize()
        sid = await client.new_session()  # its cwd, the client's directory, is not on the server
        prompt = "write notes about notes.txt" if kind == "pydantic" else "write notes about README.md"
        result = await client.prompt(prompt, session_id=sid)
        assert result.stop_reason == "end_turn"
        if kind == "pydantic":
            assert result.text.endswith("Done: I read `notes.txt` and wrote my notes to `acpkit-notes.md`.")
            assert (workspace / "acpkit-notes.md").read_text() == "# Notes\n\nFirst line of notes.txt: server notes\n"
        else:
            assert result.text.endswith("Done: I read README.md and wrote acpkit-notes.md.")
            assert "Server readme" in json.dumps([u.model_dump(mode="json") for u in result.updates])
            assert (workspace / "acpkit-notes.md").exists()
        assert len(result.permission_requests) == 1  # the mode and the permission policy still apply
        assert not (client.root / "acpkit-notes.md").exists()
        assert _fs_requests(client) == []


@pytest.mark.parametrize("kind", ["pydantic", "langgraph"])
async def test_off_mode_the_adapters_offer_no_file_tools(kind: str, workspace: Path, tmp_path: Path) -> None:
    async with _serve(kind, "off", workspace, tmp_path) as server, AcpTestClient.connect_url(server.url) as client:
        _client(client.root)
        await client.initialize()
        sid = await client.new_session()
        result = await client.prompt("write notes about notes.txt", session_id=sid)
        assert result.stop_reason == "end_turn"
        if kind == "pydantic":
            assert result.text == (
                "This editor does not share its files with me, so I cannot read `notes.txt` or write notes about it."
            )
        else:
            assert result.text == "This editor does not share its files with me, so I cannot read README.md."
        assert [u for u in result.updates if u.session_update == "tool_call"] == []
        assert _fs_requests(client) == []
        assert not (workspace / "acpkit-notes.md").exists() and not (client.root / "acpkit-notes.md").exists()


@pytest.mark.parametrize("kind", ["pydantic", "langgraph"])
async def test_client_mode_the_adapters_use_the_clients_files(kind: str, workspace: Path, tmp_path: Path) -> None:
    async with _serve(kind, "client", workspace, tmp_path) as server, AcpTestClient.connect_url(server.url) as client:
        _client(client.root)
        await client.initialize()
        sid = await client.new_session()
        result = await client.prompt("write notes about notes.txt", session_id=sid)
        assert result.stop_reason == "end_turn"
        assert (client.root / "acpkit-notes.md").exists()
        assert not (workspace / "acpkit-notes.md").exists()
        assert "fs/write_text_file" in _fs_requests(client)


async def _say(client: AcpTestClient, sid: str, text: str) -> str:
    result = await asyncio.wait_for(client.prompt(text, session_id=sid), 30)
    assert result.stop_reason == "end_turn"
    return result.text


async def test_server_mode_a_served_command_works_in_the_servers_workspace(workspace: Path, tmp_path: Path) -> None:
    token = "alice-token-0123456789abcdef"
    async with (
        _serve("command", "server", workspace, tmp_path, env={"ACPKIT_SERVE_TOKENS": f"alice:{token}"}) as server,
        AcpTestClient.connect_url(server.http_url, token=token) as client,
    ):
        _client(client.root)
        await client.initialize()
        sid = await client.new_session()
        caps = json.loads(await _say(client, sid, "caps"))
        assert caps == {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
        assert await _say(client, sid, "cwd") == str(workspace)  # the client's cwd is not on this machine
        assert await _say(client, sid, f"read {workspace / 'notes.txt'}") == "server notes\n"
        assert (
            await _say(client, sid, f"write {workspace / 'out.txt'} from-the-child") == f"wrote {workspace / 'out.txt'}"
        )
        assert (workspace / "out.txt").read_text() == "from-the-child"
        assert await _say(client, sid, "shell pwd") == f"{workspace} (exit 0)"
        assert token not in await _say(client, sid, "shell env")  # the server's tokens reach no terminal
        assert await _say(client, sid, "env ACPKIT_SERVE_TOKENS") == "<unset>"  # nor the child
        for outside in (client.root / "notes.txt", Path("/etc/hostname"), workspace / "escape" / "hostname"):
            answer = await _say(client, sid, f"read {outside}")
            assert answer.startswith("error: Invalid params"), answer
            assert "outside the server's workspace" in answer
        assert _fs_requests(client) == []


async def test_off_mode_a_served_command_is_told_no_files_and_refused_any(workspace: Path, tmp_path: Path) -> None:
    async with _serve("command", "off", workspace, tmp_path) as server, AcpTestClient.connect_url(server.url) as client:
        _client(client.root)
        await client.initialize()
        sid = await client.new_session()
        caps = json.loads(await _say(client, sid, "caps"))
        assert caps == {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
        answer = await _say(client, sid, f"read {client.root / 'notes.txt'}")
        assert answer == "error: fs/read_text_file: file and terminal tools are off on this server (host_tools='off')"
        assert await _say(client, sid, "cwd") == str(client.root)  # the client's cwd, as sent
        assert _fs_requests(client) == []


def test_the_option_is_checked_when_the_agent_is_made(tmp_path: Path) -> None:
    agent = Agent(TestModel())
    with pytest.raises(UserError, match=r"host_tools='server' needs a workspace: give allowed_paths"):
        create_acp_agent(agent, host_tools="server")
    with pytest.raises(UserError, match=r"workspace directory '/no/such/dir' does not exist"):
        create_acp_agent(agent, host_tools="server", allowed_paths=["/no/such/dir"])
    with pytest.raises(UserError, match=r"host_tools='everyone': must be one of 'client', 'server', 'off'"):
        create_acp_agent(agent, host_tools="everyone")  # pyright: ignore[reportArgumentType]
    assert create_acp_agent(agent, host_tools="server", allowed_paths=[str(tmp_path)]).sessions.workspace is not None
