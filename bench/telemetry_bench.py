"""What telemetry costs a served agent: per streamed chunk and per turn, OpenTelemetry absent, off and on.

Run: `uv run python bench/telemetry_bench.py [--chunks 20000] [--turns 200] [--runs 5]`

One agent process per configuration and run (the core server over a runner that streams N one-word
chunks; sessions in SQLite, as served), driven over real stdio and over WebSocket (`acpkit serve`'s
server) by a raw JSON-RPC client. The configurations, side by side:

- `absent`: OpenTelemetry cannot be imported at all (as without the `otel` extra and any package
  that brings its API);
- `off`: OpenTelemetry installed, no `Telemetry` (the default);
- `on`: `Telemetry()`: a span per turn and per tool call, every metric (an SDK tracer provider,
  installed as the global one as `OTEL_*` configuration does, exporting in batches to an exporter
  that drops them; the metrics read on demand, as `/metrics` does);
- `on+logs`: `on` plus the JSON access lines (formatted, written to /dev/null).

Each figure is the best of the runs (configurations interleaved, so the machine's other work falls
on every configuration alike): wall time and the agent process's CPU time (every thread's, from the
scheduler), per chunk (one turn of N chunks) and per turn (T turns of one chunk each in one session).
`absent` and `off` run the same server code (no telemetry work); `on` shows the price.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import websockets

MODES = ("absent", "off", "on", "on+logs")

AGENT = r"""
import asyncio, logging, os, sys
mode, transport = sys.argv[1], sys.argv[2]
if mode == "absent":
    sys.modules["opentelemetry"] = None  # as if OpenTelemetry were not installed
from acpkit_core.config import AgentOptions
from acpkit_core.server import AcpAgent, run_stdio

class StreamRunner:
    async def run_turn(self, turn):
        n = int(turn.prompt[0].text.split()[1])
        for _ in range(n):
            await turn.emit.text("x ")
        return "end_turn"

telemetry = None
if mode.startswith("on"):
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from acpkit_core.telemetry import Telemetry, configure_logging

    class Drop(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Drop()))
    trace.set_tracer_provider(provider)
    os.environ["OTEL_METRICS_EXPORTER"] = "none"  # the /metrics reader alone
    telemetry = Telemetry(logs=mode == "on+logs")
    if mode == "on+logs":
        configure_logging("WARNING", fmt="json", access=True, stream=open(os.devnull, "w"))
agent = AcpAgent(StreamRunner(), AgentOptions(telemetry=telemetry))
if transport == "stdio":
    run_stdio(agent)
else:
    from acpkit_core.remote import RemoteServer, ServeOptions

    async def main():
        async with RemoteServer(agent, ServeOptions(port=0)) as server:
            print(server.url, flush=True)
            await server.wait()

    asyncio.run(main())
if mode == "absent":
    assert not [m for m in sys.modules if m.startswith("opentelemetry") and sys.modules[m] is not None]
"""


def cpu_seconds(pid: int) -> float:
    """CPU time of every thread of a process so far (Linux `/proc/PID/task/*/schedstat`, in nanoseconds)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):  # a thread that just ended
            continue
    return total / 1e9


@dataclass
class Figures:
    chunk_wall_us: float
    chunk_cpu_us: float
    turn_wall_us: float
    turn_cpu_us: float


Call = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


async def measure(pid: int, call: Call, chunks: int, turns: int) -> Figures:
    await call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    new: dict[str, Any] = {"cwd": tempfile.gettempdir(), "mcpServers": []}
    sid = (await call({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new}))["result"]["sessionId"]
    ids = iter(range(2, 10**9))

    async def prompt(text: str) -> None:
        params = {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        answer = await call({"jsonrpc": "2.0", "id": next(ids), "method": "session/prompt", "params": params})
        assert answer["result"]["stopReason"] == "end_turn", answer

    for _ in range(3):
        await prompt("go 100")  # warm up
    cpu, wall = cpu_seconds(pid), time.perf_counter()
    await prompt(f"go {chunks}")
    chunk_wall, chunk_cpu = time.perf_counter() - wall, cpu_seconds(pid) - cpu
    cpu, wall = cpu_seconds(pid), time.perf_counter()
    for _ in range(turns):
        await prompt("go 1")
    turn_wall, turn_cpu = time.perf_counter() - wall, cpu_seconds(pid) - cpu
    return Figures(chunk_wall / chunks * 1e6, chunk_cpu / chunks * 1e6, turn_wall / turns * 1e6, turn_cpu / turns * 1e6)


def _env(state: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["ACPKIT_STATE_DIR"] = state
    return env


async def over_stdio(mode: str, chunks: int, turns: int) -> Figures:
    with tempfile.TemporaryDirectory() as state:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", AGENT, mode, "stdio",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**24, env=_env(state),
        )  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        stdin, stdout = process.stdin, process.stdout

        async def call(message: dict[str, Any]) -> dict[str, Any]:
            stdin.write(json.dumps(message).encode() + b"\n")
            await stdin.drain()
            while line := await stdout.readline():
                if b'"method"' in line[:40]:
                    continue
                answer = json.loads(line)
                if answer.get("id") == message["id"]:
                    return answer
            raise RuntimeError("the agent exited")

        figures = await measure(process.pid, call, chunks, turns)
        stdin.close()
        if await process.wait() != 0:
            raise RuntimeError(f"the {mode} agent failed")
        return figures


async def over_websocket(mode: str, chunks: int, turns: int) -> Figures:
    with tempfile.TemporaryDirectory() as state:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", AGENT, mode, "ws", stdout=asyncio.subprocess.PIPE, env=_env(state),
        )  # fmt: skip
        assert process.stdout is not None
        url = (await process.stdout.readline()).decode().strip()
        try:
            async with websockets.connect(url, max_size=None) as ws:

                async def call(message: dict[str, Any]) -> dict[str, Any]:
                    await ws.send(json.dumps(message))
                    needle = f'"id":{message["id"]},'
                    while True:
                        frame = await ws.recv()
                        text = frame if isinstance(frame, str) else frame.decode()
                        if needle in text or text.startswith('{"jsonrpc":"2.0","id"'):
                            answer = json.loads(text)
                            if answer.get("id") == message["id"]:
                                return answer

                return await measure(process.pid, call, chunks, turns)
        finally:
            process.terminate()
            await process.wait()


def _row(name: str, values: list[float], base: list[float]) -> str:
    ratios = f"{values[1] / base[1]:5.2f}x {values[3] / base[3]:5.2f}x"
    return f"  {name:<8} " + "  ".join(f"{v:9.2f}" for v in values) + f"   {ratios}"


async def main(args: argparse.Namespace) -> None:
    transports: dict[str, Callable[[str, int, int], Awaitable[Figures]]] = {
        "stdio": over_stdio,
        "websocket": over_websocket,
    }
    print(f"telemetry cost: {args.chunks} chunks in one turn; {args.turns} one-chunk turns; best of {args.runs} runs")
    print("(figures from a shared machine; compare the rows of one run, not across runs)")
    for transport, run in transports.items():
        results: dict[str, list[Figures]] = {mode: [] for mode in MODES}
        for _ in range(args.runs):
            for mode in MODES:  # interleaved, so drift in the machine's load spreads over every mode
                results[mode].append(await run(mode, args.chunks, args.turns))
        medians = {
            mode: [
                min(getattr(f, field) for f in figures)
                for field in ("chunk_wall_us", "chunk_cpu_us", "turn_wall_us", "turn_cpu_us")
            ]
            for mode, figures in results.items()
        }
        print(f"\n{transport}: µs per chunk (wall, agent CPU), µs per turn (wall, agent CPU)")
        print(f"  {'':<8} {'chunk':>9}  {'chunkCPU':>9}  {'turn':>9}  {'turnCPU':>9}   CPU vs off (chunk, turn)")
        for mode, values in medians.items():
            print(_row(mode, values, medians["off"]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
