"""Custom LLM endpoints (`providers/*`, unstable) over real stdio, for both adapters.

The test starts a real local server speaking OpenAI's chat-completions API (streamed as SSE) and
gives its URL and a key to the agent with `providers/set`: the agent's next turn really calls it,
with that key, under the name of the model it would have used, and the client sees its answer.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acpkit_core.testing import AcpTestClient
from openai_stub import openai_stub

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

AGENTS = Path(__file__).parent / "agents" / "endpoint_agents.py"
KEY = "sk-editor-0123"


def main(url: str) -> dict[str, Any]:
    return {"providerId": "main", "apiType": "openai", "baseUrl": url, "headers": {"Authorization": f"Bearer {KEY}"}}


@pytest.mark.parametrize("which", ["pydantic", "langchain"])
async def test_the_agent_calls_the_endpoint_the_client_set_with_its_key(which: str) -> None:
    async with (
        openai_stub() as stub,
        AcpTestClient.spawn(sys.executable, str(AGENTS), which, unstable=["providers"]) as c,
    ):
        init = await c.initialize()
        before = await c.providers_list()
        sid = await c.new_session()
        offline = await c.prompt("hi", session_id=sid)
        assert await c.providers_set(main(stub.url)) == {}
        after = await c.providers_list()
        r = await c.prompt("hello", session_id=sid)
    caps = init.agent_capabilities
    assert caps is not None and caps.providers is not None  # offered: the client opted in
    (entry,) = before["providers"]
    assert (entry["providerId"], entry["required"]) == ("main", True)
    assert "openai" in entry["supported"]
    assert after["providers"][0]["current"] == {"apiType": "openai", "baseUrl": stub.url}  # never the headers
    assert "headers" not in str(after) and KEY not in str(after)
    assert offline.text == "offline answer"
    # The next turn went to the client's endpoint, with its key, under the agent's model name.
    assert r.stop_reason == "end_turn"
    assert r.text == "Hello from the editor's endpoint."
    (call,) = stub.requests
    assert call.path == "/v1/chat/completions"
    assert call.headers["authorization"] == f"Bearer {KEY}"
    assert call.body["model"] == "gpt-4o-mini" and call.body["stream"] is True
    assert call.body["messages"][-1] == {"role": "user", "content": "hello"}


@pytest.mark.parametrize(("which", "own"), [("pydantic", "_function"), ("langchain", "_langchain")])
async def test_bad_settings_are_refused_precisely(which: str, own: str) -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), which, unstable=["providers"]) as c:
        await c.initialize()
        errors: list[tuple[int, Any]] = []
        for params in (
            {**main("http://127.0.0.1:9/v1"), "providerId": "backup"},
            {**main("http://127.0.0.1:9/v1"), "apiType": "_mystery"},
            {**main("ftp://example/v1")},
            {**main("http://127.0.0.1:9/v1"), "headers": {"X-Retries": 3}},
        ):
            with pytest.raises(RequestError) as refused:
                await c.providers_set(params)
            errors.append((refused.value.code, refused.value.data))
        with pytest.raises(RequestError) as required:
            await c.providers_disable("main")
        assert await c.providers_disable("no-such-provider") == {}  # ACP: idempotent
        still = await c.providers_list()
    assert [code for code, _ in errors] == [-32602] * 4
    assert errors[0][1] == {"providerId": "unknown provider 'backup': this agent has one, 'main'"}
    assert errors[1][1]["apiType"].startswith("'_mystery' is not supported here (supported: openai")
    assert errors[2][1] == {"baseUrl": "must be an http(s) URL, got 'ftp://example/v1'"}
    assert errors[3][1] == {"headers": "must be an object of string values"}
    assert required.value.code == -32602
    why = "'main' is required: it is the agent's model (set another endpoint instead)"
    assert required.value.data == {"providerId": why}
    assert still["providers"][0]["current"] == {"apiType": own, "baseUrl": ""}  # still the agent's own model


async def test_a_graph_whose_model_cannot_be_swapped_is_refused_clearly() -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), "langchain-fixed", unstable=["providers"]) as c:
        init = await c.initialize()
        listed = await c.providers_list()
        with pytest.raises(RequestError) as refused:
            await c.providers_set(main("http://127.0.0.1:9/v1"))
    caps = init.agent_capabilities
    assert caps is not None and caps.providers is None  # not advertised: nothing to configure
    assert listed == {"providers": []}
    assert refused.value.code == -32602
    assert refused.value.data == {
        "providerId": "unknown provider 'main': the graph's model is fixed inside it: build it with "
        "create_agent(..., middleware=[AcpModelMiddleware()]) so that a client's endpoint can replace it"
    }


@pytest.mark.parametrize("which", ["pydantic", "langchain"])
async def test_a_plain_client_is_not_offered_providers(which: str) -> None:
    async with AcpTestClient.spawn(sys.executable, str(AGENTS), which) as c:
        init = await c.initialize()
        with pytest.raises(RequestError) as unknown:
            await c.providers_list()
    caps = init.agent_capabilities
    assert caps is not None and caps.providers is None
    assert unknown.value.code == -32601 and unknown.value.data == {"method": "providers/list"}
