"""Start `acpkit serve` processes for tests and benchmarks (a real subprocess each, port 0)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

TARGET = Path(__file__).parent / "agents" / "replica_target.py"
LANGGRAPH_TARGET = Path(__file__).parent / "agents" / "langgraph_target.py"
_SERVING = re.compile(rb"on (ws://127\.0\.0\.1:\d+/acp)")


@dataclass
class Replica:
    """One running `acpkit serve`."""

    process: asyncio.subprocess.Process
    url: str
    stderr: bytearray

    @property
    def http_url(self) -> str:
        return self.url.replace("ws://", "http://")


async def _read_stderr(process: asyncio.subprocess.Process, into: bytearray, ready: asyncio.Future[str]) -> None:
    assert process.stderr is not None
    while line := await process.stderr.readline():
        into += line
        match = _SERVING.search(line)
        if match and not ready.done():
            ready.set_result(match.group(1).decode())
    if not ready.done():
        ready.set_exception(RuntimeError(f"acpkit serve exited: {into.decode(errors='replace')}"))


@contextlib.asynccontextmanager
async def replica(
    store: str,
    *,
    args: Sequence[str] = (),
    env: dict[str, str] | None = None,
    timeout: float = 90,
    target: str | Path | None = TARGET,
    preexec_fn: Callable[[], None] | None = None,
) -> AsyncGenerator[Replica]:
    """`acpkit serve` of `target` (the replica target by default) on `store`; killed (if still running) on exit.

    `target=None`: no target (`args` ends with `-- CMD ARGS...`).
    """
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acpkit_core.cli",
        "serve",
        *([str(target)] if target is not None else []),
        "--port",
        "0",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "REPLICA_STORE": store, **(env or {})},
        preexec_fn=preexec_fn,
    )
    stderr = bytearray()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    reader = asyncio.ensure_future(_read_stderr(process, stderr, ready))
    try:
        url = await asyncio.wait_for(ready, timeout)
        yield Replica(process=process, url=url, stderr=stderr)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGKILL)
        await process.wait()
        await reader
