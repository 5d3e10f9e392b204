"""Remote ACP figures, side by side in one run: stdio vs WebSocket vs Streamable HTTP, load, replicas, failover.

Run: `uv run python bench/remote_bench.py` (`--quick` for a smoke run of every figure, `--only 1`
for some figures). The header prints the load average: wall times move with other jobs.

1. Per streamed chunk (µs/chunk, one prompt of `--chunks` chunks, best of `--runs` per column): the
   same agent (`bench/_remote_agent.py`) over stdio (`acpkit run`'s server), over WebSocket and over
   Streamable HTTP (`acpkit serve`), each with a client that only splits lines, frames
   (`_ws_raw.py`) or events and parses JSON; plus the `websockets` library's client, and WebSocket
   on a server that keeps no update log (`--reconnect-grace 0`: what the log costs per chunk). Columns: the
   prompt's wall time, the agent process's CPU time (per-thread `schedstat`), the client's CPU
   time; each also as a ratio to stdio. The targets: WebSocket within 1.3x of stdio, Streamable
   HTTP within 2x.
2. Load: `--sessions` concurrent WebSocket connections, one session each, each streaming
   `--load-chunks` chunks at once, on one replica and then on two (one SQLite file), driven by two
   client processes (raw WebSocket clients). Wall time, p50/p99 chunk latency (emit to receipt),
   peak RSS of each replica; then the CPU of each replica (per thread: the event loop, the store
   worker) and of each client process, the time they waited for a core, and the least wall time
   the machine's cores allow: max(all CPU / cores, the busiest thread's CPU).
3. Failover: two replicas on one SQLite file; a turn runs on A; A is SIGKILLed; the time from the
   kill to the first `session/update` replayed by B's `session/load` (reconnect included).
4. and 5. One replica, `--attack-sessions` WebSocket sessions streaming at once: time to first
   update and RSS per idle session, quiet and then under attack (2,000 half-open sockets, 10 clients
   that never read), with the peak RSS against the documented worst case (`bench/_attack.py`).
6. Reconnect: a proxy (the tests' `tests/remote/cutproxy.py`) cuts the client's TCP connection mid-turn (the server runs
   on); the reconnecting client (`ResumingTransport`) re-attaches with `session/resume` after the last
   update number it saw. Over WebSocket and Streamable HTTP, `--reconnect-runs` runs each: p50 and
   max of the time from the cut to the first missed update replayed, and the runs whose transcript
   has no gap (the update numbers the client saw are contiguous, every chunk there).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import itertools
import json
import os
import re
import signal
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "remote"))  # the tests' cutting proxy
from _attack import attack_figures
from _ws_raw import RawWebSocket
from acpkit_core.remote import ResumingTransport
from cutproxy import CutProxy, cut_proxy

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
async def serve(
    store: str, args: Sequence[str] = ("--max-connections", "5000")
) -> AsyncGenerator[tuple[asyncio.subprocess.Process, str]]:
    """`acpkit serve` of the bench agent on a free port; yields (process, ws url)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "acpkit_core.cli", "serve", str(AGENT), "--port", "0", *args,
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


def thread_schedstat(pid: int) -> dict[str, tuple[int, int]]:
    """Each thread of process `pid` so far: (ns on a CPU, ns runnable but waiting for one), by thread id.

    From the scheduler's per-thread `schedstat` (nanoseconds: finer than clock ticks).
    """
    out: dict[str, tuple[int, int]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError, ValueError):
            run, wait, _ = (task / "schedstat").read_text().split()
            out[task.name] = (int(run), int(wait))
    return out


def _spent(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> tuple[float, float]:
    """Seconds on a CPU and waiting for one between two readings, thread by thread (a thread that ended
    in between counts as not having run since: never a negative figure)."""
    cpu = queued = 0
    for tid, (run, wait) in after.items():
        run_0, wait_0 = before.get(tid, (0, 0))
        cpu, queued = cpu + run - run_0, queued + wait - wait_0
    return cpu / 1e9, queued / 1e9


@dataclass
class Cost:
    """One timed prompt, in seconds."""

    wall: float
    agent: float
    """CPU of the agent process."""
    client: float
    """CPU of this (the client's) process."""
    agent_queued: float
    """Time the agent process was runnable but waited for a core."""


class Timer:
    """Measures wall, agent CPU and client CPU around one prompt."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.cost = Cost(0.0, 0.0, 0.0, 0.0)

    def __enter__(self) -> Timer:
        self._agent, self._client = thread_schedstat(self.pid), thread_schedstat(os.getpid())
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        wall = time.perf_counter() - self._wall
        agent = _spent(self._agent, thread_schedstat(self.pid))
        client = _spent(self._client, thread_schedstat(os.getpid()))
        self.cost = Cost(wall, agent[0], client[0], agent[1])


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

    async def send(text: str) -> None:
        ws.send_text(text)

    cost = await _prompt_cost(pid, chunks, send, ws.text)
    await ws.close()
    return cost


async def ws_lib_cost(pid: int, url: str, chunks: int) -> Cost:
    """Over WebSocket with the `websockets` library's client (what a Python client would use)."""
    async with websockets.connect(url, max_size=None) as ws:

        async def recv() -> str | bytes:
            return await ws.recv()

        return await _prompt_cost(pid, chunks, ws.send, recv)


def _holds(frame: str | bytes, needle: str) -> bool:
    """Whether `needle` is in the frame, read as text or as bytes."""
    return needle.encode() in frame if isinstance(frame, bytes) else needle in frame


async def _answer(
    recv: Callable[[], Awaitable[str | bytes]],
    request_id: int,
    *,
    on_chunk: Callable[[str | bytes], None] | None = None,
) -> dict[str, Any]:
    """Read frames until the answer to `request_id`; notifications are skipped, or handed to
    `on_chunk` when they carry an agent message chunk."""
    while True:
        frame = await recv()
        if on_chunk is not None and _holds(frame, '"agent_message_chunk"'):
            on_chunk(frame)
            continue
        if _holds(frame[:40], '"method"'):
            continue
        answer = json.loads(frame)
        if answer.get("id") == request_id:
            return answer


async def _prompt_cost(
    pid: int, chunks: int, send: Callable[[str], Awaitable[None]], recv: Callable[[], Awaitable[str | bytes]]
) -> Cost:
    """Initialize, open a session, warm up, then time one prompt of `chunks` chunks over one frame connection."""

    async def call(message: dict[str, Any]) -> dict[str, Any]:
        await send(json.dumps(message))
        return await _answer(recv, message["id"])

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


async def per_chunk(args: argparse.Namespace, sqlite: str) -> None:
    unlogged, on_sqlite = "WebSocket, no update log", "WebSocket, SQLite store"
    names = ("stdio", "WebSocket", unlogged, on_sqlite, "WebSocket, websockets client", "Streamable HTTP")
    costs: dict[str, list[Cost]] = {name: [] for name in names}
    plain = ("--max-connections", "5000", "--reconnect-grace", "0")
    async with (
        serve("memory") as (process, url),
        serve("memory", plain) as (process_0, url_0),
        serve(sqlite) as (process_s, url_s),
    ):
        for _ in range(args.runs):
            costs["stdio"].append(await stdio_cost(args.chunks))
            costs["WebSocket"].append(await ws_raw_cost(process.pid, url, args.chunks))
            costs[unlogged].append(await ws_raw_cost(process_0.pid, url_0, args.chunks))
            costs[on_sqlite].append(await ws_raw_cost(process_s.pid, url_s, args.chunks))
            costs["WebSocket, websockets client"].append(await ws_lib_cost(process.pid, url, args.chunks))
            costs["Streamable HTTP"].append(await http_cost(process.pid, url, args.chunks))

    def best(name: str, part: str) -> float:
        return min(getattr(c, part) for c in costs[name]) / args.chunks * 1e6

    print(f"\n1. per streamed chunk: µs/chunk, best of {args.runs} runs of {args.chunks} chunks (x: vs stdio)")
    print("   wall: the prompt's wall time; agent: CPU of the agent process; client: CPU of the bench's client;")
    print("   queued: how long the agent waited for a core in the run with the best wall (wall ~ agent + queued")
    print('   when the agent sets the pace); "no update log": the same server with `--reconnect-grace 0`, so the')
    print("   updates of a turn are not numbered and logged for a client that reconnects (the default logs them);")
    print('   every row keeps the memory store but "SQLite store": the default store, whose worker thread writes')
    print("   the turn's log and transcript as they stream")
    head = f"{'wall':>8}{'':>8}{'agent':>8}{'':>8}{'client':>8}{'':>8}{'queued':>8}{'target':>8}"
    print(f"   {'transport':<30}{head}")
    targets = {"WebSocket": "1.3x", "Streamable HTTP": "2x"}
    for name in names:
        cells = ""
        for part in ("wall", "agent", "client"):
            value = best(name, part)
            cells += f"{value:>8.1f}{value / best('stdio', part):>7.2f}x"
        queued = min(costs[name], key=lambda c: c.wall).agent_queued / args.chunks * 1e6
        print(f"   {name:<30}{cells}{queued:>8.1f}{targets.get(name, ''):>8}")


# --- 2. load ------------------------------------------------------------------------------------


def thread_times(pid: int) -> dict[str, tuple[float, float]]:
    """Each thread of `pid` by `tid:name`: (seconds on a CPU, seconds runnable but waiting for one) so far."""
    out: dict[str, tuple[float, float]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):
            name = (task / "comm").read_text().strip()
            run, wait, _ = (task / "schedstat").read_text().split()
            out[f"{task.name}:{name}"] = (int(run) / 1e9, int(wait) / 1e9)
    return out


def _since(after: dict[str, tuple[float, float]], before: dict[str, tuple[float, float]]) -> dict[str, Times]:
    return {k: Times(a[0] - before.get(k, (0, 0))[0], a[1] - before.get(k, (0, 0))[1]) for k, a in after.items()}


@dataclass
class Times:
    cpu: float
    """Seconds on a CPU."""
    queued: float
    """Seconds runnable but waiting for a CPU (the other processes had them)."""


async def _one_session(url: str, chunks: int, latencies: list[float]) -> None:
    for attempt in range(50):  # 500 connections at once can overflow the listen backlog: retry
        try:
            ws = await RawWebSocket.connect(url)
            break
        except (ConnectionError, OSError):
            if attempt == 49:
                raise
            await asyncio.sleep(0.05)

    def chunk(frame: str | bytes) -> None:
        now = time.time()
        stamp = json.loads(frame)["params"]["update"]["content"]["text"]
        latencies.append(now - float(stamp))

    async def call(message: dict[str, Any]) -> dict[str, Any]:
        ws.send_text(json.dumps(message))
        return await _answer(ws.text, message["id"], on_chunk=chunk)

    await call(INIT)
    sid = (await call(_new(1)))["result"]["sessionId"]
    answer = await call(_prompt(2, sid, str(chunks)))
    assert answer["result"]["stopReason"] == "end_turn", answer
    await ws.close()


def load_worker(urls: list[str], sessions: int, chunks: int) -> tuple[float, dict[str, Times], list[float]]:
    """One client process: `sessions` WebSocket sessions spread over `urls`; (wall s, its threads, latencies)."""

    async def run() -> tuple[float, dict[str, Times], list[float]]:
        latencies: list[float] = []
        before, start = thread_times(os.getpid()), time.perf_counter()
        await asyncio.gather(*(_one_session(urls[i % len(urls)], chunks, latencies) for i in range(sessions)))
        return time.perf_counter() - start, _since(thread_times(os.getpid()), before), latencies

    return asyncio.run(run())


def _warm(_: int) -> int:
    return os.getpid()


@dataclass
class LoadRun:
    wall: float
    latencies: list[float]
    replicas: list[dict[str, Times]]
    """Each replica's threads during the load."""
    clients: list[dict[str, Times]]
    """Each client process's threads during the load."""
    main: set[str]
    """The replicas' main threads (their event loops)."""


async def load(
    servers: list[tuple[asyncio.subprocess.Process, str]], sessions: int, chunks: int, clients: int = 2
) -> LoadRun:
    loop = asyncio.get_running_loop()
    urls = [u for _, u in servers]
    with concurrent.futures.ProcessPoolExecutor(clients) as pool:
        await asyncio.gather(*(loop.run_in_executor(pool, _warm, i) for i in range(clients)))  # started, not timed
        share = [sessions // clients + (1 if i < sessions % clients else 0) for i in range(clients)]
        before = [thread_times(p.pid) for p, _ in servers]
        start = time.perf_counter()
        results = await asyncio.gather(*(loop.run_in_executor(pool, load_worker, urls, n, chunks) for n in share if n))
        wall = time.perf_counter() - start
        after = [thread_times(p.pid) for p, _ in servers]
    replicas = [_since(a, b) for a, b in zip(after, before, strict=True)]
    main = {k for (p, _), threads in zip(servers, replicas, strict=True) for k in threads if k.startswith(f"{p.pid}:")}
    return LoadRun(wall, [lat for *_, lats in results for lat in lats], replicas, [t for _, t, _ in results], main)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _cpu(threads: dict[str, Times]) -> float:
    return sum(t.cpu for t in threads.values())


async def load_figures(args: argparse.Namespace, store: str) -> None:
    cores = os.cpu_count() or 1
    total = args.sessions * args.load_chunks
    print(f"\n2. {args.sessions} concurrent WebSocket sessions x {args.load_chunks} chunks (2 client processes, raw")
    print(f"   WebSocket clients), best of {args.load_runs} by wall time")
    print(f"   {'replicas':<10}{'wall s':>8}{'chunks/s':>10}{'p50 ms':>9}{'p99 ms':>9}   peak RSS per replica")
    runs: list[LoadRun] = []
    for replicas in (1, 2):
        best: LoadRun | None = None
        for i in range(args.load_runs):
            async with contextlib.AsyncExitStack() as stack:
                servers = [await stack.enter_async_context(serve(f"{store}.{replicas}.{i}")) for _ in range(replicas)]
                run = await load(servers, args.sessions, args.load_chunks)
                rss = ", ".join(f"{peak_rss_mib(p.pid):.0f} MiB" for p, _ in servers)
            assert len(run.latencies) == total, (len(run.latencies), total)
            if best is None or run.wall < best.wall:
                best, best_rss = run, rss
        assert best is not None
        runs.append(best)
        p50, p99 = pct(best.latencies, 0.5), pct(best.latencies, 0.99)
        print(f"   {replicas:<10}{best.wall:>8.2f}{total / best.wall:>10.0f}{p50:>9.1f}{p99:>9.1f}   {best_rss}")

    print(f"\n   Where the time went (seconds). bound: the least wall time {cores} cores allow = the larger of")
    print(f"   all CPU / {cores} and the busiest thread's CPU (a thread runs on one core at a time);")
    print("   queued: time threads were runnable but every core was taken (by us or by other jobs)")
    head = f"{'replica CPU':>19}{'client CPU':>14}{'all CPU':>9}{'bound':>7}{'wall':>7}{'queued':>8}"
    print(f"   {'replicas':<10}{head}")
    bounds: list[float] = []
    for replicas, run in enumerate(runs, 1):
        procs = run.replicas + run.clients
        busiest = max(t.cpu for threads in procs for t in threads.values())
        cpu = sum(_cpu(threads) for threads in procs)
        bound = max(cpu / cores, busiest)
        bounds.append(bound)
        queued = sum(t.queued for threads in procs for t in threads.values())
        rep = " + ".join(f"{_cpu(t):.2f}" for t in run.replicas)
        cli = " + ".join(f"{_cpu(t):.2f}" for t in run.clients)
        print(f"   {replicas:<10}{rep:>19}{cli:>14}{cpu:>9.2f}{bound:>7.2f}{run.wall:>7.2f}{queued:>8.2f}")
    print("   each replica's threads: CPU / queued / idle (= wall - CPU - queued: asleep, waiting for the")
    print("   clients, the disk or a lock); the event loop is the process's main thread, the rest store workers")
    for replicas, run in enumerate(runs, 1):
        for i, threads in enumerate(run.replicas):
            parts: list[str] = []
            for key, t in sorted(threads.items(), key=lambda kv: -kv[1].cpu):
                if t.cpu:
                    idle = run.wall - t.cpu - t.queued
                    parts.append(f"{'loop' if key in run.main else 'worker'} {t.cpu:.2f}/{t.queued:.2f}/{idle:.2f}")
            print(f"   {replicas} replica(s), replica {i + 1}: {', '.join(parts)}")
    print(
        f"   two replicas / one: wall {runs[1].wall / runs[0].wall:.2f}x, "
        f"bound {bounds[1] / bounds[0]:.2f}x (0.50x would be halving)"
    )


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


# --- 6. reconnect -------------------------------------------------------------------------------

RECONNECT_CHUNKS = 100
"""Chunks of each cut turn, `RECONNECT_PAUSE_MS` apart (about half a second of streaming)."""
RECONNECT_PAUSE_MS = 5
RECONNECT_CUT_AFTER = 30
"""The connection is cut as the client receives this chunk of the turn."""
SEQ = "acpkit.seq"


class NotingTransport(ResumingTransport):
    """The reconnecting client transport, noting the last update number it had from each connection
    when it found that connection dropped (what came after is replayed by the next one)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.seen_at_drop: list[dict[str, int]] = []

    async def _reconnect(self, old: Any) -> None:
        self.seen_at_drop.append(dict(self.last_seq))  # nothing more is taken from the old connection
        await super()._reconnect(old)


async def _received(transport: ResumingTransport) -> dict[str, Any]:
    message = await transport.receive()
    if message is None:
        raise RuntimeError("the reconnecting transport gave up")
    return message


@dataclass
class Reconnect:
    """One cut turn."""

    replayed: float
    """Seconds from the cut to the first update numbered after the last one the cut connection gave."""
    whole: bool
    """The update numbers the client saw are contiguous (after dedupe) and every chunk is there."""


async def reconnect_run(
    transport: NotingTransport, proxy: CutProxy, ids: itertools.count[int], prompt: str, cut_after: int | None
) -> Reconnect:
    """A fresh session's turn of `prompt`; the connection is cut as its chunk `cut_after` arrives."""
    new = _new(next(ids))
    await transport.send(new)
    while (answer := await _received(transport)).get("id") != new["id"]:
        pass
    sid = answer["result"]["sessionId"]
    request = _prompt(next(ids), sid, prompt)
    await transport.send(request)
    seqs: set[int] = set()
    chunks = 0
    cut_at = replayed = None
    drops = len(transport.seen_at_drop)
    while (message := await _received(transport)).get("id") != request["id"]:
        params = message.get("params") or {}
        if message.get("method") != "session/update" or params.get("sessionId") != sid:
            continue
        seq = (params.get("_meta") or {}).get(SEQ)
        if not isinstance(seq, int) or seq in seqs:
            continue
        now = time.perf_counter()
        seqs.add(seq)
        chunks += params["update"]["sessionUpdate"] == "agent_message_chunk"
        if cut_at is None and chunks == cut_after:
            cut_at = now
            proxy.cut()
        elif (
            cut_at is not None
            and replayed is None
            and len(transport.seen_at_drop) > drops
            and seq > transport.seen_at_drop[drops].get(sid, 0)
        ):
            replayed = now - cut_at
    assert message.get("result", {}).get("stopReason") == "end_turn", message
    if cut_after is not None and replayed is None:
        raise RuntimeError("the cut connection was not replaced, or nothing was replayed")
    expected = int(prompt.split()[0])
    whole = bool(seqs) and sorted(seqs) == list(range(min(seqs), max(seqs) + 1)) and chunks == expected
    return Reconnect(replayed or 0.0, whole)


async def reconnect_figures(args: argparse.Namespace, store: str) -> None:
    cut, chunks, pause = RECONNECT_CUT_AFTER, RECONNECT_CHUNKS, RECONNECT_PAUSE_MS
    prompt = f"{chunks} pause {pause}"
    print(f"\n6. reconnect: a proxy cuts the client's TCP connection mid-turn (the server runs on), as chunk {cut}")
    print(f"   of {chunks} ({pause} ms apart) arrives; the client (`ResumingTransport`) reconnects, sends `initialize`")
    print("   and `session/resume` after the last update number it saw.")
    print(f"   replayed: ms from the cut to the first missed update arriving, over {args.reconnect_runs} runs; no gap:")
    print("   runs whose update numbers are contiguous (after dedupe) with every chunk there; reconnects: the")
    print("   connections the client re-established (one per cut)")
    print(f"   {'transport':<20}{'p50 ms':>9}{'max ms':>9}{'no gap':>9}{'reconnects':>12}")
    async with serve(store) as (_, url):
        target = urlparse(url)
        async with cut_proxy(target.hostname or "127.0.0.1", target.port or 0) as proxy:
            for name, scheme in (("WebSocket", "ws"), ("Streamable HTTP", "http")):
                transport = await NotingTransport(proxy.url(scheme)).start()
                try:
                    ids = itertools.count(1)
                    await transport.send(INIT)
                    while (await _received(transport)).get("id") != INIT["id"]:
                        pass
                    await reconnect_run(transport, proxy, ids, "10", None)  # warm up, no cut
                    runs = [
                        await asyncio.wait_for(reconnect_run(transport, proxy, ids, prompt, cut), 60)
                        for _ in range(args.reconnect_runs)
                    ]
                finally:
                    await transport.close()
                replayed = [r.replayed for r in runs]
                whole = f"{sum(r.whole for r in runs)}/{len(runs)}"
                p50, worst = pct(replayed, 0.5), max(replayed) * 1000
                print(f"   {name:<20}{p50:>9.1f}{worst:>9.1f}{whole:>9}{transport.reconnects:>12}")


# --- main ---------------------------------------------------------------------------------------


async def main(args: argparse.Namespace) -> None:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"remote bench: {os.cpu_count()} cores, load average {load}; chunks={args.chunks} runs={args.runs} "
          f"sessions={args.sessions}x{args.load_chunks}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ACPKIT_STATE_DIR"] = str(Path(tmp) / "state")
        if "1" in args.only:
            await per_chunk(args, str(Path(tmp) / "chunks.sqlite3"))

        if "2" in args.only:
            await load_figures(args, str(Path(tmp) / "load.sqlite3"))

        if "3" in args.only:
            seconds = await failover(str(Path(tmp) / "failover.sqlite3"))
            print(f"\n3. failover: SIGKILL of replica A to the first update replayed by B: {seconds * 1000:.0f} ms")

        if "4" in args.only or "5" in args.only:
            await attack_figures(args, serve, str(Path(tmp) / "attack.sqlite3"))

        if "6" in args.only:
            await reconnect_figures(args, str(Path(tmp) / "reconnect.sqlite3"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--load-chunks", type=int, default=100)
    parser.add_argument("--load-runs", type=int, default=2)
    parser.add_argument("--attack-sessions", type=int, default=1000)
    parser.add_argument("--attack-chunks", type=int, default=20)
    parser.add_argument("--attack-runs", type=int, default=2)
    parser.add_argument("--reconnect-runs", type=int, default=20)
    parser.add_argument("--only", default="123456", help="the figures to measure, e.g. `1` or `23`")
    parser.add_argument("--quick", action="store_true", help="small numbers: checks every figure runs")
    ns = parser.parse_args()
    if ns.quick:
        ns.chunks, ns.runs, ns.sessions, ns.load_chunks, ns.load_runs = 300, 1, 20, 10, 1
        ns.attack_sessions, ns.attack_chunks, ns.attack_runs, ns.reconnect_runs = 50, 5, 1, 3
    asyncio.run(main(ns))
