"""Models that cannot stream (only `request()`): each step is one request, its text one message."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from acp.schema import AgentMessageChunk, ToolCallProgress, ToolCallStart
from acpkit_core.testing import AcpTestClient
from pydantic_acp import create_acp_agent
from pydantic_acp._unstreamed import UnstreamedModel, can_stream, streaming_model
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.settings import ModelSettings

pytestmark = pytest.mark.timeout(30)


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
        returned = next(p for p in last.parts if isinstance(p, ToolReturnPart))
        return ModelResponse(parts=[TextPart(f"The weather is {returned.content}.")])
    return ModelResponse(
        parts=[
            TextPart("Let me check."),
            ToolCallPart(tool_name="weather", args={"city": "Paris"}, tool_call_id="w-1"),
        ]
    )


class RequestOnly(Model):
    """A model implementing `request()` and nothing else."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        return ModelResponse(parts=[TextPart("A whole answer, at once.")], model_name=self.model_name)

    @property
    def model_name(self) -> str:
        return "request-only"

    @property
    def system(self) -> str:
        return "test"


def weather_agent(model: Any) -> Agent[None, str]:
    agent = Agent(model, name="weather")

    @agent.tool_plain
    def weather(city: str) -> str:
        """The weather of a city."""
        return "sunny"

    return agent


async def test_a_function_model_without_stream_function_answers_in_one_message_with_tool_calls() -> None:
    acp_agent = create_acp_agent(weather_agent(FunctionModel(answer)), store="memory")
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Weather in Paris?", session_id=sid)
    assert r.stop_reason == "end_turn"
    chunks = [u.content.text for u in r.updates if isinstance(u, AgentMessageChunk)]
    assert chunks == ["Let me check.", "The weather is sunny."]
    assert [(u.session_update, u.status) for u in r.updates if isinstance(u, ToolCallStart | ToolCallProgress)] == [
        ("tool_call", "pending"),
        ("tool_call_update", "in_progress"),
        ("tool_call_update", "completed"),
    ]
    call = r.tool_calls["w-1"]
    assert call.title.startswith("weather") and call.raw_input == {"city": "Paris"}


async def test_a_model_implementing_only_request_is_served() -> None:
    acp_agent = create_acp_agent(Agent(RequestOnly()), store="memory")
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("hi", session_id=sid)
        again = await c.prompt("again", session_id=sid)
    assert (r.stop_reason, r.text) == ("end_turn", "A whole answer, at once.")
    assert [u.session_update for u in r.updates if isinstance(u, AgentMessageChunk)] == ["agent_message_chunk"]
    assert again.text == "A whole answer, at once."


async def test_a_chosen_model_without_streaming_is_served_too() -> None:
    plain = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("plain")]), model_name="plain")
    acp_agent = create_acp_agent(Agent(TestModel(custom_output_text="streamed")), models=[plain], store="memory")
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("hi", session_id=sid)
    assert r.text == "plain"


def test_only_models_that_cannot_stream_are_wrapped() -> None:
    streaming = FunctionModel(stream_function=_empty)
    assert can_stream(streaming) and streaming_model(streaming) is streaming
    assert can_stream(TestModel()) and streaming_model("openai:gpt-5") == "openai:gpt-5"
    assert streaming_model(None) is None
    assert not can_stream(RequestOnly()) and isinstance(streaming_model(RequestOnly()), UnstreamedModel)
    assert not can_stream(FunctionModel(answer))
    assert can_stream(UnstreamedModel(RequestOnly()))  # the wrapper itself streams


async def _empty(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield ""
