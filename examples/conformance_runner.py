"""A third runner, outside ACP Kit, checked by the shipped conformance suite in its own pytest run.

`ScenarioRunner` stands for an adapter of a framework ACP Kit does not know: it uses only the
public runner contract (`acpkit_core.runner.protocols`, the emitter and permission methods of the turn).
`TestScenarioRunnerConformance` is all it takes to run every required ACP scenario against it:

    pytest examples/conformance_runner.py      # needs pytest and pytest-asyncio

Each scenario gets a runner scripted for it, as a real adapter would script its framework's model.
"""

from __future__ import annotations

import asyncio
import os

import pytest
from acp.helpers import text_block, tool_content
from acpkit_core import AcpAgent
from acpkit_core.config import AgentOptions
from acpkit_core.prompt.ir import Text
from acpkit_core.runner.notices import notice_limit
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.stop import request_limit_message
from acpkit_core.runner.types import StopReason, TurnUsage
from acpkit_core.testing.conformance import RunnerConformance
from acpkit_core.testing.conformance_memory import AgentFactory


class ScenarioRunner:
    """Behaves as each conformance scenario asks, using only the Runner contract."""

    def __init__(self, scenario: str) -> None:
        self.scenario = scenario

    async def _tool(self, turn: Turn, name: str, args: dict[str, str], work: float | None = None) -> None:
        # Tool calls go through `turn.tool_calls`: it sends each transition once, in order, with the
        # kind, title, locations and content the developer's `tool_presentation` asks for.
        calls = turn.tool_calls
        call_id = f"{name}-{len(turn.session.state.get('history', []))}"
        record = await calls.announce(call_id, name, args)
        if turn.needs_permission(name, record.kind):
            decision = await turn.request_permission(
                call_id, tool_name=name, title=record.title, kind=record.kind, raw_input=args
            )
            if not decision.allowed:
                await calls.fail(call_id, "rejected")
                return
        await calls.start(call_id)
        if work is not None:
            await asyncio.sleep(work)  # left open on purpose: the server must close it when cancelled
        if args.get("path") == "missing.txt":
            await calls.fail(call_id, "FileNotFoundError: missing.txt")
        else:
            path = os.path.join(turn.session.cwd, args.get("path", ""))
            output = await turn.host.read_text_file(path) if name == "read_file" else "ok"
            await calls.finish(call_id, content=[tool_content(text_block(output))], raw_output=output)

    async def run_turn(self, turn: Turn) -> StopReason:
        text = "".join(p.text for p in turn.prompt if isinstance(p, Text))
        history: list[str] = turn.session.state.setdefault("history", [])
        s = self.scenario
        if s == "thought":
            await turn.emit.thought("The user wants me to think.")
            await turn.emit.text("Done thinking.")
        elif s == "tool_ok":
            await self._tool(turn, "read_file", {"path": "notes.txt"})
            if turn.max_requests < 2:  # the answer would be a second model request: over the limit
                await notice_limit(turn.emit, request_limit_message(turn.max_requests))
                return "max_turn_requests"
            await turn.emit.text("Read it.")
        elif s == "tool_fail":
            await self._tool(turn, "read_file", {"path": "missing.txt"})
            await turn.emit.text("It is missing.")
        elif s == "permission":
            await self._tool(turn, "delete_file", {"path": "old.txt"})
            await turn.emit.text("Done.")
        elif s == "cancel_tool":
            await self._tool(turn, "slow_tool", {}, work=30)
        elif s == "question":
            await turn.emit.tool_call("pick_color-1", title="pick_color", kind="other", status="in_progress")
            answer = await turn.ask("Which color?", choices=["red", "green"], tool_call_id="pick_color-1")
            result = answer.value or answer.outcome
            await turn.emit.tool_call_update("pick_color-1", status="completed", raw_output=result)
            await turn.emit.text(f"You chose {result}.")
        elif s == "memory":
            if "name" in text and history:
                await turn.emit.text(f"You told me: {history[-1]}")
            else:
                await turn.emit.text("Nice to meet you.")
        else:
            await turn.emit.text("Hello ")
            await turn.emit.text("from the agent.")
            # what the "model" used: the context meter and the prompt answer's usage come from it
            await turn.emit.usage(TurnUsage(input_tokens=12, output_tokens=4))
        history.append(text)
        return "end_turn"


class TestScenarioRunnerConformance(RunnerConformance):
    """Every required scenario against `ScenarioRunner`."""

    mcp_servers = False  # it connects no MCP servers: the MCP-over-ACP scenario is skipped, with the reason

    @pytest.fixture
    def agent_factory(self) -> AgentFactory:
        def make(scenario: str, options: AgentOptions) -> AcpAgent:
            return AcpAgent(ScenarioRunner(scenario), options)

        return make
