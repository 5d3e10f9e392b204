"""One per-turn limit, `max_turn_requests`, with the same meaning on both adapters.

A model that calls a tool at every request never ends its turn by itself: on both adapters the
turn makes exactly `max_turn_requests` model requests (a DeepAgents subagent's included), then
ends `max_turn_requests` with a message naming the limit and how to raise it. The default lets a
long turn go on (past pydantic-ai's 50 requests and LangGraph's 25 steps).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import langchain_acp
import pydantic_acp
import pytest
from acpkit_core.errors import UserError
from acpkit_core.limits import MAX_TURN_REQUESTS
from acpkit_core.runner.stop import request_limit_message
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.usage import UsageLimits

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
from fake_model import Call, FakeChatModel, Reply

pytestmark = pytest.mark.timeout(60)


@tool
def step(n: int) -> str:
    """One step of the work."""
    return f"step {n} done"


def _pydantic(calls: list[int], *, until: int | None = None, **options: Any) -> AcpAgent:
    """A pydantic-ai agent whose model calls `step` at every request (until `until` tool results, then answers)."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        calls.append(1)
        done = sum(isinstance(p, ToolReturnPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts)
        if until is not None and done >= until:
            yield f"done after {done} steps"
            return
        yield {0: DeltaToolCall(name="step", json_args=json.dumps({"n": done + 1}), tool_call_id=f"s{done + 1}")}

    agent = Agent(FunctionModel(stream_function=stream, model_name="stepper"))

    @agent.tool_plain
    def step(n: int) -> str:  # pyright: ignore[reportUnusedFunction]
        """One step of the work."""
        return f"step {n} done"

    return pydantic_acp.create_acp_agent(agent, store="memory", **options)


class Stepper(FakeChatModel):
    """Calls `step` at every request (until `until` tool results, then answers); counts its calls only
    (the fake's record of every call's messages would make a long turn quadratic to serialize)."""

    calls: int = 0
    until: int | None = None

    def _next(self, messages: list[Any], tool_names: list[str]) -> Reply:
        self.calls += 1
        done = sum(getattr(m, "type", "") == "tool" for m in messages)
        if self.until is not None and done >= self.until:
            return Reply(text=f"done after {done} steps")
        return Reply(calls=[Call("step", {"n": done + 1}, f"s{done + 1}")])


def _langgraph(model: FakeChatModel, shape: str = "create_agent", **options: Any) -> AcpAgent:
    if shape == "create_agent":
        graph = create_agent(model, tools=[step])
    else:  # a hand-built StateGraph: LangGraph's own default recursion limit is 25 steps
        bound = model.bind_tools([step])

        async def call_model(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await bound.ainvoke(state["messages"])]}

        builder = StateGraph(MessagesState)
        builder.add_node("model", call_model)
        builder.add_node("tools", ToolNode([step]))
        builder.add_edge(START, "model")
        builder.add_conditional_edges("model", tools_condition, ["tools", END])
        builder.add_edge("tools", "model")
        graph = builder.compile()
    return langchain_acp.create_acp_agent(graph, store="memory", **options)


async def _turn(agent: AcpAgent) -> Any:
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        return await c.prompt("work", session_id=sid)


@pytest.mark.parametrize("adapter", ["pydantic", "create_agent", "state_graph"])
async def test_a_turn_makes_at_most_max_turn_requests_model_requests(adapter: str) -> None:
    if adapter == "pydantic":
        calls: list[int] = []
        r = await _turn(_pydantic(calls, max_turn_requests=4))
        made = len(calls)
    else:
        model = Stepper()
        r = await _turn(_langgraph(model, adapter, max_turn_requests=4))
        made = model.calls
    assert made == 4
    assert r.stop_reason == "max_turn_requests"
    assert [c.status for c in r.tool_calls.values()] == ["completed"] * 4
    assert r.text.endswith(request_limit_message(4))
    assert "max_turn_requests" in r.text and "ACPKIT_MAX_TURN_REQUESTS" in r.text and "--max-turn-requests" in r.text


@pytest.mark.parametrize("adapter", ["pydantic", "create_agent", "state_graph"])
async def test_the_default_lets_a_long_turn_finish(adapter: str) -> None:
    """80 tool rounds: past pydantic-ai's default request limit (50) and LangGraph's default recursion limit (25)."""
    if adapter == "pydantic":
        calls: list[int] = []
        r = await _turn(_pydantic(calls, until=80))
        made = len(calls)
    else:
        model = Stepper(until=80)
        r = await _turn(_langgraph(model, adapter))
        made = model.calls
    assert r.stop_reason == "end_turn"
    assert made == 81
    assert r.text == "done after 80 steps"


async def test_a_subagents_model_requests_count_toward_the_turn() -> None:
    from deepagents import create_deep_agent

    worker_model = Stepper()
    worker = {
        "name": "worker",
        "description": "Does the work.",
        "system_prompt": "You work.",
        "tools": [step],
        "model": worker_model,
    }
    task = Call("task", {"description": "Work.", "subagent_type": "worker"}, "task1")
    main = FakeChatModel(script=[Reply(calls=[task]), Reply(text="Done.")])
    graph = create_deep_agent(model=main, subagents=[worker])  # pyright: ignore[reportArgumentType]
    r = await _turn(langchain_acp.create_acp_agent(graph, store="memory", max_turn_requests=5))
    assert (len(main.seen), worker_model.calls) == (1, 4)
    assert r.stop_reason == "max_turn_requests"
    assert r.text.endswith(request_limit_message(5))


async def test_the_limit_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPKIT_MAX_TURN_REQUESTS", "3")
    calls: list[int] = []
    r = await _turn(_pydantic(calls))
    assert len(calls) == 3 and r.stop_reason == "max_turn_requests"


def test_a_bad_limit_is_refused_when_the_agent_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match="max_turn_requests must be a positive whole number, got 0"):
        _pydantic([], max_turn_requests=0)
    monkeypatch.setenv("ACPKIT_MAX_TURN_REQUESTS", "lots")
    with pytest.raises(UserError, match="ACPKIT_MAX_TURN_REQUESTS: not a positive whole number: 'lots'"):
        _langgraph(FakeChatModel(script=[]))
    assert MAX_TURN_REQUESTS.default == 1000


def test_pydantic_usage_limits_request_limit_is_refused_for_the_one_option() -> None:
    with pytest.raises(UserError, match=r"request_limit=10\).*pass max_turn_requests=10 instead"):
        _pydantic([], usage_limits=UsageLimits(request_limit=10))
    _pydantic([], usage_limits=UsageLimits(tool_calls_limit=5))  # pydantic-ai's default request limit: fine


async def test_other_limits_say_which_limit_stopped_the_turn() -> None:
    calls: list[int] = []
    r = await _turn(_pydantic(calls, usage_limits=UsageLimits(tool_calls_limit=2)))
    assert r.stop_reason == "max_turn_requests"
    assert "pydantic-ai's usage limit" in r.text and "tool_calls_limit of 2" in r.text and "usage_limits=" in r.text
    r = await _turn(_langgraph(Stepper(), "state_graph", recursion_limit=6))
    assert r.stop_reason == "max_turn_requests"
    assert "the graph ran 6 steps, LangGraph's recursion limit" in r.text and "recursion_limit=" in r.text


ACPKIT = str(Path(sys.executable).with_name("acpkit"))
ROOT = Path(__file__).resolve().parents[1]
AGENT_MODULE = '''
from fake_model import Call, FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_core.tools import tool


@tool
def step(n: int) -> str:
    """One step."""
    return "ok"


def reply(messages):
    done = sum(getattr(m, "type", "") == "tool" for m in messages)
    return Reply(calls=[Call("step", {"n": done}, f"s{done}")])


graph = create_agent(FakeChatModel(script=[reply], repeat_last=True), tools=[step])
'''


@pytest.mark.e2e
async def test_acpkit_run_takes_the_limit_as_a_flag(tmp_path: Path) -> None:
    module = tmp_path / "looping_graph.py"
    module.write_text(AGENT_MODULE)
    env = {"PYTHONPATH": str(Path(__file__).parent / "langchain")}
    async with AcpTestClient.spawn(ACPKIT, "run", str(module), "--max-turn-requests", "3", env=env) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("work", session_id=sid)
    assert r.stop_reason == "max_turn_requests"
    assert len(r.tool_calls) == 3
    assert r.text.endswith(request_limit_message(3))


@pytest.mark.e2e
async def test_acpkit_run_refuses_a_bad_limit_flag() -> None:
    process = await asyncio.create_subprocess_exec(
        ACPKIT,
        "run",
        str(ROOT / "examples" / "pydantic_agent.py"),
        "--max-turn-requests",
        "many",
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await process.communicate()
    assert process.returncode != 0
    assert "--max-turn-requests: not a positive whole number: 'many'" in stderr.decode()
