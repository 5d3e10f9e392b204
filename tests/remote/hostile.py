"""What the hostile-client tests share: a raised open-file limit, RSS of a process, half-open sockets."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import socket
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from urllib.parse import urlsplit


def raise_own_open_files(at_least: int) -> None:
    """Raise this process's soft open-file limit to its hard limit; fail when that is below `at_least`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert limit >= at_least, f"this test needs {at_least} open files; the hard limit is {hard} (ulimit -Hn)"


def open_files(soft: int, hard: int) -> Callable[[], None]:
    """A `preexec_fn` starting a child process with this open-file limit."""

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return apply


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    """The resident size of process `pid` (or its peak, with `VmHWM`), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} for process {pid}")


def fds(pid: int) -> int:
    """How many files process `pid` has open."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


@contextlib.asynccontextmanager
async def half_open(url: str, count: int, head: bytes = b"GET /acp HTTP/1.1\r\nHost: x\r\n") -> AsyncGenerator[int]:
    """`count` sockets that each send the start of a request head and then nothing; yields how many connected.

    They are held open (on this side) until the block ends, whatever the server does with them.
    """
    loop = asyncio.get_running_loop()
    address = host_port(url)
    held: list[socket.socket] = []

    async def one() -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        held.append(sock)
        with contextlib.suppress(OSError):
            await loop.sock_connect(sock, address)
            await loop.sock_sendall(sock, head)

    try:
        for start in range(0, count, 250):
            await asyncio.gather(*(one() for _ in range(min(250, count - start))))
        yield len(held)
    finally:
        for sock in held:
            sock.close()
