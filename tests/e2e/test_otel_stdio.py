"""`acpkit run --otel` over real stdio: spans reach an OTLP collector, configured by the OTEL_* variables alone.

The collector is a small OTLP/HTTP receiver in this process (`tests/otlp_receiver.py`). The agent is a
pydantic-ai agent with its own instrumentation on: its spans nest under ACP Kit's turn span, which
continues the editor's trace from `_meta.traceparent`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acpkit_core.testing import AcpTestClient
from otlp_receiver import OtlpReceiver

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

AGENT = Path(__file__).parent / "agents" / "otel_pydantic_agent.py"
TRACE_ID = "2a1ee2b6e07a0c42e67d3b3b2b4a0e7f"
TRACEPARENT = f"00-{TRACE_ID}-61ec1c0c66b1f1e1-01"
SERVER_KIND = 2  # OTLP's SPAN_KIND_SERVER


async def test_spans_of_a_stdio_agent_reach_the_collector_nested_in_the_editors_trace() -> None:
    with OtlpReceiver() as receiver:
        command = [sys.executable, "-m", "acpkit_core.cli", "run", f"{AGENT}:agent", "--otel", "--store", "memory"]
        async with AcpTestClient.spawn(*command, env=receiver.env("finder-agent")) as client:
            await client.initialize()
            sid = await client.new_session()
            result = await client.prompt("find it", session_id=sid, meta={"traceparent": TRACEPARENT})
            assert result.stop_reason == "end_turn" and result.text == "found it"
        (turn,) = receiver.wait_for("session/prompt")
        run = receiver.wait_for("invoke_agent finder")[0]
        tools = receiver.wait_for("execute_tool lookup")
        ours = receiver.wait_for("tool_call lookup")
    assert turn.trace_id == TRACE_ID and turn.parent_id == TRACEPARENT.split("-")[2]
    assert turn.kind == SERVER_KIND and turn.service == "finder-agent" and turn.scope == "acpkit_core"
    assert turn.attributes["acp.session.id"] == sid and turn.attributes["acp.adapter"] == "pydantic-acp"
    assert turn.attributes["acp.stop_reason"] == "end_turn" and turn.attributes["acp.transport"] == "stdio"
    assert run.parent_id == turn.span_id and run.trace_id == TRACE_ID and run.scope == "pydantic-ai"
    assert all(span.trace_id == TRACE_ID for span in [*tools, *ours])
    assert ours[0].parent_id == turn.span_id
