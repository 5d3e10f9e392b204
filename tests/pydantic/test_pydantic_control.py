"""Approvals, cancellation and stop reasons through a real ACP connection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from acpkit_core.permissions import PermissionPolicy
from acpkit_core.testing import AcpTestClient
from pyd_script import Script, call
from pydantic_acp import CANCELLED_TEXT, DECLINED_TEXT, create_acp_agent
from pydantic_acp._history import INTERRUPTED_TOOL_TEXT
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import FinishReason, ModelResponse, TextPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.models.function import DeltaThinkingPart, FunctionModel
from pydantic_ai.tools import RunContext
from pydantic_ai.usage import UsageLimits

pytestmark = pytest.mark.timeout(30)


def write_agent(script: Script, ran: list[str]) -> Agent[None, str]:
    agent = Agent(script.model)

    @agent.tool_plain(requires_approval=True)
    def write_notes(path: str) -> str:
        """Write the notes."""
        ran.append(path)
        return f"wrote {path}"

    return agent


@pytest.mark.parametrize("answer", ["allow_once", "allow_always"])
async def test_approval_allowed_runs_the_tool(answer: str) -> None:
    ran: list[str] = []
    script = Script([[call("write_notes", '{"path": "n.txt"}', id="w1")], ["written"]])
    acp_agent = create_acp_agent(write_agent(script, ran), store="memory")
    async with AcpTestClient.connect(acp_agent, permission_answers=[answer]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("write", session_id=sid)
    assert ran == ["n.txt"]
    assert [p.tool_call.tool_call_id for p in r.permission_requests] == ["w1"]
    request = r.permission_requests[0]
    assert request.tool_call.kind == "edit"
    assert {o.kind for o in request.options} == {"allow_once", "allow_always", "reject_once", "reject_always"}
    tc = r.tool_calls["w1"]
    assert tc.statuses == ["pending", "in_progress", "completed"]
    assert r.stop_reason == "end_turn"
    # The permission request came after the tool call was announced and before it ran.
    kinds = [(u.session_update, getattr(u, "status", None)) for u in r.updates if hasattr(u, "tool_call_id")]
    assert kinds[0] == ("tool_call", "pending")


async def test_allow_always_is_not_asked_again() -> None:
    ran: list[str] = []
    script = Script(
        [
            [call("write_notes", '{"path": "a"}', id="w1")],
            ["one"],
            [call("write_notes", '{"path": "b"}', id="w2")],
            ["two"],
        ]
    )
    acp_agent = create_acp_agent(write_agent(script, ran), store="memory")
    async with AcpTestClient.connect(acp_agent, permission_answers=["allow_always"]) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt("write a", session_id=sid)
        second = await c.prompt("write b", session_id=sid)
    assert ran == ["a", "b"]
    assert len(first.permission_requests) == 1
    assert second.permission_requests == []
    assert second.tool_calls["w2"].status == "completed"


@pytest.mark.parametrize("answer", ["reject_once", "reject_always"])
async def test_rejection_tells_the_model_the_user_declined(answer: str) -> None:
    ran: list[str] = []
    script = Script([[call("write_notes", '{"path": "n.txt"}', id="w1")], ["OK, I will not write."]])
    acp_agent = create_acp_agent(write_agent(script, ran), store="memory")
    async with AcpTestClient.connect(acp_agent, permission_answers=[answer]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("write", session_id=sid)
    assert ran == []
    assert r.stop_reason == "end_turn"
    assert r.tool_calls["w1"].status == "failed"
    returned = script.tool_returns()[0]
    assert (returned.outcome, returned.content) == ("denied", DECLINED_TEXT)
    assert r.text == "OK, I will not write."


async def test_cancelled_permission_ends_the_turn_cancelled() -> None:
    ran: list[str] = []
    script = Script([[call("write_notes", '{"path": "n.txt"}', id="w1")], ["never"], ["next turn"]])
    acp_agent = create_acp_agent(write_agent(script, ran), store="memory")
    async with AcpTestClient.connect(acp_agent, permission_answers=["cancelled"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("write", session_id=sid)
        assert r.stop_reason == "cancelled"
        assert ran == []
        assert r.tool_calls["w1"].status == "failed"
        await c.prompt("again", session_id=sid)
    # The next turn's model sees the call answered, never a dangling one.
    returns = script.tool_returns()
    assert [r.tool_call_id for r in returns] == ["w1"]
    assert returns[0].content in (CANCELLED_TEXT, INTERRUPTED_TOOL_TEXT)


async def test_policy_marked_tool_asks_with_its_own_id() -> None:
    ran: list[str] = []
    script = Script([[call("delete_notes", '{"path": "n.txt"}', id="d1")], ["deleted"]])
    agent = Agent(script.model)

    @agent.tool_plain
    def delete_notes(path: str) -> str:
        ran.append(path)
        return "gone"

    acp_agent = create_acp_agent(agent, store="memory", permission_policy=PermissionPolicy(ask=("delete_*",)))
    async with AcpTestClient.connect(acp_agent, permission_answers=["reject_once", "allow_once"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("delete", session_id=sid)
    assert ran == []
    assert [p.tool_call.tool_call_id for p in r.permission_requests] == ["d1"]
    assert r.permission_requests[0].tool_call.kind == "delete"
    assert script.tool_returns()[0].outcome == "denied"


async def test_cancel_mid_stream_keeps_the_partial_answer() -> None:
    streaming = asyncio.Event()

    async def stream_forever(messages: Any, info: Any) -> AsyncIterator[str]:
        yield "Partial answer"
        streaming.set()
        await asyncio.sleep(30)
        yield "never"

    calls: list[Any] = []

    async def second(messages: Any, info: Any) -> AsyncIterator[str]:
        calls.append(messages)
        yield "fresh"

    turns = iter([stream_forever, second])

    async def dispatch(messages: Any, info: Any) -> AsyncIterator[str]:
        async for chunk in next(turns)(messages, info):
            yield chunk

    agent = Agent(FunctionModel(stream_function=dispatch))
    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        prompt = asyncio.create_task(c.prompt("talk", session_id=sid))
        await asyncio.wait_for(streaming.wait(), 5)
        await asyncio.sleep(0.05)
        await c.cancel(sid)
        r = await asyncio.wait_for(prompt, 5)
        assert r.stop_reason == "cancelled"
        assert r.text == "Partial answer"
        r2 = await c.prompt("again", session_id=sid)
    assert r2.text == "fresh"
    said = [p.content for m in calls[0] if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, TextPart)]
    assert said == ["Partial answer"]


async def test_cancel_mid_tool_stops_it_and_answers_the_call() -> None:
    running = asyncio.Event()
    finished: list[bool] = []
    script = Script([[call("run_tests", '{"command": "pytest"}', id="t1")], ["after cancel"]])
    agent = Agent(script.model)

    @agent.tool_plain
    async def run_tests(command: str) -> str:
        running.set()
        await asyncio.sleep(30)
        finished.append(True)
        return "passed"

    async with AcpTestClient.connect(create_acp_agent(agent, store="memory")) as c:
        await c.initialize()
        sid = await c.new_session()
        prompt = asyncio.create_task(c.prompt("test", session_id=sid))
        await asyncio.wait_for(running.wait(), 5)
        started = asyncio.get_running_loop().time()
        await c.cancel(sid)
        r = await asyncio.wait_for(prompt, 5)
        assert asyncio.get_running_loop().time() - started < 2
        assert r.stop_reason == "cancelled"
        tc = r.tool_calls["t1"]
        assert tc.kind == "execute"
        assert tc.statuses == ["pending", "in_progress", "failed"]
        r2 = await c.prompt("go on", session_id=sid)
    assert finished == []
    assert r2.text == "after cancel"
    returns = script.tool_returns()
    assert [(p.tool_call_id, p.outcome) for p in returns] == [("t1", "interrupted")]


@dataclass
class FinishWith(AbstractCapability[Any]):
    """Test capability: stamps a finish reason on every model response (as a provider would)."""

    reason: FinishReason

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        response.finish_reason = self.reason
        return response


@pytest.mark.parametrize(
    ("steps", "finish", "limits", "expected"),
    [
        ([["done"]], None, None, "end_turn"),
        ([["cut off mid-sent"]], "length", None, "max_tokens"),
        ([[{0: DeltaThinkingPart(content="I should not")}]], "content_filter", None, "refusal"),
        (
            [[call("count", id="c1")], [call("count", id="c2")], ["done"]],
            None,
            2,  # max_turn_requests: the per-turn request limit (pydantic-ai's request limit is set to it)
            "max_turn_requests",
        ),
        (
            [[call("count", id="c1")], [call("count", id="c2")], ["done"]],
            None,
            UsageLimits(tool_calls_limit=1),
            "max_turn_requests",
        ),
        ([["a long answer " * 50]], None, UsageLimits(output_tokens_limit=5), "max_tokens"),
    ],
)
async def test_stop_reasons(
    steps: list[Any], finish: FinishReason | None, limits: UsageLimits | int | None, expected: str
) -> None:
    script = Script(steps)
    agent = Agent(script.model, capabilities=[FinishWith(finish)] if finish else [])

    @agent.tool_plain
    def count() -> int:
        return 1

    options: dict[str, Any] = {"max_turn_requests": limits} if isinstance(limits, int) else {"usage_limits": limits}
    async with AcpTestClient.connect(create_acp_agent(agent, store="memory", **options)) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
        assert r.stop_reason == expected
        # Whatever stopped the turn, the session goes on from a history the model accepts.
        script.steps[len(script.requests) :] = [["still here"]]
        after = await c.prompt("next", session_id=sid)
    assert after.text == "still here"
