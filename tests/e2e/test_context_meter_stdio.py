"""The context meter over real stdio, for both adapters: `usage_update` after each model response of the turn."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp.schema import UsageUpdate
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

TESTS = Path(__file__).resolve().parents[1]
APPS = {"pydantic": TESTS / "pydantic" / "pyd_meter_app.py", "langchain": TESTS / "langchain" / "lc_meter_app.py"}


async def _turn(adapter: str, root: Path, **env: str) -> tuple[list[UsageUpdate], list[str]]:
    async with AcpTestClient.spawn(sys.executable, str(APPS[adapter]), root=root, env=env) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Look around.", session_id=sid)
    assert r.text == "All clear."
    return [u for u in r.updates if isinstance(u, UsageUpdate)], r.kinds


@pytest.mark.parametrize("adapter", sorted(APPS))
async def test_a_known_model_gets_a_meter_with_its_window_and_the_sessions_cost(adapter: str, tmp_path: Path) -> None:
    meters, kinds = await _turn(adapter, tmp_path)
    assert [m.size for m in meters] == [128_000, 128_000]  # gpt-4o's window, known without any option
    assert all(0 < m.used < 128_000 for m in meters)
    first, second = (m.cost for m in meters)
    assert first is not None and second is not None and first.currency == second.currency == "USD"
    assert 0 < first.amount < second.amount  # the session's cost so far, growing with each response
    # the meter moves during the turn: the first one (the tool call's response) before the answer streams
    assert kinds.index("usage_update") < kinds.index("agent_message_chunk")


@pytest.mark.parametrize("adapter", sorted(APPS))
async def test_the_developers_window_is_the_meters_size(adapter: str, tmp_path: Path) -> None:
    meters, _ = await _turn(adapter, tmp_path, METER_WINDOW="64000")
    assert [m.size for m in meters] == [64_000, 64_000]
