"""Extension methods and notifications over real stdio: routed, typed, advertised, unknown ones refused."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from acp import RequestError
from acpkit_core.errors import UserError
from acpkit_core.extensions import Extensions
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

AGENTS = Path(__file__).parent / "agents"


async def test_extension_methods_and_notifications_over_stdio() -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS / "extensions_agent.py")) as c:
        init = await c.initialize()
        assert init.agent_capabilities is not None
        assert init.agent_capabilities.field_meta == {
            "acpkit.extensions": {"methods": ["acme/greet", "acme/pings"], "notifications": ["acme/ping"]},
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
