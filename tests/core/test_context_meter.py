"""The context meter: `usage_update` during the turn, with the window and the session's cost where known.

And the prompt answer's own `usage`: under `_meta` for a plain v1 client, at the root only for a
client that opted into the unstable `promptUsage` surface.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp.schema import UsageUpdate
from acpkit_core.config import AgentOptions
from acpkit_core.runner import prices
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient, ScriptedRunner

GPT_4O_WINDOW = 128_000  # genai-prices' table, which pydantic-ai uses too
GPT_4O_DOLLARS_PER_TOKEN = (2.5e-6, 10e-6)  # input, output


def meters(updates: list[object]) -> list[UsageUpdate]:
    return [u for u in updates if isinstance(u, UsageUpdate)]


def test_common_models_are_known_and_unknown_ones_are_not() -> None:
    assert prices.context_window("gpt-4o") == GPT_4O_WINDOW
    assert prices.context_window("claude-sonnet-4-5", "anthropic") == 200_000
    assert prices.context_window("gpt-4o", "no-such-provider") == GPT_4O_WINDOW  # the provider is a hint
    assert prices.context_window("acpkit-offline-model") is None and prices.context_window(None) is None
    cost = prices.response_cost("gpt-4o", input_tokens=1000, output_tokens=100)
    assert cost == pytest.approx(1000 * GPT_4O_DOLLARS_PER_TOKEN[0] + 100 * GPT_4O_DOLLARS_PER_TOKEN[1])
    assert prices.response_cost("acpkit-offline-model", input_tokens=10) is None


async def test_the_meter_follows_the_turn_and_the_cost_adds_up_over_the_session(tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite3")
    script = "usage 1000 100 model=gpt-4o\nsay half way\nusage 2000 50 model=gpt-4o\nsay done"
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=store))) as c:
        await c.initialize()
        sid = await c.new_session()
        first = await c.prompt(script, session_id=sid)
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=store))) as c:
        await c.initialize()
        await c.resume_session(sid)
        second = await c.prompt("usage 500 10 model=gpt-4o", session_id=sid)
    one, two = meters(first.updates)
    assert (one.used, one.size, two.used, two.size) == (1100, GPT_4O_WINDOW, 2050, GPT_4O_WINDOW)
    # during the turn, in order: each meter before the text that followed its model response
    assert first.kinds.index("usage_update") < first.kinds.index("agent_message_chunk")
    spent = [1000 * 2.5e-6 + 100 * 10e-6, 2000 * 2.5e-6 + 50 * 10e-6, 500 * 2.5e-6 + 10 * 10e-6]
    assert one.cost is not None and two.cost is not None
    assert (one.cost.currency, one.cost.amount) == ("USD", pytest.approx(spent[0]))
    assert two.cost.amount == pytest.approx(spent[0] + spent[1])
    (three,) = meters(second.updates)  # another process: the session's cost was kept with it
    assert three.cost is not None and three.cost.amount == pytest.approx(sum(spent))


async def test_the_developers_window_wins_over_the_table_and_no_window_means_no_meter() -> None:
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory", context_window=32_000))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        set_by_option = await c.prompt("usage 10 5 model=gpt-4o", session_id=sid)
        unknown = await c.prompt("usage 10 5 model=my-local-model", session_id=sid)
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        nothing_known = await c.prompt("usage 10 5 model=my-local-model", session_id=sid)
    assert [(m.size, m.cost is not None) for m in meters(set_by_option.updates)] == [(32_000, True)]
    assert [(m.size, m.cost) for m in meters(unknown.updates)] == [(32_000, None)]  # no price: no cost
    assert meters(nothing_known.updates) == []  # `size` is required: no window, no meter
    assert nothing_known.usage is not None and nothing_known.usage.input_tokens == 10


@pytest.mark.parametrize("opted_in", [False, True])
async def test_the_prompt_answer_carries_usage_at_its_root_only_when_negotiated(opted_in: bool) -> None:
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))
    async with AcpTestClient.connect(agent, unstable=["promptUsage"] if opted_in else False) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("usage 30 5\nsay hi", session_id=sid)
    (answer,) = [m for d, m in c.wire if d == "received" and "result" in m and "stopReason" in (m["result"] or {})]
    usage = {"inputTokens": 30, "outputTokens": 5, "totalTokens": 35}
    if opted_in:
        assert answer["result"] == {"stopReason": "end_turn", "usage": usage}
    else:
        assert answer["result"] == {"stopReason": "end_turn", "_meta": {"acpkit.usage": usage}}
    assert r.usage is not None and r.usage.total_tokens == 35  # the test client reads either
