"""Remembered answers and policy denials hold on every later call, whatever the runner asks."""

from __future__ import annotations

from acpkit_core.config import AgentOptions
from acpkit_core.permissions import STANDARD_MODES, PermissionPolicy
from acpkit_core.prompt.ir import Text
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import StopReason
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient


class GuardedTool:
    """Runs the tool named by the prompt the way an adapter does: ask if needed, run only when allowed."""

    async def run_turn(self, turn: Turn) -> StopReason:
        first = turn.prompt[0]
        name = first.text if isinstance(first, Text) else ""
        kind = turn.classify_tool(name)
        if not turn.tool_allowed(name, kind):
            await turn.emit.text(f"{name}: hidden")
            return "end_turn"
        ran = True
        if turn.needs_permission(name, kind):
            decision = await turn.request_permission("call-1", tool_name=name, title=name, kind=kind)
            ran = decision.allowed
        await turn.emit.text(f"{name}: ran={ran}")
        return "end_turn"


async def test_always_reject_is_never_overridden_on_later_turns() -> None:
    agent = AcpAgent(GuardedTool(), AgentOptions(store="memory", permission_policy=PermissionPolicy(ask=("rm",))))
    async with AcpTestClient.connect(agent, permission_answers=["reject_always"]) as client:
        await client.initialize()
        sid = await client.new_session()
        first = await client.prompt("rm", session_id=sid)
        second = await client.prompt("rm", session_id=sid)
    assert (first.text, len(first.permission_requests)) == ("rm: ran=False", 1)
    assert (second.text, len(second.permission_requests)) == ("rm: ran=False", 0)


async def test_always_allow_runs_later_calls_without_asking() -> None:
    agent = AcpAgent(GuardedTool(), AgentOptions(store="memory", permission_policy=PermissionPolicy(ask=("rm",))))
    async with AcpTestClient.connect(agent, permission_answers=["allow_always"]) as client:
        await client.initialize()
        sid = await client.new_session()
        first = await client.prompt("rm", session_id=sid)
        second = await client.prompt("rm", session_id=sid)
    assert (first.text, len(first.permission_requests)) == ("rm: ran=True", 1)
    assert (second.text, len(second.permission_requests)) == ("rm: ran=True", 0)


async def test_policy_deny_hides_the_tool_and_request_permission_refuses_without_asking() -> None:
    agent = AcpAgent(GuardedTool(), AgentOptions(store="memory", permission_policy=PermissionPolicy(deny=("nuke",))))
    async with AcpTestClient.connect(agent, permission_answers=["allow_once"]) as client:
        await client.initialize()
        sid = await client.new_session()
        result = await client.prompt("nuke", session_id=sid)
    assert result.text == "nuke: hidden"
    assert result.permission_requests == []


class AlwaysAsks:
    """A runner whose framework marks the tool `requires_approval` and so always calls request_permission."""

    async def run_turn(self, turn: Turn) -> StopReason:
        decision = await turn.request_permission("call-1", tool_name="nuke", title="nuke", kind="delete")
        await turn.emit.text(decision.outcome)
        return "end_turn"


async def test_request_permission_refuses_a_denied_tool_without_asking() -> None:
    agent = AcpAgent(AlwaysAsks(), AgentOptions(store="memory", permission_policy=PermissionPolicy(deny=("nuke",))))
    async with AcpTestClient.connect(agent, permission_answers=["allow_once"]) as client:
        await client.initialize()
        sid = await client.new_session()
        result = await client.prompt("go", session_id=sid)
    assert (result.text, result.permission_requests) == ("reject", [])


async def test_readonly_mode_refuses_a_mutating_tool_without_asking() -> None:
    agent = AcpAgent(AlwaysAsks(), AgentOptions(store="memory", modes=STANDARD_MODES, default_mode="readonly"))
    async with AcpTestClient.connect(agent, permission_answers=["allow_once"]) as client:
        await client.initialize()
        sid = await client.new_session()
        result = await client.prompt("go", session_id=sid)
    assert (result.text, result.permission_requests) == ("reject", [])
