"""Authentication and a tool's question over real stdio, for both adapters' `run_acp`."""

from __future__ import annotations

import json
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
                "type": "env_var",
                "id": "acme-key",
                "name": "ACME API key",
                "vars": [{"name": "ACME_API_KEY", "secret": True, "optional": False}],
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
