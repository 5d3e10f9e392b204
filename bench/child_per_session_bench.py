"""`acpkit serve -- CMD`: one child per connection vs one child per session, side by side in one run.

Run: `uv run python bench/child_per_session_bench.py` (`--sessions 8`). One WebSocket connection
opens `--sessions` sessions of the bare-SDK test agent (`tests/remote/agents/sdk_child_agent.py`)
and prompts each once, under `--child-per connection` and then `--child-per session`. Columns:
the median `session/new` time (a new child's start and its replayed `initialize` with
`session`), the median first prompt, the processes the server runs, and their total RSS (the
server's children, from `/proc`). The header prints the load average: wall times move with other jobs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
from pathlib import Path

from acpkit_core.testing import AcpTestClient

CHILD = Path(__file__).resolve().parents[1] / "tests" / "remote" / "agents" / "sdk_child_agent.py"
_SERVING = re.compile(rb"on (ws://127\.0\.0\.1:\d+/acp)")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def measure(child_per: str, sessions: int) -> tuple[float, float, int, float]:
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "acpkit_core.cli", "serve", "--port", "0", "--child-per", child_per, "--max-sessions", "1000"),
        *("--", sys.executable, str(CHILD)),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert server.stderr is not None
    url = ""
    while not url:
        line = await asyncio.wait_for(server.stderr.readline(), 60)
        assert line, "acpkit serve exited"
        if match := _SERVING.search(line):
            url = match.group(1).decode()
    try:
        async with AcpTestClient.connect_url(url) as client:
            await client.initialize()
            opened: list[float] = []
            prompted: list[float] = []
            ids: list[str] = []
            for _ in range(sessions):
                start = time.perf_counter()
                opened_session = await client.c.new_session(cwd=str(client.root), mcp_servers=[])  # no settle wait
                ids.append(opened_session.session_id)
                opened.append(time.perf_counter() - start)
            for sid in ids:
                start = time.perf_counter()
                await client.prompt("hello", session_id=sid)
                prompted.append(time.perf_counter() - start)
            children = _children(server.pid)
            rss = sum(_rss_mib(pid) for pid in children)
        return statistics.median(opened) * 1000, statistics.median(prompted) * 1000, len(children), rss
    finally:
        server.terminate()
        await server.wait()


async def main(args: argparse.Namespace) -> None:
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores, {args.sessions} sessions on one connection")
    print(f"{'child per':<12}{'session/new ms':>16}{'first prompt ms':>17}{'processes':>11}{'children RSS MiB':>18}")
    for child_per in ("connection", "session"):
        opened, prompted, processes, rss = await measure(child_per, args.sessions)
        print(f"{child_per:<12}{opened:>16.1f}{prompted:>17.1f}{processes:>11}{rss:>18.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    asyncio.run(main(parser.parse_args()))
