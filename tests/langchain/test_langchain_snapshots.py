"""`AcpSessionMiddleware` snapshots: `all` is every step; snapshots go to a callback and, as `_meta`, to the client."""

from __future__ import annotations

from typing import Any

import pytest
from acp.schema import SessionInfoUpdate
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import SNAPSHOT_META_KEY, AcpSessionMiddleware, bind_connection
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from lc_helpers import Call, FakeChatModel, Reply, agent_for, delete_file

pytestmark = pytest.mark.timeout(30)


def _script() -> list[Any]:
    return [Reply(text="Deleting.", calls=[Call("delete_file", {"path": "a.txt"}, "d1")]), Reply(text="Done.")]


def _snapshots(updates: list[Any]) -> list[dict[str, Any]]:
    return [
        u.field_meta[SNAPSHOT_META_KEY]
        for u in updates
        if isinstance(u, SessionInfoUpdate) and u.field_meta and SNAPSHOT_META_KEY in u.field_meta
    ]


def _last_message(state: dict[str, Any]) -> tuple[str, Any]:
    last = state["messages"][-1]
    return last["type"], last["data"]["content"]


async def test_all_means_every_step_to_the_callback_and_the_client() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    session = AcpSessionMiddleware(
        snapshots="all", on_snapshot=lambda label, state: seen.append((label, state)), send_snapshots=True
    )
    agent, _ = agent_for(_script(), [delete_file], middleware=[session])
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("clean up", session_id=sid)
    assert r.text == "Deleting.Done."
    labels = ["initial", "model", "tools", "model", "final"]
    assert [label for label, _ in seen] == labels
    assert [_last_message(state) for _, state in seen] == [
        ("human", "clean up"),
        ("ai", "Deleting."),
        ("tool", "deleted a.txt"),
        ("ai", "Done."),
        ("ai", "Done."),
    ]
    sent = _snapshots(r.updates)
    assert [(s["label"], s["step"], s["threadId"]) for s in sent] == [(lb, n, sid) for n, lb in enumerate(labels, 1)]
    assert [s["state"] for s in sent] == [state for _, state in seen]
    # the snapshot updates arrive in the turn's order: the tools snapshot after the call completed
    order: list[str] = []
    for u in r.updates:
        if isinstance(u, SessionInfoUpdate) and u.field_meta:
            order.append(u.field_meta[SNAPSHOT_META_KEY]["label"])
        elif getattr(u, "tool_call_id", None) == "d1" and getattr(u, "status", None) == "completed":
            order.append("d1 completed")
    assert order == ["initial", "model", "d1 completed", "tools", "model", "final"]


@pytest.mark.parametrize("mode", ["initial", "final"])
async def test_initial_or_final_only_and_not_sent_unless_asked(mode: str) -> None:
    seen: list[str] = []
    session = AcpSessionMiddleware(snapshots=mode, on_snapshot=lambda label, _: seen.append(label))  # type: ignore[arg-type]
    agent, _ = agent_for(_script(), [delete_file], middleware=[session])
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("clean up", session_id=sid)
    assert seen == [mode]
    assert _snapshots(r.updates) == []


class Recorder:
    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))


async def test_hand_built_server_sends_snapshots_over_its_connection() -> None:
    graph = create_agent(
        FakeChatModel(script=_script()),
        tools=[delete_file],
        middleware=[AcpSessionMiddleware(snapshots="all", send_snapshots=True)],
        checkpointer=InMemorySaver(),
    )
    conn = Recorder()
    async with bind_connection(conn, "s1"):
        await graph.ainvoke({"messages": [HumanMessage(content="go")]}, {"configurable": {"thread_id": "t1"}})
    sent = _snapshots([u for sid, u in conn.updates if sid == "s1"])
    assert [(s["label"], s["step"], s["threadId"]) for s in sent] == [
        ("initial", 1, "t1"),
        ("model", 2, "t1"),
        ("tools", 3, "t1"),
        ("model", 4, "t1"),
        ("final", 5, "t1"),
    ]
    assert sent[-1]["state"]["acp_thread_id"] == "t1"
