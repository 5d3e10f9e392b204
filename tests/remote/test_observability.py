"""Telemetry of `acpkit serve`: spans over both profiles (in this process, the SDK's in-memory exporter), and a
real `acpkit serve --otel` process scraped on `/metrics` over HTTP, with its JSON log lines checked for
what they say and for any token."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from acp import RequestError
from acpkit_core.config import AgentOptions
from acpkit_core.remote import RemoteServer, ServeOptions, Tokens
from acpkit_core.server import AcpAgent
from acpkit_core.store import SqliteStore
from acpkit_core.telemetry import Telemetry
from acpkit_core.testing import AcpTestClient, ScriptedRunner
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from replicas import TARGET, Replica, replica
from websockets.exceptions import InvalidStatus

TOKEN = "alice-token-0123456789abcdef"
WRONG = "mallory-token-0123456789abcdef"
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
TRACEPARENT = f"00-{TRACE_ID}-b7ad6b7169203331-01"


def _auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# --- spans, in this process --------------------------------------------------------------------------


@pytest.fixture
def spans() -> Iterator[tuple[InMemorySpanExporter, Telemetry]]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    yield exporter, Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider)
    tracer_provider.shutdown()
    meter_provider.shutdown()


@pytest.fixture
async def traced_server(tmp_path: Path, spans: tuple[InMemorySpanExporter, Telemetry]) -> AsyncGenerator[RemoteServer]:
    agent = AcpAgent(
        ScriptedRunner(), AgentOptions(store=SqliteStore(tmp_path / "sessions.sqlite3"), telemetry=spans[1])
    )
    options = ServeOptions(port=0, tokens=Tokens.parse(f"alice:{TOKEN}", source="test"))
    async with RemoteServer(agent, options) as server:
        yield server


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_turn_spans_over_both_profiles_carry_the_principal_and_the_clients_trace(
    traced_server: RemoteServer, spans: tuple[InMemorySpanExporter, Telemetry], scheme: str
) -> None:
    url = traced_server.url if scheme == "ws" else traced_server.url.replace("ws://", "http://")
    async with AcpTestClient.connect_url(url, token=TOKEN, permission_answers=["allow_once"]) as client:
        await client.initialize()
        sid = await client.new_session()
        script = 'say over the wire\nask delete_file {"path": "x"}'
        result = await client.prompt(script, session_id=sid, meta={"traceparent": TRACEPARENT})
    assert result.stop_reason == "end_turn"
    exporter = spans[0]
    (turn,) = [s for s in exporter.get_finished_spans() if s.name == "session/prompt"]
    assert turn.context is not None and format(turn.context.trace_id, "032x") == TRACE_ID
    attributes = dict(turn.attributes or {})
    assert attributes["acp.principal"] == "alice"
    assert attributes["acp.transport"] == ("websocket" if scheme == "ws" else "http")
    assert len(str(attributes["acp.connection.id"])) == 32
    (asked,) = [s for s in exporter.get_finished_spans() if s.name == "session/request_permission"]
    assert asked.context is not None and asked.context.trace_id == turn.context.trace_id
    assert asked.attributes is not None and asked.attributes["acp.permission.outcome"] == "selected"


async def test_metrics_given_to_another_meter_provider_are_not_served_here(traced_server: RemoteServer) -> None:
    base = traced_server.url.replace("ws://", "http://").removesuffix("/acp")
    async with httpx.AsyncClient() as http:
        answer = await http.get(f"{base}/metrics", headers=_auth())
    assert answer.status_code == 404


async def test_without_telemetry_there_is_no_metrics_endpoint(tmp_path: Path) -> None:
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store=SqliteStore(tmp_path / "s.sqlite3")))
    async with RemoteServer(agent, ServeOptions(port=0)) as server:
        base = server.url.replace("ws://", "http://").removesuffix("/acp")
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{base}/metrics")).status_code == 404
    with pytest.raises(Exception, match="metrics_public needs metrics"):
        RemoteServer(agent, ServeOptions(port=0, metrics_public=True))


# --- a real `acpkit serve --otel`, scraped -----------------------------------------------------------

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a Prometheus text page, by name and labels."""
    out: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        assert match is not None, f"not a Prometheus sample line: {line!r}"
        labels = frozenset(_LABEL.findall(match.group(2) or ""))
        out[(match.group(1), labels)] = float(match.group(3))
    return out


def sample(page: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return page[(name, frozenset(labels.items()))]


async def _scrape(replica_: Replica, headers: dict[str, str] | None = None, path: str = "/metrics") -> httpx.Response:
    base = replica_.http_url.removesuffix("/acp")
    async with httpx.AsyncClient() as http:
        return await http.get(base + path, headers=headers or {})


async def _ws_turn(url: str) -> tuple[int, int, dict[str, Any]]:
    """initialize, a refused session/new, session/new, one prompt over a raw WebSocket: (bytes, updates, answer)."""
    received: list[str] = []
    async with websockets.connect(url, additional_headers=_auth()) as ws:

        async def call(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
            while True:
                frame = await ws.recv()
                assert isinstance(frame, str)
                received.append(frame)
                message = json.loads(frame)
                if message.get("id") == request_id:
                    return message

        await call(1, "initialize", {"protocolVersion": 1})
        refused = await call(2, "session/new", {"mcpServers": []})  # no cwd: -32602
        assert refused["error"]["code"] == -32602
        created = await call(3, "session/new", {"cwd": str(Path.cwd()), "mcpServers": []})
        sid = created["result"]["sessionId"]
        prompt = {
            "sessionId": sid,
            "prompt": [{"type": "text", "text": "say a b c\nusage 3 4"}],
            "_meta": {"traceparent": TRACEPARENT},
        }
        answer = await call(4, "session/prompt", prompt)
    sent = sum(len(f.encode()) for f in received)
    updates = sum(1 for f in received if json.loads(f).get("method") == "session/update")
    return sent, updates, answer


async def _until_closed(replica_: Replica) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    for _ in range(200):
        page = samples((await _scrape(replica_, _auth())).text)
        if all(sample(page, "acpkit_connections", transport=t) == 0 for t in ("websocket", "http")):
            return page
        await asyncio.sleep(0.05)
    raise AssertionError("the connections never closed")


async def test_a_real_acpkit_serve_is_scraped_and_logs_json_without_a_token(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"alice:{TOKEN}\n")
    args = ["--token-file", str(tokens), "--otel", "--access-log", "--log-format", "json", "--log-level", "DEBUG"]
    env = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}
    async with replica(str(tmp_path / "sessions.sqlite3"), args=args, env=env) as served:
        assert (await _scrape(served)).status_code == 401  # protected like /acp
        assert (await _scrape(served, _auth(WRONG))).status_code == 401
        with pytest.raises(InvalidStatus):
            async with websockets.connect(served.url, additional_headers=_auth(WRONG)):
                pass
        sent, updates, answer = await _ws_turn(served.url)
        assert answer["result"]["stopReason"] == "end_turn"
        async with AcpTestClient.connect_url(served.http_url, token=TOKEN) as client:
            await client.initialize()
            sid = await client.new_session()
            assert (await client.prompt("say over http", session_id=sid)).text == "over http"
        page = await _until_closed(served)
        scraped = await _scrape(served, _auth())
    assert scraped.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert "# TYPE acpkit_turn_duration_seconds histogram" in scraped.text
    assert "# TYPE acpkit_sent_bytes_total counter" in scraped.text
    assert sample(page, "acpkit_sent_bytes_total", transport="websocket") == sent
    assert sample(page, "acpkit_sent_updates_total", transport="websocket") == updates
    assert sample(page, "acpkit_errors_total", transport="websocket", code="-32602") == 1
    ended = {"adapter": "acpkit-core", "stop_reason": "end_turn"}
    assert sample(page, "acpkit_turn_duration_seconds_count", transport="websocket", **ended) == 1
    assert sample(page, "acpkit_turn_duration_seconds_count", transport="http", **ended) == 1
    assert sample(page, "acpkit_turn_duration_seconds_bucket", transport="http", le="+Inf", **ended) == 1
    assert sample(page, "acpkit_turn_first_update_seconds_count", adapter="acpkit-core", transport="websocket") == 1
    assert sample(page, "acpkit_turn_tokens_total", adapter="acpkit-core", transport="websocket", type="input") == 3
    assert sample(page, "acpkit_refusals_total", reason="unauthorized") == 3  # two scrapes, one WebSocket
    assert sample(page, "acpkit_sessions_open", transport="websocket") == 0
    assert sample(page, "acpkit_store_duration_seconds_count", operation="begin_turn") == 2
    assert sample(page, "target_info", service_name="acpkit", **_sdk_labels(page)) == 1

    stderr = served.stderr.decode()
    assert TOKEN not in stderr and WRONG not in stderr
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    assert lines and all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    access = [line for line in lines if line["logger"] == "acpkit.access"]
    connections = [line for line in access if line["event"] == "connection"]
    turns = [line for line in access if line["event"] == "turn"]
    refusals = [line for line in access if line["event"] == "refused"]
    assert sorted(c["transport"] for c in connections) == ["http", "websocket"]
    assert all(c["principal"] == "alice" and c["turns"] == 1 and c["closed_by"] == "client" for c in connections)
    (ws_connection,) = [c for c in connections if c["transport"] == "websocket"]
    assert ws_connection["bytes"] == sent and ws_connection["updates"] == updates and ws_connection["errors"] == 1
    assert ws_connection["peer"] == "127.0.0.1"
    assert sorted(t["transport"] for t in turns) == ["http", "websocket"]
    (ws_turn,) = [t for t in turns if t["transport"] == "websocket"]
    assert ws_turn["stop_reason"] == "end_turn" and ws_turn["principal"] == "alice"
    assert ws_turn["input_tokens"] == 3 and ws_turn["output_tokens"] == 4
    assert ws_turn["trace_id"] == TRACE_ID  # the client's trace, for finding the turn's spans
    assert [r["reason"] for r in refusals] == ["unauthorized"] * 3


def _sdk_labels(page: dict[tuple[str, frozenset[tuple[str, str]]], float]) -> dict[str, str]:
    """The `target_info` labels besides `service_name` (the SDK's own: language, name, version)."""
    ((_, labels),) = [key for key in page if key[0] == "target_info"]
    return {k: v for k, v in labels if k != "service_name"}


async def test_the_metrics_endpoint_can_be_public_and_moved(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"alice:{TOKEN}\n")
    args = ["--token-file", str(tokens), "--otel", "--metrics-public", "--metrics-path", "/internal/metrics"]
    env = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_SERVICE_NAME": "agents-eu"}
    async with replica(str(tmp_path / "sessions.sqlite3"), args=args, env=env) as served:
        public = await _scrape(served, path="/internal/metrics")
        assert public.status_code == 200
        assert "target_info{" in public.text and 'service_name="agents-eu"' in public.text
        assert (await _scrape(served, _auth())).status_code == 404  # not at /metrics any more


def test_metrics_flags_need_otel(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", "serve", str(TARGET), "--port", "0", "--metrics-public"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "REPLICA_STORE": str(tmp_path / "s.sqlite3")},
    )
    assert run.returncode == 2
    assert "--metrics-path and --metrics-public need --otel" in run.stderr


# --- LangChain's own tracing, over a real `acpkit serve --otel` ---------------------------------------

LANGCHAIN_GRAPH = Path(__file__).parents[1] / "e2e" / "agents" / "otel_langchain_graph.py"


async def test_langchain_runs_nest_under_the_turn_over_a_real_serve(tmp_path: Path) -> None:
    """`LANGSMITH_TRACING=true LANGSMITH_TRACING_MODE=otel`: LangChain traces itself into the same trace."""
    from otlp_receiver import OtlpReceiver

    with OtlpReceiver() as receiver:
        env = {**receiver.env("lc-agents"), "LANGSMITH_TRACING": "true", "LANGSMITH_TRACING_MODE": "otel"}
        async with replica(
            str(tmp_path / "sessions.sqlite3"), args=["--otel"], env=env, target=f"{LANGCHAIN_GRAPH}:graph"
        ) as served:
            async with AcpTestClient.connect_url(served.url) as client:
                await client.initialize()
                sid = await client.new_session()
                result = await client.prompt("find my notes", session_id=sid, meta={"traceparent": TRACEPARENT})
                assert result.stop_reason == "end_turn" and result.text == "found it"
            (turn,) = receiver.wait_for("session/prompt")
            (graph,) = receiver.wait_for("LangGraph")
            receiver.wait_for("lookup")
        spans = list(receiver.spans)
    assert turn.trace_id == TRACE_ID and turn.attributes["acp.transport"] == "websocket"
    assert turn.attributes["acp.adapter"] == "langchain-acp" and turn.service == "lc-agents"
    assert graph.parent_id == turn.span_id and graph.trace_id == TRACE_ID
    langchain = [s for s in spans if s.scope.startswith("langsmith")]
    assert {"model", "tools", "lookup"} <= {s.name for s in langchain}
    assert all(s.trace_id == TRACE_ID for s in langchain)
    assert [s.name for s in langchain].count("LangGraph") == 1  # the start-up warm-up's throwaway run is not traced


async def test_a_principals_connection_quota_is_counted_as_a_refusal(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"alice:{TOKEN}\n")
    args = ["--token-file", str(tokens), "--otel", "--max-connections-per-principal", "1"]
    env = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}
    async with (
        replica(str(tmp_path / "sessions.sqlite3"), args=args, env=env) as served,
        websockets.connect(served.url, additional_headers=_auth()),
    ):
        with pytest.raises(InvalidStatus) as second:
            async with websockets.connect(served.url, additional_headers=_auth()):
                pass
        page = samples((await _scrape(served, _auth())).text)
    assert second.value.response.status_code == 429
    assert sample(page, "acpkit_refusals_total", reason="principal_connections") == 1


async def test_a_principals_session_and_turn_quotas_are_counted_as_refusals(tmp_path: Path) -> None:
    """A session or a turn past the principal's quota is refused (-32600) and counted, by its reason."""
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"alice:{TOKEN}\n")
    args = ["--token-file", str(tokens), "--otel"]
    args += ["--max-sessions-per-principal", "2", "--max-turns-per-principal", "1"]
    env = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}
    async with replica(str(tmp_path / "sessions.sqlite3"), args=args, env=env) as served:
        async with AcpTestClient.connect_url(served.url, token=TOKEN) as client:
            await client.initialize()
            first, second = await client.new_session(), await client.new_session()
            with pytest.raises(RequestError) as sessions:
                await client.new_session()
            assert "max_sessions_per_principal=2" in str(sessions.value.data)
            turn = asyncio.ensure_future(client.prompt("sleep 2", session_id=first))
            await asyncio.sleep(0.3)
            with pytest.raises(RequestError) as turns:
                await client.prompt("say hi", session_id=second)
            assert "max_turns_per_principal=1" in str(turns.value.data)
            await turn
        page = samples((await _scrape(served, _auth())).text)
    assert sample(page, "acpkit_refusals_total", reason="principal_sessions") == 1
    assert sample(page, "acpkit_refusals_total", reason="principal_turns") == 1
