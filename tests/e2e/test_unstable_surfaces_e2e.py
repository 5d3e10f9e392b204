"""Notices, compaction updates and tool-call names over real stdio, both adapters: an opted-in client
sees the unstable forms, a plain client the stable ones; every message follows its schema.

Each agent (`pyd_unstable_app.py`, `lc_unstable_app.py`) gets a session with an MCP server that cannot
start, then three turns: a plan and a tool call, a turn whose history the framework compacts
(pydantic-ai's `ProcessHistory`, LangChain's `SummarizationMiddleware`) and whose plan changes, and
a turn stopped by `max_turn_requests`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AgentMessageChunk, AgentPlanContentUpdate, AgentPlanUpdate
from acp_schema import StrictSchema
from acpkit_core.client.unstable_updates import CompactionSummaryChunk, CompactionUpdate
from acpkit_core.runner.stop import request_limit_message
from acpkit_core.runner.types import StdioMcpServer
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

TESTS = Path(__file__).resolve().parents[1]
APPS = {
    "pydantic": TESTS / "pydantic" / "pyd_unstable_app.py",
    "langchain": TESTS / "langchain" / "lc_unstable_app.py",
}
LIMITS = {"pydantic": 2, "langchain": 4}
"""Each app's `max_turn_requests`."""
SUMMARY = "The user said hello; the agent looked around and found nothing."
BROKEN = StdioMcpServer(name="broken", command=sys.executable, args=("-c", "raise SystemExit(3)"))
UNSTABLE_KINDS = {"notice", "compaction_update", "compaction_summary_chunk", "plan_update", "plan_removed"}


def _wire_updates(c: AcpTestClient) -> list[dict[str, Any]]:
    return [m["params"]["update"] for d, m in c.wire if d == "received" and m.get("method") == "session/update"]


async def _run(app: str, *, opted_in: bool) -> tuple[AcpTestClient, list[Any]]:
    """The three turns, then `session/load` of the session (its replayed updates last in the list)."""
    async with AcpTestClient.spawn(sys.executable, str(APPS[app]), unstable=opted_in) as c:
        await c.initialize()
        sid = await c.new_session(mcp_servers=[BROKEN])
        results: list[Any] = [await c.prompt(p, session_id=sid) for p in ("hello", "again", "look twice")]
        _, replayed = await c.load_session(sid)
    return c, [*results, replayed]


@pytest.mark.parametrize("app", sorted(APPS))
async def test_an_opted_in_client_sees_notices_compactions_and_tool_names(app: str) -> None:
    c, (first, second, third, replayed) = await _run(app, opted_in=True)
    assert StrictSchema("schema.unstable.json").check(list(c.wire))[0] == []
    [mcp] = first.notices
    assert (mcp.severity, mcp.title) == ("warning", "MCP server unavailable")
    assert mcp.description is not None and mcp.description.startswith("MCP server `broken` did not start: ")
    calls = list(first.tool_calls.values())
    assert ("look", "completed") in [(t.name, t.status) for t in calls] and all(t.name for t in calls)
    plans = [u for r in (first, second) for u in r.updates if isinstance(u, AgentPlanContentUpdate)]
    assert {u.plan.plan_id for u in plans} == {"main"} and plans[0].plan.type == "items"
    assert next(e.status for e in plans[-1].plan.entries) == "completed"  # type: ignore[union-attr]
    assert first.text == "All clear."  # nothing of the notice in the answer
    compactions = [u for u in second.updates if isinstance(u, CompactionUpdate)]
    by_id: dict[str, list[CompactionUpdate]] = {}
    for u in compactions:
        by_id.setdefault(u.compaction_id, []).append(u)
    assert by_id  # the framework compacted at least once (LangChain's middleware may again, before each model call)
    for updates in by_id.values():
        assert updates[-1].status == "completed"
        assert [b.text for b in updates[-1].summary or []] == [SUMMARY]  # type: ignore[union-attr]
        if app == "langchain":  # the summarization's model call starts it; its text is not the answer
            assert [u.status for u in updates] == ["in_progress", "completed"]
    if app == "langchain":  # ... and streams as the summary, between the two
        kinds = [type(u).__name__ for u in second.updates if isinstance(u, CompactionUpdate | CompactionSummaryChunk)]
        assert kinds[:4] == ["CompactionUpdate", "CompactionSummaryChunk", "CompactionSummaryChunk", "CompactionUpdate"]
        chunks = [u for u in second.updates if isinstance(u, CompactionSummaryChunk)]
        assert "".join(u.content.text for u in chunks[:2]) == SUMMARY  # type: ignore[union-attr]
    # session/load replays each compaction once, in its place and final state, before "Still clear."
    live: dict[str, CompactionUpdate] = {}  # each compaction of every turn, in its last state
    for u in (*second.updates, *third.updates):
        if isinstance(u, CompactionUpdate):
            live[u.compaction_id] = u
    again = [u for u in replayed if isinstance(u, CompactionUpdate)]
    assert [(u.compaction_id, u.status, u.summary) for u in again] == [
        (u.compaction_id, u.status, u.summary) for u in live.values()
    ]
    assert set(by_id) <= set(live)
    assert not any(isinstance(u, CompactionSummaryChunk) for u in replayed)
    texts = [u.content.text for u in replayed if isinstance(u, AgentMessageChunk)]  # type: ignore[union-attr]
    first_compaction = replayed.index(again[0])
    assert "Still clear." in texts and replayed.index(
        next(u for u in replayed if isinstance(u, AgentMessageChunk) and u.content.text == "Still clear.")  # type: ignore[union-attr]
    ) > first_compaction > replayed.index(
        next(u for u in replayed if isinstance(u, AgentMessageChunk) and u.content.text == "All clear.")  # type: ignore[union-attr]
    )
    assert second.text == "Still clear." and second.notices == []
    assert third.stop_reason == "max_turn_requests"
    [limit] = third.notices
    assert (limit.severity, limit.title, limit.description) == (
        "warning",
        "Turn limit reached",
        request_limit_message(LIMITS[app]),
    )
    assert request_limit_message(LIMITS[app]) not in third.text


@pytest.mark.parametrize("app", sorted(APPS))
async def test_a_plain_client_reads_them_as_messages_and_never_gets_an_unstable_field(app: str) -> None:
    c, (first, second, third, replayed) = await _run(app, opted_in=False)
    assert StrictSchema("schema.json").check(list(c.wire))[0] == []
    updates = _wire_updates(c)
    assert {u["sessionUpdate"] for u in updates}.isdisjoint(UNSTABLE_KINDS)
    assert all("name" not in u for u in updates if u["sessionUpdate"] in ("tool_call", "tool_call_update"))

    def notes(result: Any) -> list[tuple[str, str]]:
        chunks = [u for u in result.updates if isinstance(u, AgentMessageChunk) and u.field_meta]
        return [((u.field_meta or {})["acpkit"]["notice"]["title"], u.content.text) for u in chunks]

    plans = [u for r in (first, second) for u in r.updates if isinstance(u, AgentPlanUpdate)]
    assert plans and plans[-1].entries[0].status == "completed"
    [(title, text)] = notes(first)
    assert title == "MCP server unavailable" and "broken" in text  # each adapter's own wording of the failure
    assert text.endswith("Its tools are not available in this session.")
    assert first.text.endswith("All clear.")
    compacted = notes(second)
    assert compacted and all(
        title == "Context compacted" and "summarized to fit the model's context" in text for title, text in compacted
    )
    assert third.stop_reason == "max_turn_requests"
    assert [n for n in notes(third) if n[0] != "Context compacted"] == [
        ("Turn limit reached", request_limit_message(LIMITS[app]))
    ]
    assert third.text.endswith(request_limit_message(LIMITS[app]))
    assert replayed and not any(isinstance(u, dict) for u in replayed)  # the replay: stable kinds only (above)
