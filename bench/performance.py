"""ACP Kit's performance envelope: one command, one page (`docs/performance.md`).

    uv run python bench/performance.py                 # the whole run (about 20 minutes on 2 idle cores)
    uv run python bench/performance.py --quick --output /tmp/performance.md   # every figure, tiny numbers

Every figure is taken in the same run, ours beside the framework alone and the bare ACP SDK agent,
by the bench scripts of this directory (each also runs on its own): `startup_bench.py`,
`wire_bench.py`, `pydantic_bench.py`, `langchain_bench.py`, `prompt_bench.py`, `server_bench.py`,
`session_bench.py`, `remote_bench.py`, `memory_bench.py`. The page says which machine, which load
and which versions it ran on; write it on a machine with nothing else running.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import importlib.metadata
import io
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

import langchain_bench  # noqa: E402
import memory_bench  # noqa: E402
import prompt_bench  # noqa: E402
import pydantic_bench  # noqa: E402
import remote_bench  # noqa: E402
import server_bench  # noqa: E402
import session_bench  # noqa: E402
import startup_bench  # noqa: E402
import wire_bench  # noqa: E402

PACKAGES = (
    "acpkit-core",
    "pydantic-acp",
    "langchain-acp",
    "agent-client-protocol",
    "pydantic-ai-slim",
    "pydantic",
    "langgraph",
    "langchain",
    "langchain-core",
    "uvicorn",
)


@dataclass(frozen=True)
class Sizes:
    """How big each figure's run is."""

    runs: int
    start_runs: int
    cache: str
    deltas: tuple[int, ...]
    sessions_at_once: int
    deltas_at_once: int
    parallel_tools: int
    replay_messages: int
    session_turns: int
    sequential_tools: int
    tool_repeats: int
    session_count: int
    first_repeats: int
    remote: dict[str, Any]
    idle_sessions: int
    loaded_sessions: int
    loaded_turns: int


FULL = Sizes(
    runs=5,
    start_runs=11,
    cache="both",
    deltas=(1, 1000, 10_000),
    sessions_at_once=50,
    deltas_at_once=100,
    parallel_tools=100,
    replay_messages=1000,
    session_turns=500,
    sequential_tools=49,
    tool_repeats=7,
    session_count=5,
    first_repeats=5,
    remote={"chunks": 5000, "runs": 5, "sessions": 1000, "load_chunks": 100, "load_runs": 2, "only": "123"},
    idle_sessions=10_000,
    loaded_sessions=20,
    loaded_turns=100,
)

QUICK = Sizes(
    runs=1,
    start_runs=1,
    cache="in place",
    deltas=(1, 100),
    sessions_at_once=5,
    deltas_at_once=10,
    parallel_tools=5,
    replay_messages=20,
    session_turns=12,
    sequential_tools=3,
    tool_repeats=1,
    session_count=1,
    first_repeats=1,
    remote={"chunks": 100, "runs": 1, "sessions": 10, "load_chunks": 5, "load_runs": 1, "only": "123"},
    idle_sessions=50,
    loaded_sessions=2,
    loaded_turns=3,
)


# --- the machine -----------------------------------------------------------------------------------


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _memory() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    return "?"


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    except OSError:
        return "?"
    return out.stdout.strip() or "?"


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


# --- markdown ----------------------------------------------------------------------------------------


def table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def text_block(lines: str) -> str:
    return "```text\n" + lines.strip("\n") + "\n```"


def ms(values: Sequence[float], scale: float = 1000.0, digits: int = 1) -> str:
    return f"{statistics.median(values) * scale:.{digits}f}" if values else "-"


def ratio(a: Sequence[float], b: Sequence[float]) -> str:
    return f"{statistics.median(a) / statistics.median(b):.2f}x" if a and b else "-"


async def captured(run: Callable[[], Awaitable[object]]) -> str:
    """What `run()` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        await run()
    return out.getvalue()


# --- the sections ------------------------------------------------------------------------------------


@dataclass
class Page:
    """The page being written: its sections, and the headline figures for the summary."""

    sections: list[str]
    summary: list[list[str]]


START_COLUMNS = ["bytecode", "agent", "initialize, ms", "x bare SDK", "+ framework, ms", "first prompt, ms", "x alone"]


async def startup(page: Page, sizes: Sizes) -> None:
    results = await startup_bench.measure(sizes.start_runs, sizes.cache)
    rows: list[list[str]] = []
    for (mode, name), s in results.items():
        bare = results.get((mode, "bare SDK agent"))
        alone = results.get((mode, startup_bench.FRAMEWORK_OF.get(name, "")))
        init = f"{ms(s.initialize)} ({ms(s.initialize_cpu)})" if s.initialize else "-"
        x_bare = ""
        if bare is not None and s.initialize and name != "bare SDK agent":
            x_bare = f"{ratio(s.initialize, bare.initialize)} ({ratio(s.initialize_cpu, bare.initialize_cpu)})"
        beyond = ""
        if alone is not None and s.initialize and alone.initialize:
            beyond = f"{(statistics.median(s.initialize) - statistics.median(alone.initialize)) * 1000:+.1f}"
        first = f"{ms(s.first_prompt)} ({ms(s.first_prompt_cpu)})"
        x_alone = ""
        if alone is not None:
            x_alone = (
                f"{ratio(s.first_prompt, alone.first_prompt)} ({ratio(s.first_prompt_cpu, alone.first_prompt_cpu)})"
            )
        rows.append([mode, name, init, x_bare, beyond, first, x_alone])
        if name in startup_bench.FRAMEWORK_OF:
            page.summary.append([f"spawn to `initialize`, {mode} / bare SDK agent", name, x_bare, "1.5x"])
            if alone is not None and bare is not None and alone.initialize:
                floor = ratio(alone.initialize, bare.initialize)
                floor += f" ({ratio(alone.initialize_cpu, bare.initialize_cpu)})"
                figure = f"spawn to the framework imported (the floor under `initialize`), {mode} / bare SDK agent"
                page.summary.append([figure, name, floor, "-"])
            page.summary.append([f"spawn to first answered prompt, {mode} / framework alone", name, x_alone, "1.3x"])
    page.sections.append(
        "## Start-up\n\n"
        "What an editor pays each time it opens a thread, and a one-shot client (`acpkit chat -p`, `acpx exec`) "
        "in full: from spawning the agent process to the `initialize` answer, and to the answer of the first "
        "prompt (`initialize`, `session/new` and `session/prompt` each sent as soon as the previous answer is "
        "read), beside the framework alone behind a bare stdio loop (import, build the agent, read one line, "
        "stream one run, write one line) and the bare SDK agent. The framework alone's `initialize` cell is "
        "spawn to the moment it has imported the framework and built the agent (it then writes a line): the "
        "floor under any adapter's `initialize`, since an agent script imports its framework before the "
        "adapter runs; \"+ framework\" is what ours takes beyond that floor (the ACP SDK's schema, ACP Kit's "
        "modules, the agent's server, the answer). Wall time, and in parentheses the agent "
        "process's CPU time by then (all threads, ended ones included: `/proc/PID/stat`, in 10 ms ticks), "
        "which other jobs on the machine move less. "
        f"Median of {sizes.start_runs} fresh processes per row, interleaved (`bench/startup_bench.py`). "
        '"cached": a bytecode cache filled by a first run, as an installed package has; "no cache": '
        "every module compiled again (`PYTHONDONTWRITEBYTECODE`, an empty `PYTHONPYCACHEPREFIX`).\n\n"
        + table(START_COLUMNS, rows)
    )


async def streaming(page: Page, sizes: Sizes) -> None:
    results = await wire_bench.stream_figures(list(sizes.deltas), sizes.runs)
    rows: list[list[str]] = []
    for (name, n), s in results.items():
        alone_cpu = ms(s.alone_cpu, 1e6 / n) if s.alone_cpu else ""
        x = ratio(s.cpu, s.alone_cpu) if s.alone_cpu else ""
        alone_wall = ms(s.alone_wall, 1e6 / n) if s.alone_wall else ""
        rows.append(
            [
                name,
                f"{n:,}",
                ms(s.cpu, 1e6 / n),
                alone_cpu,
                x,
                ms(s.wall, 1e6 / n),
                alone_wall,
                ms(s.writes, 1, 3),
                ms(s.messages, 1, 3),
            ]
        )
        if n == max(sizes.deltas) and name in wire_bench.ALONE:
            page.summary.append([f"stream {n:,}: agent CPU / framework alone", name, x, "1.0x"])
            page.summary.append([f"stream {n:,}: write system calls per delta", name, ms(s.writes, 1, 3), "0.5"])
    page.sections.append(
        "## Streaming over stdio\n\n"
        "One prompt streaming N text deltas from an agent process to a client that only splits lines; in "
        "the same process, right after each of our prompts, the framework alone streaming the same N "
        "deltas and consuming every event as an adapter must (pydantic-ai `agent.run(..., "
        "event_stream_handler=...)`, as a turn runs it; the graph's `astream` with `messages` and `updates`, "
        "with subgraphs, LangGraph's own event stream: our runner streams the `updates` and takes the "
        "messages from the run's callbacks). CPU of the agent process (all threads) for ours, "
        "of the event loop's thread for alone; write system calls from `/proc/PID/io`; chunks read per delta "
        "(ours merge the deltas that come within 2 ms of the last chunk sent, `coalesce_ms`). The bare SDK "
        f"agent sends one `session_update` per delta. Median of {sizes.runs} (`bench/wire_bench.py`).\n\n"
        + table(
            [
                "agent",
                "deltas",
                "CPU µs/delta",
                "alone",
                "ours / alone",
                "wall µs/delta",
                "alone",
                "writes/delta",
                "chunks/delta",
            ],
            rows,
        )
    )


async def coalescing(page: Page, sizes: Sizes) -> None:
    deltas = max(sizes.deltas)
    results = await wire_bench.window_figures(deltas, sizes.runs, [0.0, 2.0])
    rows: list[list[str]] = []
    for (name, window), w in results.items():
        rows.append(
            [
                name,
                f"{window:g}" + (" (before)" if window == 0 else " (default)"),
                ms(w.writes, 1, 3),
                ms(w.messages, 1, 3),
                ms(w.first, 1000, 2),
                ms(w.p50, 1000, 2) if w.p50 else "-",
                ms(w.p99, 1000, 2) if w.p99 else "-",
                ms(w.cpu, 1e6),
            ]
        )
    for name in ("pydantic-acp",):  # LangChain's first update waits for the fake model's whole run (below)
        before, after = results.get((name, 0.0)), results.get((name, 2.0))
        if before and after:
            delta = (statistics.median(after.first) - statistics.median(before.first)) * 1000
            page.summary.append(["first update, default windows against none", name, f"{delta:+.2f} ms", "+3 ms"])
    page.sections.append(
        "## Write coalescing and chunk merging\n\n"
        "Streamed updates sent within `write_window_ms` (2 ms by default) of the last write share one "
        "write, each still its own message, in order; the answer to the prompt, a request to the client "
        "and the first update after a pause go at once (see [Write coalescing](core/sessions.md#write-coalescing)). "
        "Text deltas that come within `coalesce_ms` (2 ms by default) of the last chunk sent are merged into "
        "one chunk, sent at the window's end; the first delta after a pause goes at once (see "
        "[Chunk merging](core/sessions.md#chunk-merging)). Window 0 is both off: one write per message "
        "and one chunk per delta, as before. Each configuration in a fresh process, interleaved, "
        f"{deltas:,} deltas; the first update is the prompt sent to the first chunk read; p50 and p99 are each "
        "pydantic delta's latency from pydantic-ai's model producing it to the client reading it. "
        "The tests' fake chat model never awaits between chunks: through LangGraph's `messages` stream mode "
        "its first chunk reached the runner only when the whole run had been made (about 400 ms for "
        "10,000 deltas); the runner now takes each chunk from the run's callbacks as the model makes it. "
        f"Median of {sizes.runs} (`bench/wire_bench.py`).\n\n"
        + table(
            [
                "agent",
                "window ms",
                "writes/delta",
                "chunks/delta",
                "first update ms",
                "p50 ms",
                "p99 ms",
                "CPU µs/delta",
            ],
            rows,
        )
    )


async def at_once(page: Page, sizes: Sizes) -> None:
    results = await wire_bench.concurrent_figures(sizes.sessions_at_once, sizes.deltas_at_once, sizes.runs)
    rows = [
        [name, ms(c.wall), ms(c.alone_wall) if c.alone_wall else "", ms(c.cpu), ms(c.alone_cpu) if c.alone_cpu else "",
         ratio(c.cpu, c.alone_cpu) if c.alone_cpu else ""]
        for name, c in results.items()
    ]  # fmt: skip
    page.sections.append(
        f"## {sizes.sessions_at_once} concurrent sessions\n\n"
        f"{sizes.sessions_at_once} sessions of one agent process over stdio, each sent a prompt of "
        f"{sizes.deltas_at_once} deltas at the same moment; until every prompt is answered. Beside it, in the "
        "same process, the framework alone making as many runs at once (`asyncio.gather`). "
        f"Median of {sizes.runs} (`bench/wire_bench.py`).\n\n"
        + table(["agent", "wall ms", "alone", "agent CPU ms", "alone", "ours / alone"], rows)
    )


async def tool_calls(page: Page, sizes: Sizes) -> None:
    k = sizes.parallel_tools
    repeat = max(sizes.runs, 1)
    setup = await pydantic_bench.session_setup(repeat)
    pyd_alone = await pydantic_bench.timed(lambda: pydantic_bench.alone(pydantic_bench.tools_agent(k)), repeat)
    pyd_ours = await pydantic_bench.timed(lambda: pydantic_bench.over_acp(pydantic_bench.tools_agent(k)), repeat)
    pyd_ours -= setup
    await langchain_bench.hundred_tools_alone(k)  # warm up
    lc_alone = statistics.median([await langchain_bench.hundred_tools_alone(k) for _ in range(repeat)])
    lc_ours = statistics.median([(await langchain_bench.hundred_tools(k))[0] for _ in range(repeat)])
    rows = [
        ["pydantic-acp", f"{pyd_ours / k * 1e3:.2f}", f"{pyd_alone / k * 1e3:.2f}", f"{pyd_ours / pyd_alone:.2f}x"],
        ["langchain-acp", f"{lc_ours / k * 1e3:.2f}", f"{lc_alone / k * 1e3:.2f}", f"{lc_ours / lc_alone:.2f}x"],
    ]
    page.sections.append(
        "## Tool calls\n\n"
        f"Parallel: one model response calling a tool {k} times, then an answer; served over ACP to an "
        "in-process client (JSON-RPC over a socket pair, every update validated by the client in the same "
        "process; pydantic-acp's figure less a session's setup), against the framework's own streamed run "
        f"(`bench/pydantic_bench.py`, `bench/langchain_bench.py`; wall, median of {repeat}). Sequential calls "
        "(one model response per call, over stdio, agent CPU) are in the long-session section below.\n\n"
        + table(["adapter", "ours, ms per call", "framework alone", "ours / alone"], rows)
    )


async def blocks(page: Page, sizes: Sizes) -> None:
    small = prompt_bench.small_blocks()

    async def run() -> None:
        prompt_bench.scenario("2000 small blocks", small, len(prompt_bench.message(small)), runs=max(sizes.runs, 1))

    out = await captured(run)
    head = f"{'scenario':<18} {'step':<30} {'time':>12} {'throughput':>14} {'peak':>11} {'/load':>7} {'decodes':>7}"
    page.sections.append(
        "## A prompt of 2,000 blocks\n\n"
        "Parsing a `session/prompt` of 2,000 small blocks (text, resource links, embedded resources, tiny "
        "images) into the IR and rendering it for each framework, against the floor: `json.loads` of the "
        "same message. Best time, throughput over the message, peak memory allocated during the step "
        "(tracemalloc) and base64 decodes (`bench/prompt_bench.py`, which also has 1 MB, 20 MB and 5 MB "
        "image prompts).\n\n" + text_block(head + "\n" + out)
    )


async def replay(page: Page, sizes: Sizes) -> None:
    n = sizes.replay_messages
    with tempfile.TemporaryDirectory(prefix="acpkit-replay-") as tmp:
        root = Path(tmp)
        (root / "bare.py").write_text(server_bench.BARE_AGENT)
        (root / "kit.py").write_text(server_bench.KIT_AGENT)
        env = {**os.environ, "ACPKIT_STATE_DIR": str(root / "state")}
        sid = await server_bench.seed_session(root / "state", n)
        bare = [sys.executable, str(root / "bare.py"), str(n)]
        kit = [sys.executable, str(root / "kit.py"), "0"]
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(max(sizes.runs, 1)):
            ours.append(await server_bench.time_load(kit, env, sid, n))
            theirs.append(await server_bench.time_load(bare, env, sid, n))
    rows = [
        ["ACP Kit (from its SQLite store)", ms(ours), ratio(ours, theirs)],
        ["bare SDK agent (from memory)", ms(theirs), ""],
    ]
    page.sections.append(
        f"## Replay of {n:,} messages\n\n"
        f"`session/load` of a session of {n:,} messages (half the user's, half the agent's), from sending the "
        "request to its answer, every message replayed before it, in a fresh agent process; the bare SDK "
        f"agent sends the same messages from a list in memory. Median of {max(sizes.runs, 1)}, interleaved "
        "(`bench/server_bench.py`).\n\n" + table(["agent", "ms", "x bare"], rows)
    )


async def long_session(page: Page, sizes: Sizes) -> None:
    out = await captured(
        lambda: session_bench.main(
            sizes.session_turns,
            sizes.sequential_tools,
            sizes.session_turns < 100,
            sizes.tool_repeats,
            {"pydantic", "langchain"},
            first_repeats=sizes.first_repeats,
            session_count=sizes.session_count,
        )
    )
    page.sections.append(
        f"## A {sizes.session_turns}-turn session, sequential tool calls, the first prompt\n\n"
        "`bench/session_bench.py`'s output, unedited: one session of short turns over stdio (per-turn wall "
        "and agent CPU at marks along the session, the framework alone doing each turn in the agent process), "
        "the first prompt of a fresh process next to the ten after it, "
        f"{sizes.sequential_tools} sequential tool calls in one turn, LangGraph checkpoint modes, LangChain "
        "on Postgres (when installed), and RSS around a turn with a 20 MB prompt. See "
        "[Sessions](core/sessions.md#performance) for what each line means.\n\n" + text_block(out)
    )


async def remote(page: Page, sizes: Sizes) -> None:
    args = argparse.Namespace(quick=False, **sizes.remote)
    out = await captured(lambda: remote_bench.main(args))
    page.sections.append(
        f"## Remote: per-chunk cost and {sizes.remote['sessions']:,} concurrent sessions\n\n"
        "`bench/remote_bench.py`'s output, unedited: the cost per streamed chunk over stdio, WebSocket and "
        f"Streamable HTTP (the same agent); {sizes.remote['sessions']:,} concurrent WebSocket sessions "
        f"streaming {sizes.remote['load_chunks']} chunks each on one replica and on two; failover. See "
        "[Remote agents](remote.md#figures) for what each line means.\n\n" + text_block(out)
    )


async def memory(page: Page, sizes: Sizes) -> None:
    results = await memory_bench.run(
        sizes.idle_sessions, sizes.loaded_sessions, sizes.loaded_turns, ["sqlite", "postgres"]
    )
    rows: list[list[str]] = []
    for (name, store), m in results.items():
        if isinstance(m, str):
            rows.append([name, store, f"not measured: {m}", "", "", ""])
            continue
        per_message = m.loaded_kib / (2 * m.turns + 2)
        rows.append(
            [name, store, f"{m.base_mib:.1f} MiB", f"{m.idle_kib:.2f} KiB", f"{m.idle_total_mib:.1f} MiB",
             f"{m.loaded_kib:.0f} KiB ({per_message:.2f} KiB a message)"]
        )  # fmt: skip
        if store == "sqlite":
            page.summary.append(
                [f"{m.idle_sessions:,} idle sessions in one process", name,
                 f"{m.idle_kib:.2f} KiB each, {m.idle_total_mib:.0f} MiB in all", "fits comfortably"]
            )  # fmt: skip
    page.sections.append(
        "## Memory per session\n\n"
        "An agent process over stdio (`bench/memory_bench.py`): its resident size after one session and one "
        f"turn; the growth per idle session over {sizes.idle_sessions:,} `session/new` (and the process with "
        f"all of them open); the growth per session with a history, over {sizes.loaded_sessions} sessions of "
        f"{sizes.loaded_turns} turns each, written by another process, each loaded and continued by one more "
        "turn (so its history is in memory, as for any active session). RSS is read once the process has "
        "used no CPU for 0.3 s.\n\n"
        + table(
            [
                "adapter",
                "store",
                "RSS after one turn",
                "per idle session",
                "all idle sessions open",
                "per loaded session",
            ],
            rows,
        )
    )


SECTIONS = (startup, streaming, coalescing, at_once, tool_calls, blocks, replay, long_session, remote, memory)


async def generate(sizes: Sizes, quick: bool) -> str:
    started = time.perf_counter()
    load_before = _load()
    page = Page(sections=[], summary=[])
    for section in SECTIONS:
        print(f"  {section.__name__}...", file=sys.stderr, flush=True)
        await section(page, sizes)
    minutes = (time.perf_counter() - started) / 60
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    cache = "off (`PYTHONDONTWRITEBYTECODE`)" if sys.dont_write_bytecode else "on"
    python = f"{platform.python_implementation()} {platform.python_version()}"
    generated = f"{today}, in {minutes:.1f} minutes" + (" (`--quick`: tiny numbers, not figures)" if quick else "")
    machine = [
        ["generated", generated],
        ["command", "`uv run python bench/performance.py`" + (" --quick" if quick else "")],
        ["commit", _commit()],
        ["CPU", f"{_cpu_model()}, {os.cpu_count()} cores"],
        ["memory", _memory()],
        ["system", f"{platform.system()} {platform.release()}"],
        ["Python", f"{python}; bytecode cache of the bench process: {cache}"],
        ["load average (1 / 5 / 15 min)", f"{load_before} at the start, {_load()} at the end"],
        ["versions", ", ".join(f"{p} {_version(p)}" for p in PACKAGES)],
    ]  # fmt: skip
    parts = [
        "# Performance",
        "<!-- Generated by `uv run python bench/performance.py`: do not edit by hand, run it again. -->",
        "What an ACP Kit agent costs beside the framework it serves and beside an agent written on the ACP "
        "SDK alone, measured in one run on one machine. Each section says how its figure is taken and which "
        "script of `bench/` takes it; every script also runs on its own. Wall times move with whatever else "
        "the machine runs; CPU times and counts (system calls, bytes) much less. Your figures will differ: "
        "run the command on your machine.",
        "## The run\n\n" + table(["", ""], machine),
        "## Against the aims\n\n" + table(["figure", "adapter", "this run", "aim"], page.summary),
        *page.sections,
    ]
    return "\n\n".join(parts) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every figure with tiny numbers (checks the page builds)")
    parser.add_argument("--output", default=str(ROOT / "docs" / "performance.md"))
    ns = parser.parse_args()
    print(f"writing {ns.output} (load average {_load()})", file=sys.stderr)
    text = asyncio.run(generate(QUICK if ns.quick else FULL, ns.quick))
    Path(ns.output).write_text(text)
    print(f"wrote {ns.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
