"""Memory per session: what an idle session and a session with a long history hold in an agent process.

    uv run python bench/memory_bench.py [--idle 10000] [--loaded 20] [--turns 100] [--stores sqlite,postgres]

For each adapter (`pydantic-acp` serving a pydantic-ai agent, `langchain-acp` serving a LangGraph
`create_agent` graph; both on a model of the bench's that answers in one short text) and each store
(the default SQLite file; Postgres when it is installed: a throwaway cluster from
`tests/postgres_cluster.py`), an agent process over real stdio, driven by a raw JSON-RPC client:

1. idle sessions: after one session and one turn (everything imported and warmed), `--idle`
   `session/new` requests; the growth of the process's resident size (`VmRSS`, read once it has
   used no CPU for 0.3 s) divided by the sessions opened. The process's RSS with all of them open
   is printed too;
2. sessions with a history: `--loaded` sessions of `--turns` turns each are written by a first
   process; a fresh process then loads each one (`session/load`) and runs one more turn in it, as
   a user coming back to it would, so its history is in memory as for any active session. The
   growth of RSS per session, and per stored message (two per turn).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

PYDANTIC = """
import os
from pydantic_ai import Agent
from pydantic_ai.models.function import FunctionModel
from pydantic_acp import run_acp

async def stream(messages, info):
    yield f"answer {len(messages)}: the quick brown fox jumps over the lazy dog"

run_acp(Agent(FunctionModel(stream_function=stream, model_name="bench")), store=os.environ["BENCH_STORE"])
"""

LANGCHAIN = """
import os, sys
sys.path.insert(0, sys.argv[1])
from fake_model import FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_acp import run_acp

def reply(messages):
    return Reply(text=f"answer {len(messages)}: the quick brown fox jumps over the lazy dog")

graph = create_agent(FakeChatModel(script=[reply], repeat_last=True), tools=[])
run_acp(graph, store=os.environ["BENCH_STORE"])
"""

AGENTS = {"pydantic-acp": PYDANTIC, "langchain-acp": LANGCHAIN}


def rss_mib(pid: int) -> float:
    """Resident size of process `pid` (MiB)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _cpu(pid: int) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except FileNotFoundError:
            continue
    return total


async def settled_rss(pid: int, quiet: float = 0.3, limit: float = 20.0) -> float:
    """RSS once the process has used no CPU for `quiet` seconds (its warm-up and memory release done)."""
    deadline = time.monotonic() + limit
    last = _cpu(pid)
    while time.monotonic() < deadline:
        await asyncio.sleep(quiet)
        now = _cpu(pid)
        if now == last:
            break
        last = now
    return rss_mib(pid)


class Agent:
    """An agent process driven by a raw JSON-RPC client over stdio."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    @classmethod
    async def start(cls, name: str, env: dict[str, str]) -> Agent:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", AGENTS[name], str(ROOT / "tests" / "langchain"),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, limit=2**26,
        )  # fmt: skip
        agent = cls(process)
        await agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        return agent

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.process.stdin.write(line.encode() + b"\n")
        await self.process.stdin.drain()
        while raw := await self.process.stdout.readline():
            if b'"method"' in raw[:40]:
                continue
            message = json.loads(raw)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
        raise RuntimeError(f"the agent exited before answering {method}")

    async def new(self, cwd: str) -> str:
        return (await self.call("session/new", {"cwd": cwd, "mcpServers": []}))["sessionId"]

    async def prompt(self, sid: str, text: str) -> None:
        result = await self.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]})
        assert result["stopReason"] == "end_turn", result

    async def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.wait()


@dataclass
class Memory:
    """One adapter and store: MiB and KiB figures."""

    base_mib: float
    """RSS after one session and one turn."""
    idle_kib: float
    """RSS growth per idle session."""
    idle_total_mib: float
    """RSS with every idle session open."""
    idle_sessions: int
    loaded_kib: float
    """RSS growth per session loaded with a history, after a turn in it."""
    loaded_sessions: int
    turns: int


async def measure(name: str, store: str, idle: int, loaded: int, turns: int, workdir: Path) -> Memory:
    env = {**os.environ, "BENCH_STORE": store, "ACPKIT_STATE_DIR": str(workdir / "state")}
    cwd = str(workdir)
    agent = await Agent.start(name, env)
    try:
        await agent.prompt(await agent.new(cwd), "warm up")
        base = await settled_rss(agent.process.pid)
        for _ in range(idle):
            await agent.new(cwd)
        with_idle = await settled_rss(agent.process.pid)
        sessions = []
        for _ in range(loaded):  # the long sessions, written by this process
            sid = await agent.new(cwd)
            for turn in range(turns):
                await agent.prompt(sid, f"turn {turn}: tell me about the fox")
            sessions.append(sid)
    finally:
        await agent.stop()
    agent = await Agent.start(name, env)  # a fresh process: each long session loaded and continued
    try:
        await agent.prompt(await agent.new(cwd), "warm up")
        before = await settled_rss(agent.process.pid)
        for sid in sessions:
            await agent.call("session/load", {"sessionId": sid, "cwd": cwd, "mcpServers": []})
            await agent.prompt(sid, "and one more")
        after = await settled_rss(agent.process.pid)
    finally:
        await agent.stop()
    return Memory(
        base_mib=base,
        idle_kib=(with_idle - base) * 1024 / max(idle, 1),
        idle_total_mib=with_idle,
        idle_sessions=idle,
        loaded_kib=(after - before) * 1024 / max(loaded, 1),
        loaded_sessions=loaded,
        turns=turns,
    )


async def run(idle: int, loaded: int, turns: int, stores: list[str]) -> dict[tuple[str, str], Memory | str]:
    """Every (adapter, store): its figures, or why the store could not be measured."""
    sys.path.insert(0, str(ROOT / "tests"))
    from postgres_cluster import PostgresCluster, new_schema_name, postgres_missing, schema_url

    out: dict[tuple[str, str], Memory | str] = {}
    cluster = None
    try:
        for store in stores:
            for name in AGENTS:
                with tempfile.TemporaryDirectory(prefix="acpkit-memory-") as tmp:
                    if store == "sqlite":
                        out[(name, store)] = await measure(
                            name, str(Path(tmp) / "sessions.sqlite3"), idle, loaded, turns, Path(tmp)
                        )
                        continue
                    missing = postgres_missing()
                    if missing is not None:
                        out[(name, store)] = missing
                        continue
                    if cluster is None:
                        cluster = await asyncio.to_thread(PostgresCluster.start)
                    import psycopg

                    schema = new_schema_name()
                    with psycopg.connect(cluster.url, autocommit=True) as conn:
                        conn.execute(f"CREATE SCHEMA {schema}".encode())
                    url = schema_url(cluster.url, schema)
                    out[(name, store)] = await measure(name, url, idle, loaded, turns, Path(tmp))
    finally:
        if cluster is not None:
            cluster.stop()
    return out


def report(results: dict[tuple[str, str], Memory | str]) -> list[str]:
    lines = [
        f"{'adapter':<15}{'store':<10}{'RSS after 1 turn':>17}{'per idle session':>18}{'all idle open':>16}"
        f"{'per loaded session':>20}{'per message':>13}"
    ]
    for (name, store), m in results.items():
        if isinstance(m, str):
            lines.append(f"{name:<15}{store:<10}  not measured: {m}")
            continue
        per_message = m.loaded_kib / (2 * m.turns + 2)
        lines.append(
            f"{name:<15}{store:<10}{m.base_mib:>13.1f} MiB{m.idle_kib:>14.1f} KiB"
            f"{m.idle_total_mib:>12.1f} MiB{m.loaded_kib:>16.1f} KiB{per_message:>9.2f} KiB"
        )
    return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=10_000)
    parser.add_argument("--loaded", type=int, default=20)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--stores", default="sqlite,postgres")
    ns = parser.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"memory per session; {os.cpu_count()} cores, load {load}")
    results = await run(ns.idle, ns.loaded, ns.turns, ns.stores.split(","))
    print("\n".join(report(results)))
    print(f"({ns.idle} idle sessions; {ns.loaded} sessions of {ns.turns} turns, each loaded and continued)")


if __name__ == "__main__":
    asyncio.run(main())
