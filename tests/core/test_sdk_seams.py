"""The SDK's private seams (`acpkit_core.server._sdk`): taken on the pinned SDK, optional without it.

The server reaches into three private parts of `agent-client-protocol` (the raw JSON-RPC
connection, its router, its NDJSON transport). On the pinned version each one must really be
used, or the fast paths silently stop working after an SDK upgrade; without them the server must
still serve every method it advertises.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any

import pytest
from acp import RequestError
from acp.schema import AgentMessageChunk
from acpkit_core.auth import AgentMethod, Authentication, AuthRequest
from acpkit_core.config import AgentOptions
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import StopReason
from acpkit_core.server import AcpAgent, _sdk
from acpkit_core.server.transport import DirectSender
from acpkit_core.testing import AcpTestClient, ScriptedRunner


class Greeter:
    async def run_turn(self, turn: Turn) -> StopReason:
        for piece in ("hello ", "there"):
            await turn.emit.text(piece)
        return "end_turn"


def _spy(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[Any]:
    calls: list[Any] = []
    real = getattr(owner, name)

    async def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(args or kwargs)
        return await real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return calls


def test_the_sdk_is_the_pinned_minor_version() -> None:
    assert importlib.metadata.version("agent-client-protocol").startswith("0.12.")


async def test_on_the_pinned_sdk_every_fast_path_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = _spy(monkeypatch, DirectSender, "send")
    agent = AcpAgent(Greeter(), AgentOptions(store="memory"))
    async with AcpTestClient.connect(agent) as c:
        init = await c.initialize()
        assert agent.conn is not None and agent.outbox.sends_wire_json
        typed = _spy(monkeypatch, agent.conn, "session_update")
        sid = await c.new_session()
        r = await c.prompt("hi", session_id=sid)
        await c.delete_session(sid)
    assert r.text == "hello there" and r.stop_reason == "end_turn"
    assert typed == []  # updates left as wire JSON through the raw connection, not the typed client
    assert len(sent) >= 4  # every message went out through the DirectSender under the SDK's framing
    caps = init.agent_capabilities
    assert caps is not None and caps.session_capabilities is not None
    assert caps.session_capabilities.delete is not None  # the route added to the SDK's router
    assert agent.outbox.requests is not None  # `$/cancel_request` both ways: requests tracked by id
    assert c.tracker is not None and c.wire  # the test client's side of the same seams


async def test_logout_is_routed_and_advertised_on_the_pinned_sdk() -> None:
    async def login(request: AuthRequest) -> None:
        return None

    auth = Authentication(methods=[AgentMethod(id="sso", name="Sign in", login=login)])
    agent = AcpAgent(Greeter(), AgentOptions(store="memory", auth=auth))
    async with AcpTestClient.connect(agent) as c:
        init = await c.initialize()
        await c.authenticate("sso")
        await c.logout()
    assert init.agent_capabilities is not None and init.agent_capabilities.auth is not None
    assert init.agent_capabilities.auth.logout is not None
    assert not agent.auth.authenticated


async def test_without_the_private_seams_the_server_serves_everything_it_advertises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Unknown:
        """Stands for an SDK whose internals no longer have the shape we know."""

    real_import = importlib.import_module

    def no_transport(name: str, package: str | None = None) -> Any:
        if name == "acp._transport":
            raise ImportError(name)
        return real_import(name, package)

    monkeypatch.setattr(_sdk, "Connection", Unknown)
    monkeypatch.setattr(_sdk, "MessageRouter", Unknown)
    monkeypatch.setattr(importlib, "import_module", no_transport)
    sent = _spy(monkeypatch, DirectSender, "send")
    agent = AcpAgent(Greeter(), AgentOptions(store="memory"))
    async with AcpTestClient.connect(agent) as c:
        init = await c.initialize()
        assert agent.conn is not None and not agent.outbox.sends_wire_json
        typed = _spy(monkeypatch, agent.conn, "session_update")
        sid = await c.new_session()
        r = await c.prompt("hi", session_id=sid)
        _, replayed = await c.load_session(sid)
        with pytest.raises(RequestError) as deleted:
            await c.delete_session(sid)
    assert r.text == "hello there" and r.stop_reason == "end_turn"
    assert [u.content.text for u in replayed if isinstance(u, AgentMessageChunk)] == ["hello there"]  # type: ignore[union-attr]
    assert len(typed) >= 3 and sent == []
    caps = init.agent_capabilities
    assert caps is not None and caps.session_capabilities is not None
    assert caps.session_capabilities.delete is None  # not advertised, and answered "method not found"
    assert deleted.value.code == -32601
    assert agent.outbox.requests is None  # no `$/cancel_request` (optional in ACP); the rest works


async def test_without_the_seams_an_unstable_update_the_sdk_cannot_carry_is_dropped_not_fatal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seams gone, an opted-in client: a notice (no SDK model) is left out and the turn goes on."""
    monkeypatch.setattr(_sdk, "Connection", type("Unknown", (), {}))
    monkeypatch.setattr(_sdk, "MessageRouter", type("Unknown", (), {}))
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))
    async with AcpTestClient.connect(agent, unstable=["sessionNotices"]) as c:
        await c.initialize()
        assert not agent.outbox.sends_wire_json
        r = await c.prompt("notice warning Disk almost full\nsay hi", session_id=await c.new_session())
    assert r.stop_reason == "end_turn" and r.text == "hi" and r.notices == []
