"""The `thinking` config option and `/thinking` reach the chat model call through `AcpThinkingMiddleware`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from acpkit_core.errors import UserError
from acpkit_core.testing import AcpTestClient
from acpkit_core.thinking import thinking_option
from fake_model import FakeChatModel, Reply
from langchain_acp import AcpThinkingMiddleware
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from lc_helpers import agent_for
from pydantic import Field


class RecordingModel(FakeChatModel):
    """The fake model, also recording the keywords of each call."""

    calls: list[dict[str, Any]] = Field(default_factory=list)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        self.calls.append(dict(kwargs))
        async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
            yield chunk


async def test_the_chosen_level_reaches_the_chat_model_call() -> None:
    model = RecordingModel(script=[Reply(text="ok")], repeat_last=True)
    acp_agent, _ = agent_for(
        [],
        model=model,
        middleware=[AcpThinkingMiddleware(values={"off": "none"})],
        config_options=[thinking_option(("off", "low", "high"))],
    )
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("one", session_id=sid)
        await c.set_config_option(sid, "thinking", "high")
        await c.prompt("two", session_id=sid)
        switched = await c.prompt("/thinking off", session_id=sid)
        assert switched.text == "Thinking: off"
        await c.prompt("three", session_id=sid)
    assert [call.get("reasoning_effort", "unset") for call in model.calls] == ["unset", "high", "none"]


def test_offering_thinking_without_the_middleware_is_refused() -> None:
    with pytest.raises(UserError, match="no AcpThinkingMiddleware"):
        agent_for([], config_options=[thinking_option()])
