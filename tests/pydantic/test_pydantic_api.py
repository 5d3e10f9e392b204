"""The public surface: `__all__`, the `acpkit` adapter entry point, options, and history repair."""

from __future__ import annotations

from importlib.metadata import entry_points

import pydantic_acp
import pytest
from acpkit_core.cli.adapters import ENTRY_POINT_GROUP, Adapter
from acpkit_core.config import AgentOptions, ModelOption
from acpkit_core.errors import UserError
from acpkit_core.prompt import parse_prompt
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient
from pydantic_acp import create_acp_agent, repair_history
from pydantic_acp._cli_adapter import adapter
from pydantic_acp._history import INTERRUPTED_TOOL_TEXT
from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.test import TestModel


def test_all_is_the_public_api() -> None:
    assert sorted(pydantic_acp.__all__) == sorted(set(pydantic_acp.__all__))
    for name in pydantic_acp.__all__:
        assert getattr(pydantic_acp, name) is not None
    assert "render_prompt" in pydantic_acp.__all__
    assert "create_acp_agent" in pydantic_acp.__all__ and "run_acp" in pydantic_acp.__all__


def test_create_acp_agent_needs_exactly_one_agent() -> None:
    with pytest.raises(UserError, match="exactly one"):
        create_acp_agent()
    with pytest.raises(UserError, match="exactly one"):
        create_acp_agent(Agent("test"), agent_factory=lambda session: Agent("test"))


def test_create_acp_agent_does_not_touch_the_agent() -> None:
    agent = Agent("test", name="mine")
    before = (agent.model, list(agent.toolsets), agent.name)
    acp_agent = create_acp_agent(agent, models=["test", "openai:gpt-5"], client_tools=True, store="memory")
    assert isinstance(acp_agent, AcpAgent)
    assert acp_agent.options.name == "mine"
    assert [m.id for m in acp_agent.options.models] == ["test", "openai:gpt-5"]
    assert (agent.model, list(agent.toolsets), agent.name) == before


def test_entry_point_is_the_adapter() -> None:
    (ep,) = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == "pydantic"]
    loaded = ep.load()
    assert loaded is adapter
    assert isinstance(loaded, Adapter)
    assert (adapter.name, adapter.package) == ("pydantic", "pydantic-acp")


def test_adapter_supports_agents_and_factories() -> None:
    agent = Agent("test", name="helper")

    def factory(session: object) -> Agent[None, str]:
        return agent

    def not_a_factory() -> int:
        return 1

    assert adapter.supports(agent) and adapter.supports(factory)
    assert not adapter.supports(not_a_factory) and not adapter.supports("agent")
    assert adapter.describe(agent) == "pydantic_ai.Agent 'helper'"
    assert isinstance(adapter.create_agent(agent, AgentOptions(store="memory")), AcpAgent)


def test_adapter_render_is_json() -> None:
    prompt = parse_prompt(
        [
            {"type": "text", "text": "Look"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        ]
    )
    assert adapter.render(prompt) == ["Look", {"kind": "binary", "media_type": "image/png", "base64": "iVBORw0KGgo="}]


def test_repair_answers_dangling_calls_and_drops_empty_messages() -> None:
    messages = [
        ModelRequest(parts=[UserPromptPart(content="go")]),
        ModelResponse(parts=[TextPart(content="calling"), ToolCallPart(tool_name="a", args="{}", tool_call_id="1")]),
        ModelRequest(parts=[], state="interrupted"),
        ModelResponse(parts=[ToolCallPart(tool_name="b", args='{"x": ', tool_call_id="2")], state="interrupted"),
    ]
    repaired = repair_history(messages)
    assert [type(m).__name__ for m in repaired] == ["ModelRequest", "ModelResponse", "ModelRequest"]
    answer = repaired[2]
    assert isinstance(answer, ModelRequest)
    (part,) = answer.parts
    assert isinstance(part, ToolReturnPart)
    assert (part.tool_call_id, part.outcome, part.content) == ("1", "interrupted", INTERRUPTED_TOOL_TEXT)


async def test_a_model_paired_with_an_option_is_offered_and_run_under_the_options_id() -> None:
    fast = (ModelOption(id="fast", name="Fast", description="Answers at once"), TestModel(custom_output_text="fast"))
    slow = (ModelOption(id="slow"), TestModel(custom_output_text="slow"))
    acp_agent = create_acp_agent(Agent(fast[1]), models=[fast, slow], store="memory")
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        assert c.last_session is not None and c.last_session.config_options is not None
        (model,) = [o for o in c.last_session.config_options if o.id == "model"]
        await c.set_config_option(sid, "model", "slow")
        r = await c.prompt("hi", session_id=sid)
    assert [(v.value, v.name, v.description) for v in model.options] == [
        ("fast", "Fast", "Answers at once"),
        ("slow", "slow", None),
    ]
    assert r.text == "slow"


def test_a_model_pair_must_be_an_option_and_a_model() -> None:
    with pytest.raises(UserError, match=r"a pair is \(ModelOption, Model\)"):
        create_acp_agent(Agent("test"), models=[(ModelOption(id="x"), "openai:gpt-5")])  # pyright: ignore[reportArgumentType]
