"""pydantic-ai's own instrumentation (the `Instrumentation` capability) nests under ACP Kit's turn span."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from acpkit_core.telemetry import Telemetry
from acpkit_core.testing import AcpTestClient
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent
from pydantic_ai.capabilities.instrumentation import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.test import TestModel

TRACE_ID = "5b8efff798038103d269b633813fc60c"
TRACEPARENT = f"00-{TRACE_ID}-eee19b7ec3c1b174-01"


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


async def test_pydantic_ai_spans_are_children_of_the_turn_span(
    providers: tuple[TracerProvider, InMemorySpanExporter, MeterProvider],
) -> None:
    tracer_provider, exporter, meter_provider = providers
    agent = Agent(
        TestModel(call_tools=["lookup"], custom_output_text="found it"),
        name="finder",
        capabilities=[Instrumentation(settings=InstrumentationSettings(tracer_provider=tracer_provider))],
    )

    @agent.tool_plain
    def lookup(query: str) -> str:
        """Look something up."""
        return f"result for {query}"

    telemetry = Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider)
    acp_agent = create_acp_agent(agent, store="memory", telemetry=telemetry)
    async with AcpTestClient.connect(acp_agent) as client:
        await client.initialize()
        sid = await client.new_session()
        result = await client.prompt("find it", session_id=sid, meta={"traceparent": TRACEPARENT})
    assert result.stop_reason == "end_turn" and result.text == "found it"

    finished = exporter.get_finished_spans()
    (turn,) = [s for s in finished if s.name == "session/prompt"]
    assert turn.context is not None and format(turn.context.trace_id, "032x") == TRACE_ID
    assert turn.attributes is not None and turn.attributes["acp.adapter"] == "pydantic-acp"
    ours = {s.name for s in finished if s.instrumentation_scope and s.instrumentation_scope.name == "acpkit_core"}
    assert ours == {"session/prompt", "tool_call lookup"}
    theirs = [s for s in finished if s.instrumentation_scope and s.instrumentation_scope.name == "pydantic-ai"]
    assert theirs, [s.name for s in finished]
    by_id = {_span_id(s): s for s in theirs}
    roots = [s for s in theirs if s.parent is None or s.parent.span_id not in by_id]
    (run,) = roots  # one agent run per turn
    assert run.name == "invoke_agent finder"
    assert run.parent is not None and run.parent.span_id == _span_id(turn)
    assert all(s.context is not None and s.context.trace_id == turn.context.trace_id for s in theirs)
    assert any(s.name == "execute_tool lookup" for s in theirs)
    assert any(s.name.startswith("chat ") for s in theirs)
    # the turn's token usage is pydantic-ai's for the run
    assert run.attributes is not None
    assert turn.attributes["gen_ai.usage.input_tokens"] == run.attributes["gen_ai.aggregated_usage.input_tokens"]
    assert turn.attributes["gen_ai.usage.output_tokens"] == run.attributes["gen_ai.aggregated_usage.output_tokens"]
