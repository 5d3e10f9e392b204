"""The agent `remote_bench.py` serves over stdio and `acpkit serve`: streams stamped chunks.

A prompt `N` streams N one-word text chunks, each the wall-clock time it was emitted, so the client
can measure each chunk's latency (both ends are on this machine); `N pause MS` waits MS milliseconds
before each chunk (a turn long enough to cut its connection mid-way). The store is `$BENCH_STORE`.
"""

from __future__ import annotations

import asyncio
import os
import time

from acpkit_core.config import AgentOptions
from acpkit_core.prompt.ir import Text
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import StopReason
from acpkit_core.server import AcpAgent


class StampRunner:
    """Streams `N` chunks, each `<time.time()> ` (`N pause MS`: MS ms before each); a prompt `sleep`
    waits 60 s (a turn to kill)."""

    async def run_turn(self, turn: Turn) -> StopReason:
        text = "".join(p.text for p in turn.prompt if isinstance(p, Text)).strip()
        if text == "sleep":
            await turn.emit.text("waiting ")
            await asyncio.sleep(60)
            return "end_turn"
        count, _, pause = text.partition(" pause ")
        for _ in range(int(count or "1")):
            if pause:
                await asyncio.sleep(float(pause) / 1000)
            await turn.emit.text(f"{time.time():.6f} ")
        return "end_turn"


# Every stamp its own chunk (`coalesce_ms=0`): the figures are per message on each transport.
agent = AcpAgent(
    StampRunner(), AgentOptions(name="bench", store=os.environ.get("BENCH_STORE", "memory"), coalesce_ms=0)
)

if __name__ == "__main__":
    from acpkit_core.server import run_stdio

    run_stdio(agent)
