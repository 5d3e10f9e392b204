"""The `thinking` config option and `/thinking` reach pydantic-ai's `thinking` model setting, per session."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from acp.schema import AgentMessageChunk, SessionConfigOptionSelect
from acpkit_core.testing import AcpTestClient
from acpkit_core.thinking import thinking_option
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.profiles import ModelProfile


def _recording_agent(seen: list[object]) -> Agent[None, str]:
    async def answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        # pydantic-ai moves the `thinking` model setting onto the request parameters
        thinking = info.model_request_parameters.thinking if info.model_request_parameters else None
        seen.append("unset" if thinking is None else thinking)
        yield "ok"

    # a model whose profile says it can think, so pydantic-ai passes the setting on
    return Agent(FunctionModel(stream_function=answer, profile=ModelProfile(supports_thinking=True)))


async def test_the_chosen_level_reaches_the_model_call_and_survives_a_restart(tmp_path: Path) -> None:
    seen: list[object] = []
    store = str(tmp_path / "sessions.sqlite3")
    options = [thinking_option(("off", "low", "high"))]
    async with AcpTestClient.connect(
        create_acp_agent(_recording_agent(seen), store=store, config_options=options)
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        assert c.last_session is not None
        (offered,) = [o for o in c.last_session.config_options or [] if o.id == "thinking"]
        assert isinstance(offered, SessionConfigOptionSelect) and offered.category == "thought_level"
        assert [getattr(v, "value", None) for v in offered.options] == ["default", "off", "low", "high"]
        assert offered.current_value == "default"
        await c.prompt("one", session_id=sid)
        answer = await c.set_config_option(sid, "thinking", "high")
        assert [o.current_value for o in answer.config_options if o.id == "thinking"] == ["high"]
        await c.prompt("two", session_id=sid)
        command = await c.prompt("/thinking off", session_id=sid)
        assert command.text == "Thinking: off"
        await c.prompt("three", session_id=sid)
        listing = await c.prompt("/thinking", session_id=sid)
        assert listing.text == "Thinking: default, off (current), low, high"
        wrong = await c.prompt("/thinking extreme", session_id=sid)
        assert wrong.text == "Unknown thinking level 'extreme'. Levels: default, off, low, high"
        other = await c.new_session()
        await c.prompt("elsewhere", session_id=other)
    assert seen == ["unset", "high", False, "unset"]

    # a new agent process on the same store: the session's level was persisted
    async with AcpTestClient.connect(
        create_acp_agent(_recording_agent(seen), store=store, config_options=options)
    ) as c:
        await c.initialize()
        await c.resume_session(sid)
        await c.prompt("four", session_id=sid)
    assert seen[-1] is False


async def test_the_thinking_command_is_listed_only_when_the_option_is_offered() -> None:
    seen: list[object] = []
    async with AcpTestClient.connect(create_acp_agent(_recording_agent(seen), store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        result = await c.prompt("/thinking high", session_id=sid)
    assert [u for u in result.updates if isinstance(u, AgentMessageChunk)]
    assert seen == ["unset"]  # an unknown command is a prompt like any other
