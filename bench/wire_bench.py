"""Streaming over real stdio: CPU per delta against the framework alone, writes per delta, update latency.

    uv run python bench/wire_bench.py [--deltas 1,1000,10000] [--runs 5] [--windows 0,2]

Agents: `pydantic-acp` serving a pydantic-ai agent on a `FunctionModel`, `langchain-acp` serving a
LangGraph `create_agent` graph on the tests' fake chat model (memory store, so the figures are the
turn's and the wire's), and the bare SDK agent (the ACP SDK alone, one `session_update` per delta).
A prompt `N` streams N text deltas, read by a raw client that only splits lines.

1. Per streamed delta, for each `--deltas` (one agent process per adapter; every run one prompt of
   ours then, in the same process, the framework alone streaming the same N deltas, through the
   bench's extension method `_bench/alone`: pydantic-ai's `agent.run(..., event_stream_handler=...)`
   as a turn runs it, the graph's `astream(stream_mode=["messages", "updates"], subgraphs=True)` as
   the runner streams it; both consuming every event, as an adapter must). CPU of the agent process
   (every thread, from `schedstat`) for our prompt, CPU of the event loop's thread for alone; wall
   time; `write(2)` calls per delta (`syscw` of `/proc/PID/io`); chunks read per delta (deltas within
   `coalesce_ms` of each other merge). Medians of `--runs`.
2. The windows (`--windows`, each both the write window `write_window_ms` and the chunk-merging
   window `coalesce_ms`; 0 is one write per message and one chunk per delta, as before either
   existed): each in a process of its own, interleaved run by run, `--deltas`' largest: writes and
   chunks per delta; the first update (the prompt written to the first `agent_message_chunk` read); each
   pydantic delta's latency from pydantic-ai's model producing it to the client reading it (it
   carries its wall-clock time; both ends on this machine), p50 and p99.
3. Sessions at once: `--sessions` sessions of one agent process, each sent a prompt of
   `--concurrent-deltas` deltas at the same moment; wall time until every prompt is answered and
   the agent's CPU; beside it the framework alone making as many runs at once (`asyncio.gather`)
   in the same process.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

PYDANTIC = """
import asyncio, sys, time
from acpkit_core.extensions import Extensions
from pydantic_ai import Agent
from pydantic_ai.models.function import FunctionModel
from pydantic_acp import run_acp

async def stream(messages, info):
    n = int(messages[-1].parts[-1].content)
    for _ in range(n):
        yield f"{time.time():.6f} "

agent = Agent(FunctionModel(stream_function=stream, model_name="bench"))
extensions = Extensions()

async def drain(ctx, events):
    async for _ in events:
        pass

@extensions.method("bench/alone")
async def alone(params: dict) -> dict:
    cpu, start = time.thread_time(), time.perf_counter()
    runs = [agent.run(str(params["deltas"]), event_stream_handler=drain) for _ in range(params.get("runs", 1))]
    await asyncio.gather(*runs)
    return {"wall": time.perf_counter() - start, "cpu": time.thread_time() - cpu}

# A window in ms for both the write window and chunk merging (0: as before either existed).
window = {} if sys.argv[1] == "default" else {"write_window_ms": float(sys.argv[1]), "coalesce_ms": float(sys.argv[1])}
run_acp(agent, store="memory", extensions=extensions, **window)
"""

LANGCHAIN = """
import asyncio, sys, time
sys.path.insert(0, sys.argv[2])
from acpkit_core.extensions import Extensions
from fake_model import FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_acp import run_acp
from langchain_core.messages import HumanMessage

def reply(messages):
    return Reply(text=["tok "] * int(messages[-1].content))

graph = create_agent(FakeChatModel(script=[reply], repeat_last=True), tools=[])
extensions = Extensions()

async def one(deltas):
    run_input = {"messages": [HumanMessage(content=str(deltas))]}
    async for _ in graph.astream(run_input, stream_mode=["messages", "updates"], subgraphs=True):
        pass

@extensions.method("bench/alone")
async def alone(params: dict) -> dict:
    cpu, start = time.thread_time(), time.perf_counter()
    await asyncio.gather(*(one(params["deltas"]) for _ in range(params.get("runs", 1))))
    return {"wall": time.perf_counter() - start, "cpu": time.thread_time() - cpu}

# A window in ms for both the write window and chunk merging (0: as before either existed).
window = {} if sys.argv[1] == "default" else {"write_window_ms": float(sys.argv[1]), "coalesce_ms": float(sys.argv[1])}
run_acp(graph, store="memory", extensions=extensions, **window)
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
        return PromptResponse(stop_reason="end_turn")
    async def cancel(self, session_id, **kw):
        pass

asyncio.run(run_agent(Bare()))
"""

AGENTS = {"pydantic-acp": PYDANTIC, "langchain-acp": LANGCHAIN, "bare SDK agent": BARE}
ALONE = {"pydantic-acp": "pydantic-ai alone", "langchain-acp": "LangGraph alone"}


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


class StreamingAgent:
    """One agent process and a raw line client; records what it reads of the current prompt."""

    def __init__(self, name: str, process: asyncio.subprocess.Process) -> None:
        self.name = name
        self.process = process
        self.next_id = 0
        self.first: float | None = None
        """`perf_counter()` when the prompt's first agent message chunk was read."""
        self.latencies: list[float] = []
        """Each pydantic delta's seconds from its model producing it to this client reading it."""
        self.chunks = 0
        """`agent_message_chunk`s read of the current prompt (fewer than its deltas where they merge)."""

    @classmethod
    async def start(cls, name: str, window: str = "default") -> StreamingAgent:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", AGENTS[name], window, str(ROOT / "tests" / "langchain"),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**24,
        )  # fmt: skip
        agent = cls(name, process)
        await agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        return agent

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.process.stdin.write(line.encode() + b"\n")
        await self.process.stdin.drain()
        while line := await self.process.stdout.readline():
            if b'"method"' in line[:40]:
                if b"agent_message_chunk" in line:
                    self.chunks += 1
                    if self.first is None:
                        self.first = time.perf_counter()
                    if self.name == "pydantic-acp":
                        # A chunk carries the stamps of the deltas merged into it, one per delta.
                        now = time.time()
                        text = json.loads(line)["params"]["update"]["content"]["text"]
                        self.latencies.extend(now - float(stamp) for stamp in text.split())
                continue
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
        raise RuntimeError(f"the agent exited before answering {method}")

    async def session(self) -> str:
        return (await self.call("session/new", {"cwd": tempfile.gettempdir(), "mcpServers": []}))["sessionId"]

    async def prompt(self, sid: str, deltas: int) -> tuple[float, float, int, float]:
        """One prompt of `deltas` deltas: (wall s, agent CPU s, writes, seconds to the first chunk)."""
        self.first = None
        self.latencies = []
        self.chunks = 0
        pid = self.process.pid
        w0, c0, t0 = writes(pid), cpu_seconds(pid), time.perf_counter()
        result = await self.call(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": str(deltas)}]}
        )
        t1, c1, w1 = time.perf_counter(), cpu_seconds(pid), writes(pid)
        assert result["stopReason"] == "end_turn", result
        return t1 - t0, c1 - c0, w1 - w0, (self.first or t1) - t0

    async def alone(self, deltas: int, runs: int = 1) -> tuple[float, float]:
        """The framework alone streaming `deltas` deltas in this process, `runs` runs at once:
        (wall s, CPU s of its thread)."""
        result = await self.call("_bench/alone", {"deltas": deltas, "runs": runs})
        return result["wall"], result["cpu"]

    async def prompts_at_once(self, sids: list[str], deltas: int) -> tuple[float, float]:
        """One prompt of `deltas` deltas in each session, all sent at once: (wall s, agent CPU s) until
        every one is answered."""
        assert self.process.stdin is not None and self.process.stdout is not None
        pid = self.process.pid
        c0, t0 = cpu_seconds(pid), time.perf_counter()
        waiting: set[int] = set()
        for sid in sids:
            self.next_id += 1
            waiting.add(self.next_id)
            params = {"sessionId": sid, "prompt": [{"type": "text", "text": str(deltas)}]}
            line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": "session/prompt", "params": params})
            self.process.stdin.write(line.encode() + b"\n")
        await self.process.stdin.drain()
        while waiting:
            line = await self.process.stdout.readline()
            if not line:
                raise RuntimeError("the agent exited")
            if b'"method"' in line[:40]:
                continue
            message = json.loads(line)
            assert message["result"]["stopReason"] == "end_turn", message
            waiting.discard(message["id"])
        return time.perf_counter() - t0, cpu_seconds(pid) - c0

    async def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.wait()


@dataclass
class Stream:
    """One agent and one delta count: a value per run."""

    wall: list[float] = field(default_factory=list[float])
    cpu: list[float] = field(default_factory=list[float])
    writes: list[float] = field(default_factory=list[float])
    messages: list[float] = field(default_factory=list[float])
    """Chunks read per delta."""
    alone_wall: list[float] = field(default_factory=list[float])
    alone_cpu: list[float] = field(default_factory=list[float])


async def stream_figures(deltas: list[int], runs: int) -> dict[tuple[str, int], Stream]:
    """Section 1: every (agent, delta count), ours and alone taken in turns in one process per agent."""
    out: dict[tuple[str, int], Stream] = {}
    for name in AGENTS:
        agent = await StreamingAgent.start(name)
        try:
            sid = await agent.session()
            await agent.prompt(sid, 50)  # warm up
            if name in ALONE:
                await agent.alone(50)
            for _ in range(runs):
                for n in deltas:
                    figures = out.setdefault((name, n), Stream())
                    wall, cpu, count, _ = await agent.prompt(await agent.session(), n)
                    figures.wall.append(wall)
                    figures.cpu.append(cpu)
                    figures.writes.append(count / n)
                    figures.messages.append(agent.chunks / n)
                    if name in ALONE:
                        wall, cpu = await agent.alone(n)
                        figures.alone_wall.append(wall)
                        figures.alone_cpu.append(cpu)
        finally:
            await agent.stop()
    return out


@dataclass
class Window:
    """One agent and write window: a value per run."""

    writes: list[float] = field(default_factory=list[float])
    """write(2) calls per delta."""
    messages: list[float] = field(default_factory=list[float])
    """Chunks read per delta."""
    first: list[float] = field(default_factory=list[float])
    """Seconds from the prompt to the first chunk."""
    p50: list[float] = field(default_factory=list[float])
    p99: list[float] = field(default_factory=list[float])
    cpu: list[float] = field(default_factory=list[float])
    """Agent CPU seconds per delta."""
    wall: list[float] = field(default_factory=list[float])


async def window_figures(
    deltas: int, runs: int, windows: list[float], agents: tuple[str, ...] = ("pydantic-acp", "langchain-acp")
) -> dict[tuple[str, float], Window]:
    """Section 2: every (agent, window), each run a fresh process, interleaved run by run."""
    configs = [(name, w) for name in agents for w in windows]
    results = {config: Window() for config in configs}
    for _ in range(runs):
        for name, window in configs:
            agent = await StreamingAgent.start(name, f"{window:g}")
            try:
                sid = await agent.session()
                await agent.prompt(sid, 50)  # warm up
                wall, cpu, count, first = await agent.prompt(sid, deltas)
            finally:
                await agent.stop()
            into = results[(name, window)]
            into.writes.append(count / deltas)
            into.messages.append(agent.chunks / deltas)
            into.first.append(first)
            into.cpu.append(cpu / deltas)
            into.wall.append(wall)
            if agent.latencies:
                ordered = sorted(agent.latencies)
                into.p50.append(ordered[len(ordered) // 2])
                into.p99.append(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))])
    return results


@dataclass
class Concurrent:
    """One agent: sessions streaming at once, a value per run."""

    wall: list[float] = field(default_factory=list[float])
    cpu: list[float] = field(default_factory=list[float])
    alone_wall: list[float] = field(default_factory=list[float])
    alone_cpu: list[float] = field(default_factory=list[float])


async def concurrent_figures(sessions: int, deltas: int, runs: int) -> dict[str, Concurrent]:
    """Section 3: `sessions` sessions of one agent process each streaming `deltas` deltas at once; the
    framework alone making as many runs at once in the same process, right after."""
    out: dict[str, Concurrent] = {}
    for name in AGENTS:
        agent = await StreamingAgent.start(name)
        agent.name = f"{name} (at once)"  # no per-delta latency parsing
        figures = out[name] = Concurrent()
        try:
            sids = [await agent.session() for _ in range(sessions)]
            await agent.prompts_at_once(sids, 10)  # warm up
            for _ in range(runs):
                wall, cpu = await agent.prompts_at_once(sids, deltas)
                figures.wall.append(wall)
                figures.cpu.append(cpu)
                if name in ALONE:
                    wall, cpu = await agent.alone(deltas, runs=sessions)
                    figures.alone_wall.append(wall)
                    figures.alone_cpu.append(cpu)
        finally:
            await agent.stop()
    return out


def med(values: list[float], scale: float = 1.0) -> float:
    return statistics.median(values) * scale if values else float("nan")


def report_streams(results: dict[tuple[str, int], Stream]) -> list[str]:
    lines = [
        f"{'agent':<16}{'deltas':>7}{'CPU µs/delta':>14}{'alone':>9}{'ratio':>7}{'wall µs/delta':>15}{'alone':>9}"
        f"{'writes/delta':>14}{'chunks/delta':>14}"
    ]
    for (name, n), s in results.items():
        cpu, wall = med(s.cpu, 1e6 / n), med(s.wall, 1e6 / n)
        alone_cpu, alone_wall = med(s.alone_cpu, 1e6 / n), med(s.alone_wall, 1e6 / n)
        ratio = f"{cpu / alone_cpu:.2f}x" if s.alone_cpu else ""
        alone_cells = f"{alone_cpu:>9.1f}{ratio:>7}{wall:>15.1f}{alone_wall:>9.1f}" if s.alone_cpu else ""
        if not s.alone_cpu:
            alone_cells = f"{'':>9}{'':>7}{wall:>15.1f}{'':>9}"
        lines.append(f"{name:<16}{n:>7}{cpu:>14.1f}{alone_cells}{med(s.writes):>14.3f}{med(s.messages):>14.3f}")
    return lines


def report_concurrent(results: dict[str, Concurrent]) -> list[str]:
    lines = [f"{'agent':<16}{'wall ms':>9}{'alone':>9}{'agent CPU ms':>14}{'alone':>9}{'CPU ratio':>11}"]
    for name, c in results.items():
        alone = f"{med(c.alone_wall, 1e3):>9.1f}" if c.alone_wall else f"{'':>9}"
        alone_cpu = f"{med(c.alone_cpu, 1e3):>9.1f}{med(c.cpu) / med(c.alone_cpu):>10.2f}x" if c.alone_cpu else ""
        lines.append(f"{name:<16}{med(c.wall, 1e3):>9.1f}{alone}{med(c.cpu, 1e3):>14.1f}{alone_cpu}")
    return lines


def report_windows(results: dict[tuple[str, float], Window]) -> list[str]:
    lines = [
        f"{'agent':<16}{'window ms':>10}{'writes/delta':>14}{'chunks/delta':>14}{'first update ms':>17}"
        f"{'p50 ms':>8}{'p99 ms':>8}"
    ]
    for (name, window), w in results.items():
        p50 = f"{med(w.p50, 1e3):.2f}" if w.p50 else "-"
        p99 = f"{med(w.p99, 1e3):.2f}" if w.p99 else "-"
        lines.append(
            f"{name:<16}{window:>10g}{med(w.writes):>14.3f}{med(w.messages):>14.3f}{med(w.first, 1e3):>17.2f}"
            f"{p50:>8}{p99:>8}"
        )
    return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--deltas", default="1,1000,10000", help="delta counts, comma-separated")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--windows", default="0,2", help="write windows in ms, comma-separated")
    parser.add_argument("--sessions", type=int, default=50, help="sessions streaming at once")
    parser.add_argument("--concurrent-deltas", type=int, default=100, help="deltas per session streaming at once")
    ns = parser.parse_args()
    deltas = [int(n) for n in ns.deltas.split(",")]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"streaming over stdio, median of {ns.runs} runs; {os.cpu_count()} cores, load {load}\n")
    print("\n".join(report_streams(await stream_figures(deltas, ns.runs))))
    print(f"\n{ns.sessions} sessions streaming {ns.concurrent_deltas} deltas each, at once")
    print("\n".join(report_concurrent(await concurrent_figures(ns.sessions, ns.concurrent_deltas, ns.runs))))
    windows = [float(w) for w in ns.windows.split(",")]
    print(f"\nwrite window, {max(deltas)} deltas")
    print("\n".join(report_windows(await window_figures(max(deltas), ns.runs, windows))))
    print(f"\nload at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
