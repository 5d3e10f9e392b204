"""Authentication and a tool's question over real stdio, for both adapters' `run_acp`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp import RequestError
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

TESTS = Path(__file__).resolve().parents[1]
APPS = {"pydantic": TESTS / "pydantic" / "pyd_auth_ask_app.py", "langchain": TESTS / "langchain" / "lc_auth_ask_app.py"}


@pytest.mark.parametrize("adapter", sorted(APPS))
async def test_authenticate_then_a_tool_asks_the_user(adapter: str, tmp_path: Path) -> None:
    env = {"ACME_API_KEY": "k-123"}
    async with AcpTestClient.spawn(
        sys.executable, str(APPS[adapter]), root=tmp_path, env=env, elicitation=True, elicitation_answers=["green"]
    ) as c:
        init = await c.initialize()
        methods = init.model_dump(by_alias=True, exclude_none=True)["authMethods"]
        assert methods == [
            {
                "id": "acme-key",
                "name": "ACME API key",
                "description": "Set ACME_API_KEY where the agent runs",
                "_meta": {"acpkit.envVars": {"vars": [{"name": "ACME_API_KEY", "secret": True, "optional": False}]}},
            }
        ]
        with pytest.raises(RequestError) as refused:
            await c.new_session()
        assert refused.value.code == -32000
        assert "Authentication required before session/new: authenticate with 'acme-key'" in str(refused.value)
        await c.c.authenticate(method_id="acme-key")
        sid = await c.new_session()
        r = await c.prompt("Paint something.", session_id=sid)
    assert r.stop_reason == "end_turn"
    (asked,) = c.elicitations
    assert asked["message"] == "Which color?" and asked["toolCallId"] == "pick-1"
    assert asked["requestedSchema"]["properties"]["answer"]["oneOf"] == [
        {"const": "red", "title": "red"},
        {"const": "green", "title": "green"},
    ]
    call = r.tool_calls["pick-1"]
    assert call.status == "completed" and "green" in json.dumps(call.raw_output)
    assert r.text == "Painted it."


@pytest.mark.timeout(180)  # four processes of the app (two logins, two connections): slow under load
@pytest.mark.parametrize("adapter", sorted(APPS))
async def test_a_terminal_login_in_the_agents_own_program_then_logout(adapter: str, tmp_path: Path) -> None:
    key_file = tmp_path / "acme.key"
    env = {"ACME_KEY_FILE": str(key_file)}
    app = str(APPS[adapter])
    async with AcpTestClient.spawn(sys.executable, app, root=tmp_path, env=env, auth_terminal=True) as c:
        init = await c.initialize()
        with pytest.raises(RequestError) as refused:
            await c.new_session()
    wire = init.model_dump(by_alias=True, exclude_none=True)
    terminal = next(m for m in wire["authMethods"] if m.get("type") == "terminal")
    assert terminal == {
        "type": "terminal",
        "id": "acme-login",
        "name": "Log in to ACME",
        "env": {"ACPKIT_TERMINAL_LOGIN": "acme-login"},
    }
    assert wire["agentCapabilities"]["auth"] == {"logout": {}}
    assert refused.value.code == -32000
    assert "(acme-login was refused: not logged in to ACME" in str(refused.value)

    # As an editor does: the agent's own command again, with the method's env, in a terminal
    # (here the typed key arrives on stdin). A wrong key fails the login with the reason.
    login_env = {**os.environ, **env, **terminal["env"]}
    wrong = subprocess.run([sys.executable, app], input="nope\n", env=login_env, capture_output=True, text=True)
    assert wrong.returncode == 1 and "that is not an ACME key" in wrong.stderr
    run = [sys.executable, "-m", "acpkit_core.cli", "run", f"{app}:acp_agent"]  # the same through `acpkit run`
    done = subprocess.run(run, input="k-456\n", env=login_env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # `acpkit run` keeps stdout for ACP from the start: the question went to stderr, the same terminal
    assert "ACME API key: " in done.stderr and key_file.read_text() == "k-456"

    async with AcpTestClient.spawn(
        sys.executable, app, root=tmp_path, env=env, auth_terminal=True, permission_answers=["green"]
    ) as c:
        await c.initialize()
        sid = await c.new_session()  # reconnected: the login is in effect
        r = await c.prompt("Paint something.", session_id=sid)
        await c.logout()
        with pytest.raises(RequestError) as after:
            await c.new_session()
        with pytest.raises(RequestError) as prompt_after:
            await c.prompt("Again.", session_id=sid)
    assert r.text == "Painted it."
    assert not key_file.exists()  # `logout` forgot the stored key
    assert after.value.code == prompt_after.value.code == -32000


LINK_APPS = {"pydantic": TESTS / "pydantic" / "pyd_link_app.py", "langchain": TESTS / "langchain" / "lc_link_app.py"}


@pytest.mark.parametrize("adapter", sorted(LINK_APPS))
async def test_a_tool_asks_to_open_a_link_then_completes_it(adapter: str, tmp_path: Path) -> None:
    app = str(LINK_APPS[adapter])
    async with AcpTestClient.spawn(
        sys.executable, app, root=tmp_path, elicitation_url=True, elicitation_answers=["ok"]
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Connect my account.", session_id=sid)
        for _ in range(100):  # `elicitation/complete` is a notification: it may trail the answer
            if c.completed_elicitations:
                break
            await asyncio.sleep(0.01)
    (asked,) = c.elicitations
    assert asked == {
        "message": "Connect your ACME account",
        "mode": "url",
        "sessionId": sid,
        "toolCallId": "connect-1",
        "elicitationId": asked["elicitationId"],
        "url": "https://acme.example/connect?flow=1",
    }
    assert c.completed_elicitations == [asked["elicitationId"]]
    assert "answered via elicitation" in json.dumps(r.tool_calls["connect-1"].raw_output)
    assert r.text == "Connected."


@pytest.mark.parametrize("adapter", sorted(LINK_APPS))
async def test_a_client_without_url_elicitation_gets_the_developers_fallback(adapter: str, tmp_path: Path) -> None:
    async with AcpTestClient.spawn(sys.executable, str(LINK_APPS[adapter]), root=tmp_path, elicitation=True) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Connect my account.", session_id=sid)
    assert c.elicitations == [] and r.permission_requests == []  # never in form mode, not the built-in card
    assert r.text == "Open https://acme.example/connect?flow=1 in your browser, then ask me again. Connected."
    assert "unavailable via fallback" in json.dumps(r.tool_calls["connect-1"].raw_output)
