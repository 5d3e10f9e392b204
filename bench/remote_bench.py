"""Remote ACP figures, side by side in one run: stdio vs WebSocket vs Streamable HTTP, load, replicas, failover.

Run: `uv run python bench/remote_bench.py` (or `--quick` for a smoke run of every figure).

1. Per streamed chunk (µs/chunk, one prompt of `--chunks` chunks, best of `--runs`): the same agent
   (`bench/_remote_agent.py`) over stdio (`acpkit run`'s server), over WebSocket and over Streamable
   HTTP (`acpkit serve`), each with a raw client that only parses JSON and matches ids. The targets:
   WebSocket within 1.3x of stdio, Streamable HTTP within 2x.
2. Load: `--sessions` concurrent WebSocket connections, one session each, each streaming
   `--load-chunks` chunks at once, on one replica and then on two (same SQLite file), driven by two
   client processes. Wall time, p50/p99 chunk latency (emit to receipt), peak RSS of each replica.
3. Failover: two replicas on one SQLite file; a turn runs on A; A is SIGKILLed; the time from the
   kill to the first `session/update` replayed by B's `session/load` (reconnect included).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import os
import re
import signal
import sys
import tempfile
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import websockets
from _ws_raw import RawWebSocket

AGENT = Path(__file__).parent / "_remote_agent.py"
_SERVING = re.compile(rb"on (ws://127\.0\.0\.1:\d+/acp)")
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}


def _new(i: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "session/new",
        "params": {"cwd": tempfile.gettempdir(), "mcpServers": []},
    }


def _prompt(i: int, sid: str, text: str) -> dict[str, Any]:
    params = {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
    return {"jsonrpc": "2.0", "id": i, "method": "session/prompt", "params": params}


# --- servers ------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def serve(store: str) -> AsyncGenerator[tuple[asyncio.subprocess.Process, str]]:
    """`acpkit serve` of the bench agent on a free port; yields (process, ws url)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "acpkit_core.cli", "serve", str(AGENT), "--port", "0", "--max-connections", "5000",
        stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "BENCH_STORE": store},
    )  # fmt: skip
    assert process.stderr is not None
    url = None
    while line := await process.stderr.readline():
        if match := _SERVING.search(line):
            url = match.group(1).decode()
            break
    if url is None:
        raise RuntimeError("acpkit serve did not start")
    drain = asyncio.ensure_future(process.stderr.read())
    try:
        yield process, url
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGKILL)
        await process.wait()
        drain.cancel()


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# --- 1. per chunk -----------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """CPU time of every thread of process `pid` so far (the scheduler's, in ns: finer than clock ticks)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):
            total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


@dataclass
class Cost:
    """One timed prompt: wall seconds, the agent process's CPU seconds and this (client) process's."""

    wall: float
    agent: float
    client: float


class Timer:
    """Measures wall, agent CPU and client CPU around one prompt."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __enter__(self) -> Timer:
        self._agent, self._client = cpu_seconds(self.pid), time.process_time()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        wall = time.perf_counter() - self._wall
        self.cost = Cost(wall, cpu_seconds(self.pid) - self._agent, time.process_time() - self._client)


async def stdio_cost(chunks: int) -> Cost:
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(AGENT), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**24,
        env={**os.environ, "BENCH_STORE": "memory"},
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

    await call(INIT)
    sid = (await call(_new(1)))["result"]["sessionId"]
    await call(_prompt(2, sid, "10"))  # warm up
    with Timer(process.pid) as timer:
        await call(_prompt(3, sid, str(chunks)))
    stdin.close()
    await process.wait()
    return timer.cost


async def ws_raw_cost(pid: int, url: str, chunks: int) -> Cost:
    """Over WebSocket with the raw client (`_ws_raw.py`: splits frames as the stdio client splits lines)."""
    ws = await RawWebSocket.connect(url)

    async def call(message: dict[str, Any]) -> dict[str, Any]:
        ws.send_text(json.dumps(message))
        while True:
            frame = await ws.text()
            if b'"method"' in frame[:40]:
                continue
            answer = json.loads(frame)
            if answer.get("id") == message["id"]:
                return answer

    await call(INIT)
    sid = (await call(_new(1)))["result"]["sessionId"]
    await call(_prompt(2, sid, "10"))
    with Timer(pid) as timer:
        await call(_prompt(3, sid, str(chunks)))
    await ws.close()
    return timer.cost


async def ws_lib_cost(pid: int, url: str, chunks: int) -> Cost:
    """Over WebSocket with the `websockets` library's client (what a Python client would use)."""
    async with websockets.connect(url, max_size=None) as ws:

        async def call(message: dict[str, Any]) -> dict[str, Any]:
            await ws.send(json.dumps(message))
            while True:
                frame = await ws.recv()
                if '"method"' in frame[:40]:
                    continue
                answer = json.loads(frame)
                if answer.get("id") == message["id"]:
                    return answer

        await call(INIT)
        sid = (await call(_new(1)))["result"]["sessionId"]
        await call(_prompt(2, sid, "10"))
        with Timer(pid) as timer:
            await call(_prompt(3, sid, str(chunks)))
        return timer.cost


async def http_cost(pid: int, url: str, chunks: int) -> Cost:
    url = url.replace("ws://", "http://")
    async with httpx.AsyncClient(timeout=httpx.Timeout(60, read=None)) as http:
        first = await http.post(url, json=INIT)
        conn = {"Acp-Connection-Id": first.headers["Acp-Connection-Id"]}
        async with http.stream("GET", url, headers={**conn, "Accept": "text/event-stream"}) as stream:
            lines = stream.aiter_lines()

            async def call(message: dict[str, Any], session: str | None = None) -> dict[str, Any]:
                headers = {**conn, "Acp-Session-Id": session} if session else conn
                await http.post(url, json=message, headers=headers)
                async for line in lines:
                    if not line.startswith("data: ") or '"method"' in line[:46]:
                        continue
                    answer = json.loads(line[6:])
                    if answer.get("id") == message["id"]:
                        return answer
                raise RuntimeError("the stream ended")

            sid = (await call(_new(1)))["result"]["sessionId"]
            await call(_prompt(2, sid, "10"), sid)
            with Timer(pid) as timer:
                await call(_prompt(3, sid, str(chunks)), sid)
        await http.delete(url, headers=conn)
        return timer.cost


async def per_chunk(args: argparse.Namespace) -> None:
    names = ("stdio", "WebSocket", "WebSocket, websockets client", "Streamable HTTP")
    costs: dict[str, list[Cost]] = {name: [] for name in names}
    async with serve("memory") as (process, url):
        for _ in range(args.runs):
            costs["stdio"].append(await stdio_cost(args.chunks))
            costs["WebSocket"].append(await ws_raw_cost(process.pid, url, args.chunks))
            costs["WebSocket, websockets client"].append(await ws_lib_cost(process.pid, url, args.chunks))
            costs["Streamable HTTP"].append(await http_cost(process.pid, url, args.chunks))

    def best(name: str, part: str) -> float:
        return min(getattr(c, part) for c in costs[name]) / args.chunks * 1e6

    print(f"\n1. per streamed chunk: µs/chunk, best of {args.runs} runs of {args.chunks} chunks (x: vs stdio)")
    print("   wall: the prompt's wall time; agent: CPU of the agent process; client: CPU of the bench's client")
    print(f"   {'transport':<30}{'wall':>8}{'':>8}{'agent':>8}{'':>8}{'client':>8}{'':>8}{'target':>8}")
    targets = {"WebSocket": "1.3x", "Streamable HTTP": "2x"}
    for name in names:
        cells = ""
        for part in ("wall", "agent", "client"):
            value = best(name, part)
            cells += f"{value:>8.1f}{value / best('stdio', part):>7.2f}x"
        print(f"   {name:<30}{cells}{targets.get(name, ''):>8}")


# --- 2. load ------------------------------------------------------------------------------------


async def _one_session(url: str, chunks: int, latencies: list[float]) -> None:
    async with websockets.connect(url, max_size=None, open_timeout=120, ping_interval=None) as ws:

        async def call(message: dict[str, Any]) -> dict[str, Any]:
            await ws.send(json.dumps(message))
            while True:
                frame = await ws.recv()
                if '"agent_message_chunk"' in frame:
                    now = time.time()
                    stamp = json.loads(frame)["params"]["update"]["content"]["text"]
                    latencies.append(now - float(stamp))
                    continue
                if '"method"' in frame[:40]:
                    continue
                answer = json.loads(frame)
                if answer.get("id") == message["id"]:
                    return answer

        await call(INIT)
        sid = (await call(_new(1)))["result"]["sessionId"]
        answer = await call(_prompt(2, sid, str(chunks)))
        assert answer["result"]["stopReason"] == "end_turn", answer


def load_worker(urls: list[str], sessions: int, chunks: int) -> tuple[float, list[float]]:
    """One client process: `sessions` WebSocket sessions spread over `urls`; (wall seconds, latencies)."""

    async def run() -> tuple[float, list[float]]:
        latencies: list[float] = []
        start = time.perf_counter()
        await asyncio.gather(*(_one_session(urls[i % len(urls)], chunks, latencies) for i in range(sessions)))
        return time.perf_counter() - start, latencies

    return asyncio.run(run())


async def load(urls: list[str], sessions: int, chunks: int, clients: int = 2) -> tuple[float, list[float]]:
    loop = asyncio.get_running_loop()
    with concurrent.futures.ProcessPoolExecutor(clients) as pool:
        share = [sessions // clients + (1 if i < sessions % clients else 0) for i in range(clients)]
        start = time.perf_counter()
        results = await asyncio.gather(*(loop.run_in_executor(pool, load_worker, urls, n, chunks) for n in share if n))
        wall = time.perf_counter() - start
    return wall, [lat for _, lats in results for lat in lats]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


# --- 3. failover --------------------------------------------------------------------------------


async def failover(store: str) -> float:
    async with serve(store) as (a_proc, a_url), serve(store) as (_, b_url):
        async with websockets.connect(a_url) as ws:
            await ws.send(json.dumps(INIT))
            await ws.recv()
            await ws.send(json.dumps(_new(1)))
            sid = None
            while sid is None:
                message = json.loads(await ws.recv())
                if message.get("id") == 1:
                    sid = message["result"]["sessionId"]
            await ws.send(json.dumps(_prompt(2, sid, "20")))
            while json.loads(await ws.recv()).get("id") != 2:
                pass
            await ws.send(json.dumps(_prompt(3, sid, "sleep")))
            while '"agent_message_chunk"' not in await ws.recv():
                pass
            await asyncio.sleep(0.3)  # the store's flush interval
            killed = time.perf_counter()
            a_proc.send_signal(signal.SIGKILL)
        async with websockets.connect(b_url) as ws:
            await ws.send(json.dumps(INIT))
            await ws.recv()
            load = {"jsonrpc": "2.0", "id": 1, "method": "session/load",
                    "params": {"sessionId": sid, "cwd": tempfile.gettempdir(), "mcpServers": []}}  # fmt: skip
            await ws.send(json.dumps(load))
            while '"session/update"' not in await ws.recv():
                pass
            return time.perf_counter() - killed


# --- main ---------------------------------------------------------------------------------------


async def main(args: argparse.Namespace) -> None:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"remote bench: {os.cpu_count()} cores, load average {load}; chunks={args.chunks} runs={args.runs} "
          f"sessions={args.sessions}x{args.load_chunks}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ACPKIT_STATE_DIR"] = str(Path(tmp) / "state")
        if "1" in args.only:
            await per_chunk(args)

        if "2" in args.only:
            print(f"\n2. {args.sessions} concurrent WebSocket sessions x {args.load_chunks} chunks (2 client processes)")
            print(f"   {'replicas':<10}{'wall s':>8}{'chunks/s':>10}{'p50 ms':>9}{'p99 ms':>9}   peak RSS per replica")
            store = str(Path(tmp) / "load.sqlite3")
            for replicas in (1, 2):
                async with contextlib.AsyncExitStack() as stack:
                    servers = [await stack.enter_async_context(serve(store)) for _ in range(replicas)]
                    wall, lat = await load([u for _, u in servers], args.sessions, args.load_chunks)
                    rss = ", ".join(f"{peak_rss_mib(p.pid):.0f} MiB" for p, _ in servers)
                total = args.sessions * args.load_chunks
                assert len(lat) == total, (len(lat), total)
                print(
                    f"   {replicas:<10}{wall:>8.2f}{total / wall:>10.0f}{pct(lat, 0.5):>9.1f}{pct(lat, 0.99):>9.1f}   {rss}"
                )

        if "3" in args.only:
            seconds = await failover(str(Path(tmp) / "failover.sqlite3"))
            print(f"\n3. failover: SIGKILL of replica A to the first update replayed by B: {seconds * 1000:.0f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--load-chunks", type=int, default=100)
    parser.add_argument("--only", default="123", help="the figures to measure, e.g. `1` or `23`")
    parser.add_argument("--quick", action="store_true", help="small numbers: checks every figure runs")
    ns = parser.parse_args()
    if ns.quick:
        ns.chunks, ns.runs, ns.sessions, ns.load_chunks = 300, 1, 20, 10
    asyncio.run(main(ns))
