"""LangChain's own tracing (LangSmith's OpenTelemetry mode) nests the graph's runs under ACP Kit's turn span.

This is how a LangChain application traces itself: a `LangChainTracer` whose LangSmith client runs
in `otel` mode turns every run (the graph, its nodes, the model, the tools) into an OpenTelemetry
span, the first one a child of the span that is current when the graph starts: the turn's. With
`LANGSMITH_TRACING=true LANGSMITH_TRACING_MODE=otel` LangChain adds that tracer by itself (the
end-to-end test over `acpkit serve` does it that way).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from acpkit_core.telemetry import Telemetry
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import create_acp_agent
from langchain_core.tracers.langchain import LangChainTracer
from langsmith import Client
from lc_helpers import FakeChatModel, Reply, call, read_file
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

TRACE_ID = "8a3c60f7d188f8fa79d48a391a778fa6"
TRACEPARENT = f"00-{TRACE_ID}-53995c3f42cd8ad8-01"


@pytest.fixture
def providers() -> Iterator[tuple[TracerProvider, InMemorySpanExporter, MeterProvider]]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    yield tracer_provider, exporter, meter_provider
    tracer_provider.shutdown()
    meter_provider.shutdown()


def _span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


async def test_langchain_runs_are_spans_under_the_turn_span(
    providers: tuple[TracerProvider, InMemorySpanExporter, MeterProvider],
) -> None:
    tracer_provider, exporter, meter_provider = providers
    provider: Any = tracer_provider  # langsmith types it with a stand-in class of its own
    langsmith = Client(tracing_mode="otel", otel_tracer_provider=provider, api_key="unused-in-otel-mode")
    script = [Reply(calls=[call("read_file", {"path": "notes.txt"}, "call-1")]), Reply(text="The notes say hi.")]
    graph = create_agent(FakeChatModel(script=script), tools=[read_file])
    traced = graph.with_config({"callbacks": [LangChainTracer(client=langsmith)]})  # still a compiled graph
    telemetry = Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider)
    agent = create_acp_agent(traced, store="memory", telemetry=telemetry)
    async with AcpTestClient.connect(agent) as client:
        (client.root / "notes.txt").write_text("hi")
        await client.initialize()
        sid = await client.new_session()
        result = await client.prompt("what do my notes say?", session_id=sid, meta={"traceparent": TRACEPARENT})
    langsmith.flush()
    assert result.stop_reason == "end_turn" and result.text == "The notes say hi."

    finished = exporter.get_finished_spans()
    (turn,) = [s for s in finished if s.name == "session/prompt"]
    assert turn.context is not None and format(turn.context.trace_id, "032x") == TRACE_ID
    assert turn.attributes is not None and turn.attributes["acp.adapter"] == "langchain-acp"
    (tool,) = [s for s in finished if s.name == "tool_call read_file"]
    assert tool.parent is not None and tool.parent.span_id == _span_id(turn)
    runs = [s for s in finished if s.instrumentation_scope and s.instrumentation_scope.name.startswith("langsmith")]
    by_id = {_span_id(s): s for s in runs}
    (graph,) = [s for s in runs if s.parent is None or s.parent.span_id not in by_id]
    assert graph.name == "LangGraph"
    assert graph.parent is not None and graph.parent.span_id == _span_id(turn)
    names = {s.name for s in runs}
    assert {"model", "tools", "read_file"} <= names, names
    assert all(s.context is not None and s.context.trace_id == turn.context.trace_id for s in runs)
