"""Extension methods and notifications over real stdio: routed, typed, advertised, unknown ones refused."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from acp import RequestError
from acpkit_core.config import AgentOptions
from acpkit_core.errors import UserError
from acpkit_core.extensions import Extensions
from acpkit_core.testing import AcpTestClient, ScriptedRunner

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

AGENTS = Path(__file__).parent / "agents"


async def test_extension_methods_and_notifications_over_stdio() -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS / "extensions_agent.py")) as c:
        init = await c.initialize()
        assert init.agent_capabilities is not None
        assert init.agent_capabilities.field_meta == {
            "acpkit.extensions": {
                "methods": ["acme/greet", "acme/pings", "acme/whoami"],
                "notifications": ["acme/ping", "acme/seen"],
            },
            # ACP Kit's own extension, beside the developer's (docs/core/rewind.md)
            "acpkit.rewind": {
                "methods": ["acpkit/session/prompts", "acpkit/session/rewind"],
                "forkMeta": "acpkit.fork",
            },
        }
        assert c.conn is not None
        assert await c.conn.ext_method("acme/greet", {"name": "Ada", "times": 2}) == {"text": "hello Ada hello Ada"}
        await c.conn.ext_notification("acme/ping", {"from": "editor"})
        await c.conn.ext_notification("acme/unknown", {})  # dropped, the connection goes on
        for _ in range(100):
            pinged = await c.conn.ext_method("acme/pings", {})
            if pinged["pings"]:
                break
            await asyncio.sleep(0.01)
        assert pinged == {"pings": ["editor"]}  # pyright: ignore[reportPossiblyUnboundVariable]  (the loop runs)
        with pytest.raises(RequestError) as unknown:
            await c.conn.ext_method("acme/nope", {})
        assert unknown.value.code == -32601
        with pytest.raises(RequestError) as bad:
            await c.conn.ext_method("acme/greet", {"times": "many"})
        assert bad.value.code == -32602
        assert bad.value.data == {
            "method": "_acme/greet",
            "details": "name: Field required; "
            "times: Input should be a valid integer, unable to parse string as an integer",
        }
        sid = await c.new_session()  # the agent still serves the protocol
        assert (await c.prompt("say still here", session_id=sid)).text == "still here"


async def test_an_agent_without_extensions_answers_method_not_found() -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS / "scripted_agent.py"), "--store", "memory") as c:
        init = await c.initialize()
        assert init.agent_capabilities is not None
        assert set(init.agent_capabilities.field_meta or {}) == {"acpkit.rewind"}  # ACP Kit's own only
        assert c.conn is not None
        with pytest.raises(RequestError) as unknown:
            await c.conn.ext_method("acme/greet", {"name": "Ada"})
        assert unknown.value.code == -32601


async def test_a_handler_sees_its_connection_and_session_over_stdio(tmp_path: Path) -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS / "extensions_agent.py"), root=tmp_path) as c:
        await c.initialize()
        assert c.conn is not None
        bare = await c.conn.ext_method("acme/whoami", {})
        capabilities = bare.pop("capabilities")
        assert (capabilities["fs"], capabilities["terminal"]) == ({"readTextFile": True, "writeTextFile": True}, True)
        assert bare == {
            "client": {"name": "acpkit-test-client", "version": "0"},
            "terminal": True,
            "protocolVersion": 1,
            "principal": None,
            "session": None,
        }
        sid = await c.new_session()
        await c.prompt("say titled", session_id=sid)
        named = await c.conn.ext_method("acme/whoami", {"sessionId": sid})
        assert named["session"] == {"id": sid, "cwd": str(tmp_path.resolve()), "title": "say titled"}
        with pytest.raises(RequestError) as unknown:
            await c.conn.ext_method("acme/whoami", {"sessionId": "no-such-session"})
        assert unknown.value.code == -32002
        with pytest.raises(RequestError) as bad:
            await c.conn.ext_method("acme/whoami", {"sessionId": 7})
        assert bad.value.code == -32602
        await c.conn.ext_notification("acme/seen", {"sessionId": "no-such-session"})  # dropped
        await c.conn.ext_notification("acme/seen", {"sessionId": sid})
        for _ in range(100):
            pinged = (await c.conn.ext_method("acme/pings", {}))["pings"]
            if pinged:
                break
            await asyncio.sleep(0.01)
        assert pinged == [f"seen in {sid}"]  # pyright: ignore[reportPossiblyUnboundVariable]


async def test_a_remote_handler_sees_the_principal_and_only_its_sessions(tmp_path: Path) -> None:
    from acpkit_core.remote import RemoteServer, ServeOptions, Tokens
    from acpkit_core.server import AcpAgent

    sys.path.insert(0, str(AGENTS))
    from extensions_agent import extensions as served  # pyright: ignore[reportMissingImports, reportUnknownVariableType]

    alice, bob = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef"
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store=str(tmp_path / "s.sqlite3"), extensions=served))
    tokens = Tokens.parse(f"alice:{alice}\nbob:{bob}\n", source="test")
    async with RemoteServer(agent, ServeOptions(port=0, tokens=tokens)) as server:
        async with AcpTestClient.connect_url(server.url, token=alice) as c:
            await c.initialize()
            assert c.conn is not None
            sid = await c.new_session()
            mine = await c.conn.ext_method("acme/whoami", {"sessionId": sid})
            assert (mine["principal"], mine["session"]["id"]) == ("alice", sid)
        async with AcpTestClient.connect_url(server.url, token=bob) as c:
            await c.initialize()
            assert c.conn is not None
            assert (await c.conn.ext_method("acme/whoami", {}))["principal"] == "bob"
            with pytest.raises(RequestError) as theirs:
                await c.conn.ext_method("acme/whoami", {"sessionId": sid})
            assert theirs.value.code == -32002


def test_registration_mistakes_are_user_errors() -> None:
    extensions = Extensions()
    with pytest.raises(UserError, match="without the leading '_'"):
        extensions.method("_acme/x")
    with pytest.raises(UserError, match="must be an async function"):
        extensions.method("acme/sync")(lambda params: {})  # pyright: ignore[reportArgumentType, reportUnknownLambdaType]

    @extensions.method("acme/x")
    async def first(params: dict[str, object]) -> dict[str, object]:
        return {}

    with pytest.raises(UserError, match="registered twice"):
        extensions.method("acme/x")(first)


async def test_both_adapters_pass_extensions_through() -> None:
    from langchain.agents import create_agent
    from langchain_acp import create_acp_agent as serve_graph
    from pydantic_acp import create_acp_agent as serve_agent
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    sys.path.insert(0, str(Path(__file__).parents[1] / "langchain"))
    from fake_model import FakeChatModel  # pyright: ignore[reportMissingImports, reportUnknownVariableType]

    extensions = Extensions()

    @extensions.method("acme/version")
    async def version(params: dict[str, object]) -> dict[str, object]:
        return {"version": 2}

    served = [
        serve_agent(Agent(TestModel()), store="memory", extensions=extensions),
        serve_graph(create_agent(FakeChatModel()), store="memory", extensions=extensions),
    ]
    for acp_agent in served:
        async with AcpTestClient.connect(acp_agent) as c:
            init = await c.initialize()
            assert init.agent_capabilities is not None and init.agent_capabilities.field_meta is not None
            assert c.conn is not None
            assert await c.conn.ext_method("acme/version", {}) == {"version": 2}
