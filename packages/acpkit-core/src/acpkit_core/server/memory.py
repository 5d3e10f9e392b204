"""Giving memory back to the system after a turn that carried a big prompt or history.

A 20 MB prompt leaves, once its turn is over, garbage held in reference cycles (LangGraph's
tasks and frames) and, with glibc's default allocator settings, tens of megabytes of freed
blocks the allocator keeps for later: after freeing one big block glibc raises its mmap and trim
thresholds to that block's size (up to 32 MB and 64 MB), so later big blocks come from its heaps,
whose free tops `malloc_trim` does not return for the heaps of other threads.

So a process that serves an agent fixes glibc's mmap threshold at 1 MiB
([`limit_retained_memory`][acpkit_core.server.memory.limit_retained_memory]: a block that big is
always its own mapping, returned to the system when freed), and after a turn that carried a big
prompt or grew the process, the server collects the cycles and asks `malloc_trim` to return free
pages ([`release_memory`][acpkit_core.server.memory.release_memory], shortly after the response,
once the request's own references are gone: a full collection takes tens of milliseconds, paid
only after such turns). The process then shrinks back to about its size before the prompt.
Elsewhere than glibc only the collection runs.

Growth counts only for a turn that ran alone in the process ([`turn_began`][acpkit_core.server.memory.turn_began],
[`turn_grew`][acpkit_core.server.memory.turn_grew]): when turns overlap (a server with many
connections) the process grows with all of them and no one turn is the cause. And a release waits
until the time since the last one is `1 / RELEASE_TIME_SHARE` times what that one took, so
releasing never takes more than that share of the process's time (a full collection of a big
server's heap takes a quarter of a second).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import os
import sys
import time
from typing import Any

__all__ = [
    "MMAP_THRESHOLD",
    "RELEASE_AFTER_BYTES",
    "RELEASE_AFTER_GROWTH",
    "RELEASE_TIME_SHARE",
    "limit_retained_memory",
    "release_memory",
    "release_memory_soon",
    "resident_bytes",
    "turn_began",
    "turn_grew",
]

RELEASE_AFTER_BYTES = 4_000_000
"""A prompt at least this big (text, data and resource content, as the size limit counts it)
releases memory once its turn is over."""

RELEASE_AFTER_GROWTH = 16 * 1024 * 1024
"""So does a turn during which the process grew by at least this many bytes (where the resident
size can be read: Linux), whatever made it grow (a big tool result, a big message read back)."""

RELEASE_TIME_SHARE = 0.02
"""Releases take at most this share of the process's time (the next one waits as needed)."""

MMAP_THRESHOLD = 1024 * 1024
"""glibc's `M_MMAP_THRESHOLD` in a serving process: blocks this big are mapped on their own."""

_M_MMAP_THRESHOLD = -3
"""`mallopt` parameter number (glibc's malloc.h)."""

_DELAY_S = 0.1
"""How long after the turn the release runs (the response and the request are gone by then)."""


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        try:  # glibc's name: loading it costs nothing (it is loaded), where `find_library` runs `ldconfig`
            libc = ctypes.CDLL("libc.so.6")
        except OSError:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim.argtypes = [ctypes.c_size_t]  # glibc only: musl has no malloc_trim
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()
_limited = False
_pending: set[asyncio.AbstractEventLoop] = set()
_next_release = 0.0
"""`time.monotonic()` before which a release waits (set from the last one's duration)."""
_running_turns = 0
_turn_starts = 0


def limit_retained_memory() -> None:
    """Fix glibc's mmap threshold (once per process; not when `MALLOC_MMAP_THRESHOLD_` is set)."""
    global _limited
    if _limited or _LIBC is None or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return
    _limited = True
    _LIBC.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def release_memory() -> None:
    """Collect garbage in cycles, then return the allocator's free pages to the system (glibc)."""
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def release_memory_soon() -> None:
    """Run [`release_memory`][acpkit_core.server.memory.release_memory] on the running loop shortly
    (once, however many turns ask before it runs), and no sooner than `RELEASE_TIME_SHARE` allows."""
    loop = asyncio.get_running_loop()
    if loop in _pending:
        return
    _pending.add(loop)

    def run() -> None:
        global _next_release
        _pending.discard(loop)
        start = time.monotonic()
        release_memory()
        took = time.monotonic() - start
        _next_release = start + took / RELEASE_TIME_SHARE

    loop.call_later(max(_DELAY_S, _next_release - time.monotonic()), run)


def turn_began() -> tuple[int | None, int | None]:
    """Call when a turn starts; hand the result to [`turn_grew`][acpkit_core.server.memory.turn_grew] when it ends."""
    global _running_turns, _turn_starts
    _running_turns += 1
    _turn_starts += 1
    alone = _running_turns == 1
    return (resident_bytes(), _turn_starts) if alone else (None, None)


def turn_grew(began: tuple[int | None, int | None]) -> bool:
    """Whether the process grew by `RELEASE_AFTER_GROWTH` during a turn that ran alone (call once, at its end)."""
    global _running_turns
    _running_turns -= 1
    resident, mark = began
    if resident is None or mark != _turn_starts:  # not alone: another turn ran at its start or began during it
        return False
    now = resident_bytes()
    return now is not None and now - resident >= RELEASE_AFTER_GROWTH


def resident_bytes() -> int | None:
    """The process's resident size in bytes (Linux), else `None`."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
