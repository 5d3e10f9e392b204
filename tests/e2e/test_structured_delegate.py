"""Structured output through an ACP agent used as a model (`AcpModel`, `AcpChatModel`), over real stdio.

The caller's framework asks for structured output its own way (pydantic-ai's tool or native output,
LangChain's `with_structured_output` or `response_format`); the remote agent is asked for one JSON
object (in `_meta.acpkit.output` and in words) and its answer comes back as the framework expects.
Remote agents: pydantic-acp (answers with its model's own structured output), langchain-acp (its
model reads the words) and a bare-core runner that ignores `_meta` and answers in a code fence.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp import RequestError
from acpkit_core.errors import UserError
from acpkit_core.prompt import OutputSchema, prompt_meta
from acpkit_core.testing import AcpTestClient
from pydantic import BaseModel

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

AGENTS = Path(__file__).parent / "agents"
PYDANTIC_REMOTE = [sys.executable, str(AGENTS / "structured_remote.py"), "pydantic"]
LANGCHAIN_REMOTE = [sys.executable, str(AGENTS / "structured_remote.py"), "langchain"]
TEXT_REMOTE = [sys.executable, str(AGENTS / "json_runner.py")]


class City(BaseModel):
    name: str
    population: int


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        (PYDANTIC_REMOTE, City(name="a", population=0)),  # its TestModel filled in the schema it was sent
        (LANGCHAIN_REMOTE, City(name="Lyon", population=522250)),
        (TEXT_REMOTE, City(name="Paris", population=2102650)),
    ],
)
async def test_acp_model_answers_a_tool_output(remote: list[str], expected: City) -> None:
    from pydantic_acp import AcpModel
    from pydantic_ai import Agent

    async with Agent(AcpModel(remote), output_type=City) as agent:
        result = await agent.run("Which city is Paris?")
    assert result.output == expected


async def test_acp_model_native_output_and_a_retry_in_the_same_remote_session() -> None:
    from pydantic_acp import AcpModel
    from pydantic_ai import Agent, NativeOutput
    from pydantic_ai.messages import ModelResponse

    model = AcpModel(TEXT_REMOTE)
    async with Agent(model, output_type=NativeOutput(City)) as agent:
        native = await agent.run("Which city is Paris?")
    async with Agent(model, output_type=City) as agent:
        retried = await agent.run("How many live in Atlantis?")  # prose first: pydantic-ai asks again
    assert native.output == City(name="Paris", population=2102650)
    assert retried.output == City(name="Atlantis", population=0)
    assert len([m for m in retried.all_messages() if isinstance(m, ModelResponse)]) == 2


@pytest.mark.parametrize(
    ("remote", "expected"),
    [(PYDANTIC_REMOTE, City(name="a", population=0)), (TEXT_REMOTE, City(name="Paris", population=2102650))],
)
async def test_acp_chat_model_with_structured_output_and_create_agent(remote: list[str], expected: City) -> None:
    from langchain.agents import create_agent
    from langchain_acp import AcpChatModel

    model = AcpChatModel(command=remote)
    try:
        direct = await model.with_structured_output(City).ainvoke("Which city is Paris?")
        graph = create_agent(model, tools=[], response_format=City)
        state = await graph.ainvoke({"messages": [("user", "Which city is Paris?")]})  # pyright: ignore[reportArgumentType]
    finally:
        await model.aclose()
    assert direct == expected
    assert state["structured_response"] == expected


async def test_acp_chat_model_still_refuses_tools_left_to_the_models_choice() -> None:
    from langchain_acp import AcpChatModel
    from langchain_core.tools import tool

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    with pytest.raises(UserError, match="cannot offer tools \\(lookup\\)"):
        AcpChatModel(command=TEXT_REMOTE).bind_tools([lookup])


async def test_a_served_graph_is_told_the_schema_a_prompt_asks_for() -> None:
    schema = OutputSchema(name="City", schema=City.model_json_schema())
    async with AcpTestClient.spawn(*LANGCHAIN_REMOTE) as c:
        await c.initialize()
        sid = await c.new_session()
        plain = await c.prompt("Which city?", session_id=sid)
        asked = await c.prompt("Which city?", session_id=sid, meta=prompt_meta(output=schema))
        with pytest.raises(RequestError) as bad:
            await c.c.prompt(session_id=sid, prompt=[], acpkit={"output": {"schema": {"type": "string"}}})
    assert plain.text == "plain answer"
    assert City.model_validate_json(asked.text.strip("`\njson")) == City(name="Lyon", population=522250)
    assert bad.value.code == -32602
    assert bad.value.data == {
        "index": None,
        "field": "_meta.acpkit.output.schema",
        "reason": 'must be the JSON schema of an object ({"type": "object", ...})',
    }
