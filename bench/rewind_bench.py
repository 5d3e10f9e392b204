"""What keeping a session rewindable costs, and what a rewind takes (beside a store that keeps nothing for it).

Run: `uv run python bench/rewind_bench.py [--turns 200] [--long 500] [--runs 3]`

Over a real ACP connection (in process, the SDK's client), with core's `ScriptedRunner` and a SQLite
store in a temporary directory:

1. a turn that only answers (`say ...`), and one that writes a file through the client (`write ...`):
   median time per turn with the built-in store (a prompt mark per turn, the file's content before
   the write read through the client and recorded, the `/rewind` hint refreshed), and with the same
   store behind a wrapper that hides what rewinding needs (the baseline: none of it happens);
2. `_acpkit/session/rewind` on a session of `--long` prompts: back one prompt, and back to the first.

Figures depend on the machine (and on what else runs on it): compare the columns of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from acpkit_core import AcpAgent
from acpkit_core.config import AgentOptions
from acpkit_core.store import SessionStore, SqliteStore
from acpkit_core.testing import AcpTestClient, ScriptedRunner


class Hidden:
    """A `SessionStore` that forwards to a SQLite store but is not a `RewindStore` (the baseline)."""

    def __init__(self, inner: SqliteStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name in {"add_prompt", "add_file_changes", "prompts", "prompt", "file_changes", "rewind", "copy_prompts"}:
            raise AttributeError(name)
        return getattr(self._inner, name)


async def _turns(store: SessionStore | SqliteStore, root: Path, turns: int, line: str) -> float:
    """Median seconds per turn over `turns` prompts of one session."""
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store=store))  # pyright: ignore[reportArgumentType]
    async with AcpTestClient.connect(agent, root=root) as c:
        await c.initialize()
        sid = await c.new_session()
        times: list[float] = []
        for n in range(turns):
            started = time.perf_counter()
            await c.prompt(line.format(n=n, root=root), session_id=sid)
            times.append(time.perf_counter() - started)
    return statistics.median(times)


async def _per_turn(turns: int, runs: int) -> None:
    print(f"1. median time per turn over {turns} turns (best of {runs} runs)")
    print(f"{'turn':<34}{'no rewind marks':>18}{'rewindable':>14}{'added':>12}")
    cases = (("answers only (`say`)", "say turn {n}"), ("writes a file (`write`)", "write {root}/f.txt v{n}"))
    for label, line in cases:
        base: list[float] = []
        marked: list[float] = []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                plain = SqliteStore(root / "plain.sqlite3")
                base.append(await _turns(Hidden(plain), root, turns, line))  # pyright: ignore[reportArgumentType]
                await plain.close()
                full = SqliteStore(root / "full.sqlite3")
                marked.append(await _turns(full, root, turns, line))
                await full.close()
        b, m = min(base), min(marked)
        print(f"{label:<34}{b * 1e3:>15.2f} ms{m * 1e3:>11.2f} ms{(m - b) * 1e6:>9.0f} µs")


async def _rewinds(long: int, runs: int) -> None:
    print(f"\n2. _acpkit/session/rewind on a session of {long} prompts (SQLite; best of {runs} runs)")
    one: list[float] = []
    first: list[float] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            agent = AcpAgent(ScriptedRunner(), AgentOptions(store=str(root / "s.sqlite3")))
            async with AcpTestClient.connect(agent, root=root) as c:
                await c.initialize()
                sid = await c.new_session()
                for n in range(long):
                    await c.prompt(f"say prompt number {n} with a few words", session_id=sid)
                started = time.perf_counter()
                await c.rewind(sid, restore_files=False)
                one.append(time.perf_counter() - started)
                started = time.perf_counter()
                await c.rewind(sid, prompt=1, restore_files=False)
                first.append(time.perf_counter() - started)
    print(f"back one prompt:        {min(one) * 1e3:8.1f} ms")
    print(f"back to the first:      {min(first) * 1e3:8.1f} ms ({long - 1} prompts undone)")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--long", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    await _per_turn(args.turns, args.runs)
    await _rewinds(args.long, args.runs)


if __name__ == "__main__":
    asyncio.run(main())
