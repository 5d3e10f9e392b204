"""Server overhead, side by side with a bare `agent-client-protocol` agent doing the same work.

Run: `uv run python bench/server_bench.py [--chunks 10000] [--messages 1000] [--runs 5]`

Measures, over real stdio with the same client:
1. process start to the `initialize` answer;
2. per-chunk cost of streaming N one-word text chunks in one prompt (µs/chunk), ACP Kit with and
   without coalescing;
3. `session/load` replay of a session of M messages (half user, half agent), ACP Kit from its
   SQLite store, the bare agent from a list in memory.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from acpkit_core.runner.types import Session
from acpkit_core.store import SqliteStore
from acpkit_core.testing import AcpTestClient

BARE_AGENT = """
import asyncio, sys, uuid
import acp
from acp import run_agent, text_block, update_agent_message_text, update_user_message_text
from acp.schema import (AgentCapabilities, InitializeResponse, LoadSessionResponse, NewSessionResponse,
    PromptResponse, Implementation)

MESSAGES = int(sys.argv[1])

class Bare:
    def on_connect(self, conn):
        self.conn = conn
    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kw):
        return InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities(load_session=True),
                                  agent_info=Implementation(name="bare", version="0"))
    async def new_session(self, cwd, mcp_servers=None, additional_directories=None, **kw):
        return NewSessionResponse(session_id=uuid.uuid4().hex)
    async def load_session(self, cwd, session_id, mcp_servers=None, additional_directories=None, **kw):
        for i in range(MESSAGES):
            make = update_user_message_text if i % 2 == 0 else update_agent_message_text
            update = make(f"message {i} " + "lorem ipsum " * 8)
            update.message_id = f"m{i}"
            await self.conn.session_update(session_id=session_id, update=update)
        return LoadSessionResponse()
    async def prompt(self, prompt, session_id, **kw):
        n = int(prompt[0].text.split()[1])
        mid = uuid.uuid4().hex
        for _ in range(n):
            update = update_agent_message_text("x ")
            update.message_id = mid
            await self.conn.session_update(session_id=session_id, update=update)
        return PromptResponse(stop_reason="end_turn")
    async def cancel(self, session_id, **kw):
        pass

asyncio.run(run_agent(Bare()))
"""

KIT_AGENT = """
import sys
from acpkit_core.config import AgentOptions
from acpkit_core.server import AcpAgent, run_stdio

class StreamRunner:
    async def run_turn(self, turn):
        n = int(turn.prompt[0].text.split()[1])
        for _ in range(n):
            await turn.emit.text("x ")
        return "end_turn"

run_stdio(AcpAgent(StreamRunner(), AgentOptions(coalesce_ms=float(sys.argv[1]))))
"""


async def time_initialize(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    async with AcpTestClient.spawn(*cmd, env=env) as c:
        await c.initialize()
        return time.perf_counter() - t0


async def import_overhead() -> float:
    code = (
        "import time, acp; t = time.perf_counter(); import acpkit_core.server, acpkit_core.config; "
        "print(time.perf_counter() - t)"
    )
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    return float(out)


async def time_stream(cmd: list[str], env: dict[str, str], chunks: int) -> tuple[float, int]:
    async with AcpTestClient.spawn(*cmd, env=env) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("stream 10", session_id=sid)  # warm up
        t0 = time.perf_counter()
        r = await c.prompt(f"stream {chunks}", session_id=sid)
        elapsed = time.perf_counter() - t0
        assert r.text == "x " * chunks, "lost text"
        return elapsed, len(r.updates)


async def time_load(cmd: list[str], env: dict[str, str], session_id: str, messages: int) -> float:
    async with AcpTestClient.spawn(*cmd, env=env) as c:
        await c.initialize()
        t0 = time.perf_counter()
        _, replayed = await c.load_session(session_id)
        elapsed = time.perf_counter() - t0
        got = [u for u in replayed if u.session_update in ("user_message_chunk", "agent_message_chunk")]
        assert len(got) == messages, f"replayed {len(got)} of {messages}"
        return elapsed


async def seed_session(state_dir: Path, messages: int) -> str:
    store = SqliteStore(state_dir / "sessions.sqlite3")
    sid = uuid.uuid4().hex
    session = Session(id=sid, cwd=str(state_dir), created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z")
    await store.create(session)
    for turn in range(messages // 2):
        batch = [
            {
                "sessionUpdate": kind,
                "messageId": f"m{2 * turn + k}",
                "content": {"type": "text", "text": f"message {2 * turn + k} " + "lorem ipsum " * 8},
            }
            for k, kind in enumerate(("user_message_chunk", "agent_message_chunk"))
        ]
        await store.save(session, append=batch)
    await store.close()
    return sid


def median(values: list[float]) -> float:
    return statistics.median(values)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=5)
    ns = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bare.py").write_text(BARE_AGENT)
        (root / "kit.py").write_text(KIT_AGENT)
        env = {"ACPKIT_STATE_DIR": str(root / "state")}
        os.environ["ACPKIT_STATE_DIR"] = env["ACPKIT_STATE_DIR"]
        bare = [sys.executable, str(root / "bare.py"), str(ns.messages)]
        kit = [sys.executable, str(root / "kit.py"), "0"]
        kit_coalesced = [sys.executable, str(root / "kit.py"), "5"]

        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, median of {ns.runs} runs\n")

        bare_init: list[float] = []
        kit_init: list[float] = []
        for _ in range(ns.runs):  # interleaved, so machine load hits both alike
            bare_init.append(await time_initialize(bare, env))
            kit_init.append(await time_initialize(kit, env))
        imports = [await import_overhead() for _ in range(ns.runs)]
        print("process start -> initialize answer")
        print(f"  bare SDK agent   {1000 * median(bare_init):8.1f} ms")
        extra = 1000 * (median(kit_init) - median(bare_init))
        print(f"  ACP Kit agent    {1000 * median(kit_init):8.1f} ms  (+{extra:.1f} ms)")
        print(f"  import of acpkit_core.server on top of `import acp`: {1000 * median(imports):.1f} ms")

        rows: list[tuple[str, float, int]] = []
        for name, cmd in (("bare SDK agent", bare), ("ACP Kit", kit), ("ACP Kit, coalesce 5 ms", kit_coalesced)):
            runs = [await time_stream(cmd, env, ns.chunks) for _ in range(ns.runs)]
            rows.append((name, median([r[0] for r in runs]), runs[0][1]))
        base = rows[0][1]
        print(f"\nstreaming {ns.chunks} text chunks in one prompt")
        for name, elapsed, updates in rows:
            per = 1e6 * elapsed / ns.chunks
            print(f"  {name:24} {per:7.1f} µs/chunk  {updates:6d} updates sent  {elapsed / base:4.2f}x bare")

        sid = await seed_session(root / "state", ns.messages)
        bare_load = [await time_load(bare, env, sid, ns.messages) for _ in range(ns.runs)]
        kit_load = [await time_load(kit, env, sid, ns.messages) for _ in range(ns.runs)]
        print(f"\nsession/load replay of {ns.messages} messages")
        print(f"  bare SDK agent   {1000 * median(bare_load):8.1f} ms  (from memory)")
        ratio = median(kit_load) / median(bare_load)
        print(f"  ACP Kit agent    {1000 * median(kit_load):8.1f} ms  (from SQLite)  {ratio:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
