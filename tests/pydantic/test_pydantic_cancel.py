"""`session/cancel` stops a pydantic-ai run before its next model request, over real stdio.

The same cases as the LangGraph test (`tests/langchain/test_langchain_cancel.py`): the agent process
(`pyd_cancel_agent.py`) counts its model's calls in a file; the client cancels at the permission
question or while a tool that ignores the cancellation runs; the model is never called again.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.timeout(60), pytest.mark.e2e]

AGENT = Path(__file__).parent / "pyd_cancel_agent.py"


class CancellingClient(AcpTestClient):
    """Sends `session/cancel` once the call `c1` is running, noting how many model calls were made by then."""

    calls_file: Path
    calls_at_cancel: int | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        running = getattr(update, "status", None) == "in_progress"
        if self.calls_at_cancel is None and running and update.tool_call_id == "c1":
            self.calls_at_cancel = len(self.calls_file.read_text().splitlines())
            await self.cancel(session_id)


@pytest.mark.parametrize("tool", ["delete_file", "finishes_anyway", "finishes_anyway_sync"])
async def test_no_model_request_after_a_cancel(tool: str, tmp_path: Path) -> None:
    calls = tmp_path / "model-calls"
    answers = ["cancel_turn"] if tool == "delete_file" else []
    async with CancellingClient.spawn(
        sys.executable, str(AGENT), tool, env={"MODEL_CALLS": str(calls)}, permission_answers=answers
    ) as spawned:
        c = cast(CancellingClient, spawned)
        c.calls_file = calls
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
        answered = len(c.updates[sid])
        await asyncio.sleep(1.0)
        late = c.updates[sid][answered:]
    made = len(calls.read_text().splitlines())
    assert r.stop_reason == "cancelled"
    assert made == 1, f"{made - 1} model request(s) after the cancel"
    assert c.calls_at_cancel in (None, 1)
    assert "c2" not in r.tool_calls
    assert late == []
