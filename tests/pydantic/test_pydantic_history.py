"""`repair_history`: whatever a failed or cancelled run left, the stored history is one a model accepts."""

from __future__ import annotations

from typing import Literal

from hypothesis import given
from hypothesis import strategies as st
from pydantic_acp import repair_history
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

ids = st.sampled_from(["a", "b", "c", "d"])


def _call(i: str) -> ToolCallPart:
    return ToolCallPart(tool_name=f"t{i}", args="{}", tool_call_id=i)


def _return(i: str) -> ToolReturnPart:
    return ToolReturnPart(tool_name=f"t{i}", content="ok", tool_call_id=i)


def _response(text: str, calls: list[ToolCallPart], state: Literal["complete", "interrupted"]) -> ModelResponse:
    return ModelResponse(parts=[*([TextPart(content=text)] if text else []), *calls], state=state)


def _request(prompt: str, returns: list[ToolReturnPart], state: Literal["complete", "interrupted"]) -> ModelRequest:
    return ModelRequest(parts=[*([UserPromptPart(content=prompt)] if prompt else []), *returns], state=state)


states = st.sampled_from(["complete", "interrupted"])
responses = st.builds(
    _response,
    st.text(max_size=3),
    st.lists(st.builds(_call, ids), max_size=3, unique_by=lambda p: p.tool_call_id),
    states,
)
requests = st.builds(
    _request,
    st.text(max_size=3),
    st.lists(st.builds(_return, ids), max_size=3, unique_by=lambda p: p.tool_call_id),
    states,
)
histories = st.lists(st.one_of(requests, responses), max_size=8)


@given(histories)
def test_every_tool_call_is_answered_right_after_and_nothing_is_empty(messages: list[ModelMessage]) -> None:
    repaired = repair_history(messages)
    for i, message in enumerate(repaired):
        assert message.parts, "no empty message"
        assert message.state == "complete"
        if isinstance(message, ModelResponse):
            asked = {p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)}
            if asked:
                following = repaired[i + 1]
                assert isinstance(following, ModelRequest)
                answered = {p.tool_call_id for p in following.parts if isinstance(p, ToolReturnPart)}
                assert asked <= answered
        if isinstance(message, ModelRequest):
            previous = repaired[i - 1] if i else None
            called: set[str] = set()
            if previous is not None:
                called = {p.tool_call_id for p in previous.parts if isinstance(p, ToolCallPart)}
            replies = [p.tool_call_id for p in message.parts if isinstance(p, ToolReturnPart)]
            assert set(replies) <= called and len(replies) == len(set(replies))
    # It round-trips through the store's JSON form.
    assert len(ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(repaired))) == len(repaired)


@given(histories)
def test_repair_is_idempotent_and_keeps_what_was_said(messages: list[ModelMessage]) -> None:
    once = repair_history(messages)
    assert repair_history(once) == once
    said = [
        p.content
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, TextPart) and p.content
    ]
    kept = [
        p.content
        for m in once
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, TextPart) and p.content
    ]
    assert kept == said
