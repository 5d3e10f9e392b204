"""Telemetry over a real ACP connection: spans, metrics and log lines, read from the OpenTelemetry SDK's
in-memory exporter and reader (the core server over `ScriptedRunner`; the adapters and the remote
transports have their own tests)."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from acpkit_core.config import AgentOptions
from acpkit_core.errors import UserError
from acpkit_core.server import AcpAgent
from acpkit_core.store import MemoryStore
from acpkit_core.telemetry import ACCESS_LOGGER, JsonFormatter, Telemetry, redact
from acpkit_core.testing import AcpTestClient, ScriptedRunner
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import Histogram, InMemoryMetricReader, Metric, Sum
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanContext, SpanKind, StatusCode

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


class Otel:
    """An SDK tracer and meter provider, with what they recorded."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.telemetry = Telemetry(tracer_provider=self.tracer_provider, meter_provider=self.meter_provider)

    def finished(self, name: str | None = None) -> list[ReadableSpan]:
        return [s for s in self.spans.get_finished_spans() if name is None or s.name == name]

    def metrics(self) -> dict[str, Metric]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return {m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}

    def points(self, name: str) -> list[Any]:
        metric = self.metrics().get(name)
        if metric is None:
            return []
        assert isinstance(metric.data, Sum | Histogram)
        return list(metric.data.data_points)

    def value(self, name: str, **attributes: str) -> float:
        return sum(p.value for p in self.points(name) if all(p.attributes.get(k) == v for k, v in attributes.items()))


@pytest.fixture
def otel() -> Iterator[Otel]:
    recorder = Otel()
    yield recorder
    recorder.tracer_provider.shutdown()
    recorder.meter_provider.shutdown()


def _agent(telemetry: Telemetry | None, store: Any = "memory") -> AcpAgent:
    return AcpAgent(ScriptedRunner(), AgentOptions(name="telemetry-test", store=store, telemetry=telemetry))


def _ctx(span: ReadableSpan) -> SpanContext:
    assert span.context is not None
    return span.context


def _hex(value: int, width: int) -> str:
    return format(value, f"0{width}x")


# --- traces ------------------------------------------------------------------------------------------


async def test_the_turn_span_continues_the_clients_trace_and_carries_the_turn(otel: Otel) -> None:
    async with AcpTestClient.connect(_agent(otel.telemetry)) as client:
        await client.initialize()
        sid = await client.new_session()
        meta = {"traceparent": TRACEPARENT, "tracestate": "editor=zed", "baggage": "tenant=acme"}
        result = await client.prompt("say hello there\nusage 12 7", session_id=sid, meta=meta)
    assert result.stop_reason == "end_turn" and result.text == "hello there"
    (turn,) = otel.finished("session/prompt")
    assert turn.kind is SpanKind.SERVER
    assert _hex(_ctx(turn).trace_id, 32) == TRACE_ID
    assert turn.parent is not None and turn.parent.is_remote and _hex(turn.parent.span_id, 16) == PARENT_ID
    assert _ctx(turn).trace_state.get("editor") == "zed"
    attributes = dict(turn.attributes or {})
    assert attributes["acp.session.id"] == sid
    assert attributes["gen_ai.conversation.id"] == sid
    assert attributes["acp.adapter"] == "acpkit-core"
    assert attributes["acp.agent.name"] == "telemetry-test"
    assert attributes["acp.stop_reason"] == "end_turn"
    assert attributes["acp.transport"] == "stdio"
    assert attributes["gen_ai.usage.input_tokens"] == 12 and attributes["gen_ai.usage.output_tokens"] == 7
    assert attributes["acp.updates"] == len(result.updates)
    assert "acp.principal" not in attributes  # a local connection has no principal
    assert turn.status.status_code is StatusCode.UNSET


async def test_without_a_trace_context_the_turn_starts_a_trace(otel: Otel) -> None:
    async with AcpTestClient.connect(_agent(otel.telemetry)) as client:
        await client.initialize()
        sid = await client.new_session()
        await client.prompt("say one", session_id=sid)
        await client.prompt("say two", session_id=sid, meta={"traceparent": "not a trace context"})
    first, second = otel.finished("session/prompt")
    assert first.parent is None and second.parent is None
    assert _ctx(first).trace_id != _ctx(second).trace_id


async def test_tool_calls_and_permission_questions_are_spans_under_the_turn(otel: Otel) -> None:
    async with AcpTestClient.connect(_agent(otel.telemetry), permission_answers=["allow_once"]) as client:
        await client.initialize()
        sid = await client.new_session()
        script = 'tool read_file ok {"path": "a.txt"}\ntool grep fail\nask delete_file {"path": "b.txt"}'
        result = await client.prompt(script, session_id=sid, meta={"traceparent": TRACEPARENT})
    assert result.stop_reason == "end_turn" and len(result.permission_requests) == 1
    (turn,) = otel.finished("session/prompt")
    tools = {s.name: s for s in otel.finished() if s.name.startswith("tool_call ")}
    assert sorted(tools) == ["tool_call delete_file", "tool_call grep", "tool_call read_file"]
    for span in tools.values():
        assert span.parent is not None and span.parent.span_id == _ctx(turn).span_id
        assert _ctx(span).trace_id == _ctx(turn).trace_id
    read, grep, delete = tools["tool_call read_file"], tools["tool_call grep"], tools["tool_call delete_file"]
    assert read.attributes is not None and read.attributes["acp.tool_call.status"] == "completed"
    assert read.attributes["gen_ai.tool.name"] == "read_file" and read.attributes["acp.tool_call.kind"] == "read"
    assert [e.name for e in read.events] == ["started"]
    assert grep.status.status_code is StatusCode.ERROR
    assert grep.attributes is not None and grep.attributes["acp.tool_call.status"] == "failed"
    (asked,) = otel.finished("session/request_permission")
    assert asked.kind is SpanKind.CLIENT
    assert asked.parent is not None and asked.parent.span_id == _ctx(delete).span_id
    assert asked.attributes is not None
    assert asked.attributes["acp.permission.outcome"] == "selected"
    assert asked.attributes["acp.permission.option_id"] == "allow_once"
    assert asked.attributes["acp.tool_call.id"] == delete.attributes["acp.tool_call.id"]  # pyright: ignore[reportOptionalSubscript]
    assert asked.start_time is not None and delete.start_time is not None and asked.start_time >= delete.start_time


async def test_an_elicitation_is_a_span_saying_how_the_user_answered(otel: Otel) -> None:
    options: dict[str, Any] = {"elicitation": True, "elicitation_answers": ["staging"]}
    async with AcpTestClient.connect(_agent(otel.telemetry), **options) as client:
        await client.initialize()
        sid = await client.new_session()
        question = json.dumps({"text": "Which environment?", "choices": ["staging", "production"]})
        result = await client.prompt(f"question {question}", session_id=sid)
    assert "answer: answered staging" in result.text
    (turn,) = otel.finished("session/prompt")
    (asked,) = otel.finished("elicitation/create")
    (tool,) = otel.finished("tool_call question")
    assert asked.parent is not None and asked.parent.span_id == _ctx(tool).span_id
    assert tool.parent is not None and tool.parent.span_id == _ctx(turn).span_id
    assert asked.attributes is not None and asked.attributes["acp.elicitation.action"] == "accept"


async def test_a_cancelled_question_and_turn(otel: Otel) -> None:
    async with AcpTestClient.connect(_agent(otel.telemetry), permission_answers=["cancel_turn"]) as client:
        await client.initialize()
        sid = await client.new_session()
        result = await client.prompt('ask delete_file {"path": "b.txt"}', session_id=sid)
    assert result.stop_reason == "cancelled"
    (turn,) = otel.finished("session/prompt")
    (asked,) = otel.finished("session/request_permission")
    assert turn.attributes is not None and turn.attributes["acp.stop_reason"] == "cancelled"
    assert asked.attributes is not None and asked.attributes["acp.permission.outcome"] == "cancelled"
    (point,) = [p for p in otel.points("acpkit.turn.duration") if p.attributes["stop_reason"] == "cancelled"]
    assert point.count == 1


async def test_a_failed_turn_is_an_error_span_with_its_code(otel: Otel) -> None:
    async with AcpTestClient.connect(_agent(otel.telemetry)) as client:
        await client.initialize()
        sid = await client.new_session()
        with pytest.raises(Exception, match="The agent failed: RuntimeError: boom"):
            await client.prompt("say partial\nfail boom", session_id=sid)
    (turn,) = otel.finished("session/prompt")
    assert turn.status.status_code is StatusCode.ERROR
    assert turn.attributes is not None and turn.attributes["rpc.jsonrpc.error_code"] == -32603
    assert "acp.stop_reason" not in turn.attributes
    (point,) = otel.points("acpkit.turn.duration")
    assert point.attributes["stop_reason"] == "error" and point.count == 1
    assert otel.value("acpkit.errors", code="-32603") == 1


# --- metrics -----------------------------------------------------------------------------------------


async def test_metrics_of_a_connection_its_sessions_and_turns(otel: Otel) -> None:
    store = MemoryStore()
    async with AcpTestClient.connect(_agent(otel.telemetry, store)) as client:
        await client.initialize()
        sid = await client.new_session()
        assert otel.value("acpkit.connections", transport="stdio") == 1
        assert otel.value("acpkit.sessions.open", transport="stdio") == 1
        assert otel.value("acpkit.turns.running", transport="stdio") == 0
        first = await client.prompt("say a b c\nusage 3 4", session_id=sid)
        running = asyncio.ensure_future(client.prompt("sleep 30", session_id=sid))
        while otel.value("acpkit.turns.running", transport="stdio") != 1:
            await asyncio.sleep(0.01)
        await client.cancel(sid)
        assert (await running).stop_reason == "cancelled"
        assert otel.value("acpkit.turns.running", transport="stdio") == 0
        with pytest.raises(Exception, match="session not found"):
            await client.prompt("say nobody hears this", session_id="no-such-session")
        # a turn lease whose holder died is taken over (and counted) by the next turn
        await store.begin_turn(sid, "a-process-that-died", lease_seconds=0.01)
        await asyncio.sleep(0.05)
        await client.prompt("say again", session_id=sid)
        updates = len(client.updates[sid])
    assert otel.value("acpkit.connections", transport="stdio") == 0
    assert otel.value("acpkit.sessions.open", transport="stdio") == 0
    assert otel.value("acpkit.sent.updates", transport="stdio") == updates
    assert otel.value("acpkit.sent.bytes", transport="stdio") > 0
    assert otel.value("acpkit.errors", transport="stdio", code="-32002") == 1
    assert otel.value("acpkit.lease.takeovers") == 1
    durations = {p.attributes["stop_reason"]: p.count for p in otel.points("acpkit.turn.duration")}
    assert durations == {"end_turn": 2, "cancelled": 1}
    (first_update,) = otel.points("acpkit.turn.first_update")
    # the cancelled turn's one update is the commands update (its `/rewind` hint) sent after it
    assert first_update.count == 3 and first_update.attributes == {"adapter": "acpkit-core", "transport": "stdio"}
    assert otel.value("acpkit.turn.tokens", type="input") == 3 and otel.value("acpkit.turn.tokens", type="output") == 4
    stored = {p.attributes["operation"]: p.count for p in otel.points("acpkit.store.duration")}
    assert stored["create"] == 1 and stored["begin_turn"] == 3 and stored["save"] >= 3
    assert first.stop_reason == "end_turn"


def test_lease_waits_and_refusals_are_recorded_through_the_telemetry(otel: Otel) -> None:
    """The recording API other parts of the server call (quotas, lease waits)."""
    otel.telemetry.record_lease_wait(0.25)
    otel.telemetry.record_refusal("max_sessions_per_principal")
    otel.telemetry.record_refusal("max_sessions_per_principal")
    (wait,) = otel.points("acpkit.lease.wait")
    assert wait.count == 1 and wait.sum == 0.25
    assert otel.value("acpkit.refusals", reason="max_sessions_per_principal") == 2


# --- off ----------------------------------------------------------------------------------------------


async def test_without_telemetry_nothing_is_wrapped_or_counted() -> None:
    agent = _agent(None)
    async with AcpTestClient.connect(agent) as client:
        await client.initialize()
        sid = await client.new_session()
        await client.prompt("tool read_file ok\nsay done", session_id=sid)
        assert agent.turns.connection is None
        live = agent.sessions.open_session(sid)
        assert live is not None and type(agent.sessions.store) is MemoryStore  # not timed


def test_serving_without_telemetry_never_imports_the_opentelemetry_sdk() -> None:
    """(The ACP SDK imports OpenTelemetry's API itself, when it is installed.)"""
    script = textwrap.dedent(
        """
        import asyncio, sys
        from acpkit_core.config import AgentOptions
        from acpkit_core.server import AcpAgent
        from acpkit_core.testing import AcpTestClient, ScriptedRunner

        async def main():
            agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))
            async with AcpTestClient.connect(agent) as client:
                await client.initialize()
                sid = await client.new_session()
                result = await client.prompt("tool read_file ok\\nsay done", session_id=sid)
                assert result.text == "done"
        asyncio.run(main())
        loaded = [m for m in sys.modules if m.startswith(("opentelemetry.sdk", "acpkit_core.telemetry.otel"))]
        print(sorted(loaded))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_traces_without_the_extra_are_refused_with_the_install_command() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["opentelemetry"] = None  # as if the otel extra were not installed
        from acpkit_core.config import AgentOptions
        from acpkit_core.errors import UserError
        from acpkit_core.server import AcpAgent
        from acpkit_core.telemetry import Telemetry
        from acpkit_core.testing import ScriptedRunner
        try:
            AcpAgent(ScriptedRunner(), AgentOptions(store="memory", telemetry=Telemetry()))
        except UserError as exc:
            print(exc)
        agent = AcpAgent(ScriptedRunner(), AgentOptions(telemetry=Telemetry(traces=False, metrics=False)))
        print("log lines alone:", agent.options.telemetry.observer() is not None)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert 'pip install "acpkit-core[otel]"' in out.stdout
    assert "log lines alone: True" in out.stdout


def test_otel_sdk_disabled_turns_traces_and_metrics_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    telemetry = Telemetry(logs=False)
    assert telemetry.observer() is None
    with_logs = Telemetry()
    observer = with_logs.observer()
    assert observer is not None and observer.backend is None


def test_exporters_come_from_the_otel_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from acpkit_core.telemetry.otel import _exporters
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

    monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)
    assert [type(e) for e in _exporters("traces")] == [OTLPSpanExporter]  # the default, over HTTP
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "console,prometheus")
    assert [type(e) for e in _exporters("metrics")] == [ConsoleMetricExporter]  # prometheus: the endpoint
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    assert _exporters("metrics") == []
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    with pytest.raises(UserError, match=r"OTEL_TRACES_EXPORTER=zipkin: no OpenTelemetry traces exporter 'zipkin'"):
        _exporters("traces")


# --- log lines ------------------------------------------------------------------------------------------


async def test_one_log_line_per_turn_and_per_connection(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    telemetry = Telemetry(traces=False, metrics=False)  # log lines need no OpenTelemetry
    async with AcpTestClient.connect(_agent(telemetry)) as client:
        await client.initialize()
        sid = await client.new_session()
        await client.prompt("say hi there\nusage 5 2", session_id=sid)
        with pytest.raises(Exception, match="boom"):
            await client.prompt("fail boom", session_id=sid)
    records = [r for r in caplog.records if r.name == ACCESS_LOGGER]
    events: list[dict[str, Any]] = [r.__dict__["acpkit"] for r in records]
    assert [e["event"] for e in events] == ["turn", "turn", "connection"]
    ok, failed, connection = events
    assert ok["session_id"] == sid and ok["stop_reason"] == "end_turn" and ok["error_code"] is None
    assert ok["updates"] == 4  # the session's title, two chunks, then the commands (`/rewind`'s new hint)
    assert ok["input_tokens"] == 5 and ok["output_tokens"] == 2
    assert ok["first_update_ms"] is not None and ok["first_update_ms"] <= ok["duration_ms"]
    assert ok["transport"] == "stdio" and ok["connection_id"] == connection["connection_id"]
    assert failed["stop_reason"] is None and failed["error_code"] == -32603
    assert connection["turns"] == 2 and connection["closed_by"] == "client" and connection["errors"] == 1
    text = records[0].getMessage()
    assert text.startswith(f"turn session_id={sid} connection_id=") and "stop_reason=end_turn" in text
    line = json.loads(JsonFormatter().format(records[0]))
    assert line["logger"] == ACCESS_LOGGER and line["event"] == "turn" and line["session_id"] == sid
    assert "error_code" not in line  # `None` fields are left out


def test_secrets_are_masked_in_log_lines() -> None:
    assert redact("Authorization: Bearer abc.DEF-123_456") == "Authorization: Bearer [redacted]"
    assert redact("cannot connect to postgresql://acp:hunter2@db:5432/acp") == (
        "cannot connect to postgresql://acp:[redacted]@db:5432/acp"
    )
    assert (
        redact('token=s3cr3t api_key: "k-123" password=pw')
        == 'token=[redacted] api_key: "[redacted]" password=[redacted]'
    )
    assert redact("input_tokens=10 output_tokens=5") == "input_tokens=10 output_tokens=5"
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed for %s", ("Bearer tok-123",), None)
    assert "tok-123" not in JsonFormatter().format(record)


async def test_client_files_and_terminals_work_in_a_traced_turn(otel: Otel) -> None:
    """The turn's client connection is wrapped for the questions' spans; everything else passes through."""
    async with AcpTestClient.connect(_agent(otel.telemetry)) as client:
        await client.initialize()
        sid = await client.new_session()
        (client.root / "notes.txt").write_text("from the editor")
        result = await client.prompt(f"read {client.root / 'notes.txt'}\nrun echo traced", session_id=sid)
    assert result.text == "from the editorexit 0: traced"
    assert [m for m, _ in client.requests][:1] == ["fs/read_text_file"]
