"""Figures 4 and 5 of `remote_bench.py`: many WebSocket sessions on one replica, quiet and under attack.

4. One replica, `--attack-sessions` (1,000) WebSocket sessions from two client processes, all
   prompting at once, each streaming `--attack-chunks` chunks: p50/p99 time to first update (from
   the prompt sent to its first chunk received), wall time, and RSS per idle session (the replica's
   growth once every session is open, before any prompt, divided by their number).
5. The same load while 2,000 half-open sockets (each sent `GET /acp HTTP/1.1` and a header, then
   nothing) and 10 WebSocket clients that never read (each asked for a million chunks) attack the
   replica: the honest clients' p50/p99 (target: p99 within 2x of the quiet run) and the replica's
   peak RSS against the worst case its limits allow (`Limits.memory_bound`, docs/remote.md).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import multiprocessing
import os
import resource
import socket
import tempfile
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from _ws_raw import RawWebSocket

INIT: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}},
}
HALF_OPEN = 2000
NEVER_READING = 10
MAX_CONNECTIONS = 1100
"""The replica's --max-connections in these figures: the sessions, the never-reading clients, room to spare."""


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def raise_open_files() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _prompt(request_id: int, sid: str, text: str) -> str:
    params = {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params})


async def _answer(ws: RawWebSocket, request_id: int) -> dict[str, Any]:
    while True:
        frame = await ws.text()
        if b'"method"' in frame[:40]:
            continue
        message = json.loads(frame)
        if message.get("id") == request_id:
            return message


async def _connect(url: str, receive_buffer: int | None) -> RawWebSocket:
    for _ in range(99):  # a burst of connections can overflow the listen backlog: retry
        try:
            return await RawWebSocket.connect(url, receive_buffer=receive_buffer)
        except (ConnectionError, OSError):
            await asyncio.sleep(0.05)
    return await RawWebSocket.connect(url, receive_buffer=receive_buffer)


async def _open(url: str, receive_buffer: int | None = None) -> tuple[RawWebSocket, str]:
    ws = await _connect(url, receive_buffer)
    ws.send_text(json.dumps(INIT))
    await _answer(ws, 0)
    params: dict[str, Any] = {"cwd": tempfile.gettempdir(), "mcpServers": []}
    ws.send_text(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params}))
    return ws, (await _answer(ws, 1))["result"]["sessionId"]


async def _stream(ws: RawWebSocket, sid: str, chunks: int) -> float:
    """Prompt for `chunks` chunks; seconds from the prompt sent to its first chunk received."""
    sent = time.perf_counter()
    ws.send_text(_prompt(2, sid, str(chunks)))
    first: float | None = None
    while True:
        frame = await ws.text()
        if first is None and b'"agent_message_chunk"' in frame:
            first = time.perf_counter() - sent
        if b'"method"' in frame[:40]:
            continue
        answer = json.loads(frame)
        if answer.get("id") == 2:
            assert answer["result"]["stopReason"] == "end_turn", answer
            assert first is not None
            return first


def _worker(url: str, sessions: int, chunks: int, ready: Any, go: Any) -> list[float]:
    """One client process: open `sessions` sessions, say so, wait for the go, stream them all at once."""

    async def run() -> list[float]:
        opened = [await _open(url) for _ in range(sessions)]
        ready.put(os.getpid())
        while not go.is_set():
            await asyncio.sleep(0.01)
        firsts = await asyncio.gather(*(_stream(ws, sid, chunks) for ws, sid in opened))
        for ws, _ in opened:
            await ws.close()
        return list(firsts)

    raise_open_files()
    return asyncio.run(run())


@dataclass
class Run:
    firsts: list[float]
    wall: float
    idle_session_kib: float
    peak_mib: float
    idle_mib: float


async def _never_reading(url: str) -> RawWebSocket:
    """A WebSocket client with a 4 KiB window that asks for a million chunks and then reads nothing."""
    ws, sid = await _open(url, receive_buffer=4096)
    ws.send_text(_prompt(2, sid, "1000000"))
    return ws


@contextlib.asynccontextmanager
async def _attack(url: str) -> AsyncGenerator[None]:
    """2,000 half-open sockets and 10 never-reading clients, held for the duration of the block."""
    loop = asyncio.get_running_loop()
    parts = urlsplit(url)
    address = (parts.hostname, parts.port)
    held: list[socket.socket] = []

    async def half_open() -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        held.append(sock)
        with contextlib.suppress(OSError):
            await loop.sock_connect(sock, address)
            await loop.sock_sendall(sock, b"GET /acp HTTP/1.1\r\nHost: x\r\n")

    for start in range(0, HALF_OPEN, 250):
        await asyncio.gather(*(half_open() for _ in range(min(250, HALF_OPEN - start))))
    stalled = [await _never_reading(url) for _ in range(NEVER_READING)]
    await asyncio.sleep(1.0)  # their turns run until the buffers in front of them are full
    try:
        yield
    finally:
        for sock in held:
            sock.close()
        for ws in stalled:
            ws.writer.transport.abort()


async def one_run(process: asyncio.subprocess.Process, url: str, sessions: int, chunks: int, attacked: bool) -> Run:
    loop = asyncio.get_running_loop()
    pid = process.pid
    with multiprocessing.Manager() as manager, concurrent.futures.ProcessPoolExecutor(2) as pool:
        ready, go = manager.Queue(), manager.Event()
        await asyncio.sleep(0.5)
        idle = rss_mib(pid)
        share = [sessions // 2 + (1 if i < sessions % 2 else 0) for i in range(2)]
        futures = [loop.run_in_executor(pool, _worker, url, n, chunks, ready, go) for n in share]
        for _ in share:
            await loop.run_in_executor(None, ready.get)
        await asyncio.sleep(0.5)
        per_session = (rss_mib(pid) - idle) * 1024 / sessions
        async with _attack(url) if attacked else contextlib.nullcontext():
            start = time.perf_counter()
            go.set()
            results = await asyncio.gather(*futures)
            wall = time.perf_counter() - start
            peak = rss_mib(pid, "VmHWM")
    return Run([f for r in results for f in r], wall, per_session, peak, idle)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def attack_figures(args: Any, serve: Any, store: str) -> None:
    """Print figures 4 and 5 (`serve` is remote_bench's server context manager)."""
    from acpkit_core.remote import ServeOptions

    raise_open_files()
    sessions, chunks = args.attack_sessions, args.attack_chunks
    extra = ["--max-connections", str(MAX_CONNECTIONS)]
    runs: dict[str, Run] = {}
    for i in range(args.attack_runs):  # quiet and attacked in turns; the best p99 of each is kept
        for name, attacked in (("quiet", False), ("attacked", True)):
            async with serve(f"{store}.{name}.{i}", extra) as (process, url):
                run = await one_run(process, url, sessions, chunks, attacked)
            if name not in runs or pct(run.firsts, 0.99) < pct(runs[name].firsts, 0.99):
                runs[name] = run
    quiet, attacked_run = runs["quiet"], runs["attacked"]
    limits = ServeOptions(max_connections=MAX_CONNECTIONS).limits(max_message_bytes=32 * 2**20)
    bound = limits.memory_bound(int(attacked_run.idle_mib * 2**20), largest_message=1024) / 2**20

    print(f"\n4. one replica, {sessions} concurrent WebSocket sessions x {chunks} chunks (2 client processes),")
    print(f"   best of {args.attack_runs} by p99")
    print("   time to first update: from the prompt sent to its first chunk received")
    print(f"   {'run':<10}{'p50 ms':>9}{'p99 ms':>9}{'wall s':>8}{'idle session':>14}{'peak RSS':>10}")
    for name, run in runs.items():
        p50, p99 = pct(run.firsts, 0.5), pct(run.firsts, 0.99)
        print(f"   {name:<10}{p50:>9.1f}{p99:>9.1f}{run.wall:>8.2f}{run.idle_session_kib:>10.1f} KiB"
              f"{run.peak_mib:>6.0f} MiB")  # fmt: skip
    ratio = pct(attacked_run.firsts, 0.99) / pct(quiet.firsts, 0.99)
    print(f"\n5. the same load while {HALF_OPEN} half-open sockets and {NEVER_READING} never-reading clients attack:")
    print(f"   honest clients' p99 time to first update {ratio:.2f}x the quiet run's (target: within 2x)")
    print(f"   peak RSS {attacked_run.peak_mib:.0f} MiB; the formula's worst case for these limits "
          f"({MAX_CONNECTIONS} connections, defaults otherwise) {bound:.0f} MiB")  # fmt: skip
