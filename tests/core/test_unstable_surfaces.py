"""Notices, compaction updates, tool-call names and plan operations: the unstable form where the client
negotiated it, the stable form (or fallback) for a plain client; every message checked against the schema."""

from __future__ import annotations

from typing import Any

import pytest
from acp.schema import AgentMessageChunk, AgentPlanContentUpdate, AgentPlanRemovedUpdate, AgentPlanUpdate
from acp_schema import StrictSchema
from acpkit_core.client.unstable_updates import CompactionUpdate, NoticeUpdate
from acpkit_core.config import AgentOptions
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient, ScriptedRunner

SCRIPT = (
    "notice warning MCP server unavailable | Continuing without it.\n"
    'tool read_file ok {"path": "a.txt"}\n'
    "plan first | second\n"
    "showplan design md ## Steps\\n- one\n"
    "showplan files file file:///tmp/plan.md\n"
    "dropplan files\n"
    "compact The user wants a summary.\n"
    "clearplan\n"
    "say done"
)


def _agent() -> AcpAgent:
    return AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))


def _updates(c: AcpTestClient) -> list[dict[str, Any]]:
    return [m["params"]["update"] for d, m in c.wire if d == "received" and m.get("method") == "session/update"]


async def test_an_opted_in_client_gets_every_unstable_form() -> None:
    surfaces = ["sessionNotices", "sessionCompaction", "toolCallName", "planOperations"]
    async with AcpTestClient.connect(_agent(), unstable=surfaces) as c:
        init = await c.initialize()
        sid = await c.new_session()
        r = await c.prompt(SCRIPT, session_id=sid)
        assert init.agent_capabilities is not None and init.agent_capabilities.field_meta is not None
        assert init.agent_capabilities.field_meta["acpkit.unstable"] == {s: {} for s in sorted(surfaces)}
        wire = list(c.wire)
    assert r.notices == [
        NoticeUpdate(severity="warning", title="MCP server unavailable", description="Continuing without it.")
    ]
    assert [t.name for t in r.tool_calls.values()] == ["read_file"]
    ops = [u for u in r.updates if isinstance(u, AgentPlanContentUpdate | AgentPlanRemovedUpdate | AgentPlanUpdate)]
    shown = [
        (type(u).__name__, u.model_dump(mode="json", by_alias=True, exclude_none=True).get("plan", {}).get("planId"))
        for u in ops
    ]
    assert shown == [
        ("AgentPlanContentUpdate", "main"),
        ("AgentPlanContentUpdate", "design"),
        ("AgentPlanContentUpdate", "files"),
        ("AgentPlanRemovedUpdate", None),
        ("AgentPlanRemovedUpdate", None),
    ]
    assert [u.plan_id for u in ops if isinstance(u, AgentPlanRemovedUpdate)] == ["files", "main"]
    design = ops[1]
    assert isinstance(design, AgentPlanContentUpdate)
    assert design.plan.model_dump(by_alias=True, exclude_none=True) == {
        "type": "markdown",
        "planId": "design",
        "content": "## Steps\n- one",
    }
    compactions = [u for u in r.updates if isinstance(u, CompactionUpdate)]
    assert [(u.status, u.summary) for u in compactions] == [
        ("in_progress", None),
        ("completed", compactions[1].summary),
    ]
    assert compactions[0].compaction_id == compactions[1].compaction_id
    assert compactions[1].summary is not None and compactions[1].summary[0].text == "The user wants a summary."  # type: ignore[union-attr]
    assert r.text == "done"  # the notice and the compaction are not in the answer
    assert StrictSchema("schema.unstable.json").check(wire)[0] == []
    assert StrictSchema("schema.json").check(wire)[0] != []  # the stable schema has none of them


async def test_a_plain_client_gets_the_stable_forms() -> None:
    async with AcpTestClient.connect(_agent()) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt(SCRIPT, session_id=sid)
        wire = list(c.wire)
        kinds = {u["sessionUpdate"] for u in _updates(c)}
    assert StrictSchema("schema.json").check(wire)[0] == []
    assert kinds.isdisjoint({"notice", "compaction_update", "plan_update", "plan_removed"})
    call = next(u for u in _updates(c) if u["sessionUpdate"] == "tool_call")
    assert "name" not in call
    messages = [u for u in r.updates if isinstance(u, AgentMessageChunk)]
    notes = [u.field_meta["acpkit"]["notice"] for u in messages if u.field_meta]
    assert notes == [
        {"severity": "warning", "title": "MCP server unavailable", "description": "Continuing without it."},
        {
            "severity": "info",
            "title": "Context compacted",
            "description": "2 earlier messages were summarized to fit the model's context.",
        },
    ]
    plans = [[e.content for e in u.entries] for u in r.updates if isinstance(u, AgentPlanUpdate)]
    assert plans == [
        ["first", "second"],
        ["first", "second", "## Steps\n- one"],
        ["first", "second", "## Steps\n- one", "Plan: file:///tmp/plan.md"],
        ["first", "second", "## Steps\n- one"],
        ["## Steps\n- one"],
    ]


async def test_other_plans_survive_a_reload_and_replay_in_the_stable_form() -> None:
    agent = _agent()
    async with AcpTestClient.connect(agent, unstable=["planOperations"]) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("showplan design a | b", session_id=sid)
        _, replayed = await c.load_session(sid)
        r = await c.prompt("plan x", session_id=sid)
    assert [[e.content for e in u.entries] for u in replayed if isinstance(u, AgentPlanUpdate)] == [["a", "b"]]
    main = [u for u in r.updates if isinstance(u, AgentPlanContentUpdate)]
    assert [u.plan.plan_id for u in main] == ["main"]


async def test_the_native_capabilities_negotiate_plan_operations_and_compaction() -> None:
    async with AcpTestClient.connect(_agent()) as c:
        answer = await c._raw(  # pyright: ignore[reportPrivateUsage]
            "initialize",
            {"protocolVersion": 1, "clientCapabilities": {"plan": {}, "session": {"compaction": {}}}},
        )
        sid = await c.new_session()
        r = await c.prompt("plan a\ncompact", session_id=sid)
    assert answer["agentCapabilities"]["_meta"]["acpkit.unstable"] == {"planOperations": {}, "sessionCompaction": {}}
    kinds = [
        u.session_update
        for u in r.updates
        if u.session_update not in ("session_info_update", "available_commands_update")
    ]
    assert kinds == ["plan_update", "compaction_update", "compaction_update"]


@pytest.mark.parametrize("bad", ["x", 1, []])
async def test_a_malformed_compaction_capability_is_not_advertised_support(bad: object) -> None:
    async with AcpTestClient.connect(_agent()) as c:
        answer = await c._raw(  # pyright: ignore[reportPrivateUsage]
            "initialize", {"protocolVersion": 1, "clientCapabilities": {"session": {"compaction": bad}}}
        )
    assert "_meta" not in answer["agentCapabilities"] or "acpkit.unstable" not in answer["agentCapabilities"]["_meta"]


def test_a_compaction_replays_once_in_its_place_and_final_state() -> None:
    """The transcript keeps every compaction update and summary chunk; the replay folds them as the
    RFD says a client applies them: chunks append, a concrete summary replaces, `[]` clears."""
    from acpkit_core.server.sessions import replay_json

    def text(t: str, mid: str = "m1") -> dict[str, Any]:
        return {"sessionUpdate": "agent_message_chunk", "messageId": mid, "content": {"type": "text", "text": t}}

    def chunk(cid: str, t: str) -> dict[str, Any]:
        return {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": cid,
            "content": {"type": "text", "text": t},
        }

    def upd(cid: str, status: str, **more: Any) -> dict[str, Any]:
        return {"sessionUpdate": "compaction_update", "compactionId": cid, "status": status, **more}

    transcript = [
        text("before"),
        upd("a", "in_progress"),
        chunk("a", "first try"),
        upd("a", "in_progress", summary=[]),  # a retry: cleared
        chunk("a", "kept "),
        chunk("a", "this"),
        text("between", "m2"),
        upd("a", "completed"),  # no summary: what the chunks built stays
        upd("b", "in_progress"),
        chunk("b", "lost"),  # the process died here: never finished
        text("after", "m3"),
    ]
    replayed = replay_json(transcript, compaction=True)
    assert replayed == [
        text("before"),
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "a",
            "status": "completed",
            "summary": [{"type": "text", "text": "kept "}, {"type": "text", "text": "this"}],
        },
        text("between", "m2"),
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "b",
            "status": "failed",
            "error": "The turn stopped before the compaction finished.",
        },
        text("after", "m3"),
    ]
    assert (
        StrictSchema("schema.unstable.json").check(
            [
                ("received", {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": u}})
                for u in replayed
            ]
        )[0]
        == []
    )
    replaced = replay_json(
        [
            upd("c", "in_progress"),
            chunk("c", "draft"),
            upd("c", "completed", summary=[{"type": "text", "text": "final"}]),
        ],
        compaction=True,
    )
    assert replaced == [upd("c", "completed", summary=[{"type": "text", "text": "final"}])]
    # a client that did not negotiate compaction gets none of it
    assert replay_json(transcript) == [text("before"), text("between", "m2"), text("after", "m3")]
