"""`session/cancel` stops a LangGraph run before its next model call, over real stdio, on every graph shape.

The agent process (`lc_cancel_agent.py`) runs a scripted model that calls a tool at every call and
writes one line per call to a file; the client cancels while the tool is asked about or running.
Whatever the shape (`create_agent`, a hand-built `StateGraph` with a `ToolNode`, a DeepAgents
subagent) and whatever the tool does with the cancellation (a question given up, a tool, async or
in a worker thread, that swallows it and returns at once, so the graph goes on, or one that returns
long after the turn was answered), the model is never called again, and nothing is sent about the
turn after its answer.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.timeout(60), pytest.mark.e2e]

AGENT = Path(__file__).parent / "lc_cancel_agent.py"


class CancellingClient(AcpTestClient):
    """Sends `session/cancel` once the call `cancel_at` is running, noting how many model calls were made by then."""

    cancel_at: str | None = None
    calls_file: Path
    calls_at_cancel: int | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        running = getattr(update, "status", None) == "in_progress"
        if self.calls_at_cancel is None and running and update.tool_call_id == self.cancel_at:
            self.calls_at_cancel = model_calls(self.calls_file)
            await self.cancel(session_id)


def model_calls(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


TOOLS = ["delete_file", "finishes_anyway", "finishes_anyway_sync", "stubborn"]
CASES = [
    *((shape, tool) for shape in ("create_agent", "state_graph", "deepagents") for tool in TOOLS),
    ("state_graph_sync", "delete_file"),  # the model called in a worker thread
    ("state_graph_sync", "finishes_anyway"),
]


@pytest.mark.parametrize(("shape", "tool"), CASES)
async def test_no_model_call_after_a_cancel(shape: str, tool: str, tmp_path: Path) -> None:
    calls = tmp_path / "model-calls"
    answers = ["cancel_turn"] if tool == "delete_file" else []  # the user stops the turn at the question
    async with CancellingClient.spawn(
        sys.executable, str(AGENT), shape, tool, env={"MODEL_CALLS": str(calls)}, permission_answers=answers
    ) as spawned:
        c = cast(CancellingClient, spawned)
        c.calls_file = calls
        c.cancel_at = None if tool == "delete_file" else "c1"
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
        before = model_calls(calls) if tool == "delete_file" else c.calls_at_cancel
        assert before is not None, "the call was never seen running"
        answered = len(c.updates[sid])
        await asyncio.sleep(2.5)  # past the end of a tool that ignored the cancellation
        after = model_calls(calls)
        late = c.updates[sid][answered:]
        stderr = c.stderr
    assert r.stop_reason == "cancelled"
    expected = 2 if shape == "deepagents" else 1  # the main agent's call, then the subagent's
    assert before == expected
    assert after == before, f"{after - before} model call(s) after the cancel"
    # a tool that returned at the cancel did finish; the others were stopped (or refused) and closed
    assert r.tool_calls["c1"].status == ("completed" if tool.startswith("finishes_anyway") else "failed")
    assert "c2" not in r.tool_calls
    assert late == []  # nothing about the turn after its answer
    assert "Traceback" not in stderr and "never awaited" not in stderr
