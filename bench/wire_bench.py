"""Writes per streamed delta and update latency over real stdio, with and without the write window.

    uv run python bench/wire_bench.py [--deltas 10000] [--runs 5] [--windows 0,2]

For each adapter (a pydantic-ai agent on a `FunctionModel`, a LangGraph `create_agent` graph on the
tests' fake chat model) and the bare SDK agent, an agent process on the memory store streams
`--deltas` text deltas in one prompt to a raw client that only splits lines. Each write window
(`write_window_ms`; 0 is one write per message, as before the window existed) runs in its own
process, the configurations interleaved run by run. Per configuration, the median over `--runs`:

- `write(2)` calls of the agent process per streamed delta (`syscw` of `/proc/PID/io` around the
  prompt: every write the process makes, the store's included; the memory store makes none);
- first update: from the prompt written to the first `agent_message_chunk` read (wall);
- delta latency, p50 and p99: each pydantic delta carries the wall-clock time pydantic-ai's model
  produced it; the client subtracts it from the time it read the line (both ends on this machine);
- the agent process's CPU per delta (every thread, from `schedstat`) and the prompt's wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PYDANTIC = """
import sys, time
from pydantic_ai import Agent
from pydantic_ai.models.function import FunctionModel
from pydantic_acp import run_acp

async def stream(messages, info):
    n = int(messages[-1].parts[-1].content)
    for _ in range(n):
        yield f"{time.time():.6f} "

agent = Agent(FunctionModel(stream_function=stream, model_name="bench"))
run_acp(agent, store="memory", write_window_ms=float(sys.argv[1]))
"""

LANGCHAIN = """
import sys
sys.path.insert(0, sys.argv[2])
from fake_model import FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_acp import run_acp

def reply(messages):
    return Reply(text=["tok "] * int(messages[-1].content))

graph = create_agent(FakeChatModel(script=[reply], repeat_last=True), tools=[])
run_acp(graph, store="memory", write_window_ms=float(sys.argv[1]))
"""

BARE = """
import asyncio, uuid
from acp import run_agent, update_agent_message_text
from acp.schema import AgentCapabilities, Implementation, InitializeResponse, NewSessionResponse, PromptResponse

class Bare:
    def on_connect(self, conn):
        self.conn = conn
    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kw):
        return InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name="bare", version="0"))
    async def new_session(self, cwd, mcp_servers=None, additional_directories=None, **kw):
        return NewSessionResponse(session_id=uuid.uuid4().hex)
    async def prompt(self, prompt, session_id, **kw):
        mid = uuid.uuid4().hex
        for _ in range(int(prompt[0].text)):
            update = update_agent_message_text("tok ")
            update.message_id = mid
            await self.conn.session_update(session_id=session_id, update=update)
            await asyncio.sleep(0)  # as a framework's stream hands control back between deltas
        return PromptResponse(stop_reason="end_turn")
    async def cancel(self, session_id, **kw):
        pass

asyncio.run(run_agent(Bare()))
"""

AGENTS = {"pydantic-acp": PYDANTIC, "langchain-acp": LANGCHAIN, "bare SDK agent": BARE}


def writes(pid: int) -> int:
    """`write(2)`-family system calls made by process `pid` so far."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("syscw:"):
            return int(line.split()[1])
    raise RuntimeError("no syscw in /proc/PID/io")


def cpu_seconds(pid: int) -> float:
    """CPU time of every thread of `pid` so far (schedstat, nanoseconds)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except FileNotFoundError:
            continue
    return total / 1e9


@dataclass
class Figures:
    """One configuration's measurements, a value per run."""

    writes: list[float] = field(default_factory=list[float])
    """write(2) calls per delta."""
    first: list[float] = field(default_factory=list[float])
    """Seconds from the prompt to the first chunk."""
    p50: list[float] = field(default_factory=list[float])
    p99: list[float] = field(default_factory=list[float])
    cpu: list[float] = field(default_factory=list[float])
    """Agent CPU seconds per delta."""
    wall: list[float] = field(default_factory=list[float])
    """Seconds of the whole prompt."""


async def one_run(name: str, window: float, deltas: int, into: Figures) -> None:
    """Start the agent, warm it up with a short prompt, then time one prompt of `deltas` deltas."""
    args = [str(window), str(ROOT / "tests" / "langchain")]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", AGENTS[name], *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**24,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    stamps: list[float] = []
    first: list[float] = []

    async def call(request_id: int, method: str, params: dict[str, object]) -> dict[str, object]:
        stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode())
        stdin.write(b"\n")
        await stdin.drain()
        while line := await stdout.readline():
            if b'"method"' in line[:40]:
                if b"agent_message_chunk" in line:
                    if not first:
                        first.append(time.perf_counter())
                    if name == "pydantic-acp":
                        stamps.append(time.time() - float(json.loads(line)["params"]["update"]["content"]["text"]))
                continue
            message = json.loads(line)
            if message.get("id") == request_id:
                return message
        raise RuntimeError(f"the agent exited before answering {method}")

    await call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    created = await call(1, "session/new", {"cwd": tempfile.gettempdir(), "mcpServers": []})
    sid = created["result"]["sessionId"]  # pyright: ignore[reportIndexIssue, reportUnknownVariableType]
    for i, n in enumerate((50, deltas)):
        stamps.clear()
        first.clear()
        w0, c0, t0 = writes(process.pid), cpu_seconds(process.pid), time.perf_counter()
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": str(n)}]}
        answer = await call(2 + i, "session/prompt", prompt)
        t1, c1, w1 = time.perf_counter(), cpu_seconds(process.pid), writes(process.pid)
        assert answer["result"]["stopReason"] == "end_turn", answer  # pyright: ignore[reportIndexIssue]
    into.writes.append((w1 - w0) / deltas)
    into.first.append(first[0] - t0)
    into.cpu.append((c1 - c0) / deltas)
    into.wall.append(t1 - t0)
    if stamps:
        ordered = sorted(stamps)
        into.p50.append(ordered[len(ordered) // 2])
        into.p99.append(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))])
    stdin.close()
    await process.wait()


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:.2f}" if values else "-"


async def measure(
    deltas: int, runs: int, windows: list[float], agents: list[str] | None = None
) -> dict[tuple[str, float], Figures]:
    """Every (agent, window) configuration, interleaved run by run."""
    configs = [(name, w) for name in (agents or list(AGENTS)) for w in (windows if name != "bare SDK agent" else [0.0])]
    results = {config: Figures() for config in configs}
    for _ in range(runs):
        for config in configs:
            await one_run(*config, deltas, results[config])
    return results


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--windows", default="0,2", help="write windows in ms, comma-separated")
    ns = parser.parse_args()
    windows = [float(w) for w in ns.windows.split(",")]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{ns.deltas} deltas, median of {ns.runs} interleaved runs; {os.cpu_count()} cores, load {load}")
    results = await measure(ns.deltas, ns.runs, windows)
    head = f"{'agent':<16}{'window':>7}{'writes/delta':>14}{'first ms':>10}{'p50 ms':>8}{'p99 ms':>8}"
    print(head + f"{'CPU µs/delta':>14}{'wall ms':>9}")
    for (name, window), f in results.items():
        print(
            f"{name:<16}{window:>7g}{statistics.median(f.writes):>14.3f}{_ms(f.first):>10}{_ms(f.p50):>8}"
            f"{_ms(f.p99):>8}{statistics.median(f.cpu) * 1e6:>14.1f}{statistics.median(f.wall) * 1e3:>9.0f}"
        )
    print(f"load at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
