"""Error codes of a failed LangChain turn: core's one rule (auth required -32000, permission denied -32013)."""

from __future__ import annotations

import anthropic
import httpx2 as httpx
import pytest
from acp import RequestError
from acpkit_core.errors import PathPolicyError
from acpkit_core.errors import error_code as core_error_code
from acpkit_core.testing import AcpTestClient
from langchain_acp import client_host, error_code
from langchain_core.messages import BaseMessage
from langchain_core.tools import tool
from lc_helpers import Call, Reply, agent_for

pytestmark = pytest.mark.timeout(30)


def _refuse_key(_: list[BaseMessage]) -> Reply:
    response = httpx.Response(401, request=httpx.Request("POST", "https://api.anthropic.com/v1/messages"))
    raise anthropic.AuthenticationError("invalid x-api-key", response=response, body=None)


@tool
async def read_outside() -> str:
    """Reads a file outside the session's directories (not a ToolException: the turn fails)."""
    return await client_host().read_text_file("/etc/hostname")


async def test_a_provider_auth_error_answers_auth_required() -> None:
    agent, _ = agent_for([_refuse_key])
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        with pytest.raises(RequestError) as failed:
            await c.prompt("hello", session_id=sid)
    assert failed.value.code == -32000
    assert str(failed.value) == "The agent failed: AuthenticationError: invalid x-api-key"


async def test_a_path_policy_refusal_is_permission_denied_not_internal() -> None:
    agent, _ = agent_for([Reply(calls=[Call("read_outside", {}, "r1")]), Reply(text="never")], [read_outside])
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        with pytest.raises(RequestError) as failed:
            await c.prompt("read it", session_id=sid)
        updates = c.updates[sid]
        sent = [method for method, _ in c.requests]
    assert failed.value.code == -32013
    assert str(failed.value).startswith("The agent failed: PathPolicyError: /etc/hostname is outside")
    closed = [u for u in updates if getattr(u, "tool_call_id", None) == "r1" and getattr(u, "status", None)]
    assert closed[-1].status == "failed"
    assert "fs/read_text_file" not in sent  # refused before anything reached the client


@pytest.mark.parametrize(
    "error",
    [PathPolicyError("x"), FileNotFoundError("y"), RuntimeError("permission"), KeyError("k")],
    ids=lambda e: type(e).__name__,
)
def test_langchain_error_code_is_cores(error: Exception) -> None:
    assert error_code(error) == core_error_code(error)
