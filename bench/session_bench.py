"""Long sessions: is our cost per turn O(what the turn adds)? Side by side with the framework alone.

    uv run python bench/session_bench.py [--turns 500] [--tools 49] [--repeats 7]
        [--sessions 5] [--adapters pydantic,langchain] [--quick] [--postgres]

For each adapter, in one run:

1. one session of `--turns` short turns over real stdio (a separate agent process on the default
   embedded SQLite store, a raw JSON-RPC client that only reads lines), `--sessions` times (fresh
   processes); per-turn wall time and the agent process's CPU time (to the nanosecond, from each
   thread's /proc schedstat), each the median of the twenty turns ending at turn 10, 100, 250 and
   500 (turn 1, the first prompt of the process, is left out of the turn-10 window and reported on
   its own line), then the median over the sessions; the added ratio is printed for each session
   and as their median (one session's ratio swings with the machine by more than the aim's 30%).
   Beside it, the framework alone doing the same turns, each right after ours (so that both meet
   the same machine load). pydantic-ai: `agent.run(..., message_history=...,
   event_stream_handler=...)` (streamed, as every ACP turn is) inside the agent process, through
   the bench's extension method `_bench/alone` (its own history kept there; CPU of the event-loop
   thread, which runs it all), so that ours and alone share one interpreter and heap: pydantic-ai's
   own CPU per turn differs by ~10% from one process to another, more than our whole added cost,
   so "added" must not subtract another process's figure. The same run in this process is printed
   beside it for reference ("in bench"). LangChain: the LangGraph graph without a checkpointer,
   the whole history kept in memory and passed in at each run, streamed as the runner streams
   (LangGraph's own cost, no serialization: the floor), inside the agent process in the same way,
   and beside it the same graph with `InMemorySaver` in this process. "added" is ours minus the
   framework floor. Targets: added at the last turn within 1.3x of turn 10, total within 1.5x.
   A count that load does not move comes with it: the Python calls made on the agent's event-loop
   thread in one more turn of ours and one alone (cProfile, `_bench/calls`), after turn 10 and
   after the last turn; what we add to the framework's calls should not grow with the session;
2. the first prompt of a fresh process next to the ten after it (target: within 10 ms), the
   median of `--first` processes: sent right after `session/new`, and sent once the process is
   idle (the start-up warm-up thread done, as when a user types the first prompt);
3. `--tools` sequential tool calls in one turn (one model response per call), per call, over
   stdio and by the framework alone, `--repeats` times each (a fresh session, a fresh run), one of
   ours then one alone; agent CPU and wall, medians (target: within 1.3x). pydantic-ai alone runs
   the same agent, tools and model streamed with an event handler, as the adapter does; its
   unstreamed `agent.run` (a cheaper code path an ACP turn never takes) is printed for reference;
4. LangChain: the session again (shorter) with each LangGraph checkpoint `durability` mode, and
   the serializer's cost for the state of a long session;
5. RSS of the agent process before and after a turn with a 20 MB prompt, and around three 20 MB
   prompts refused for the 16 MiB prompt limit (each must give its memory back, as the accepted
   one does);
6. LangChain on Postgres (when Postgres is installed: a throwaway cluster from
   `tests/postgres_cluster.py`, with `fsync=off`): the same graph run in this process for
   `--turns` turns with LangGraph's `AsyncPostgresSaver` and with ours (`MessagePostgresSaver`,
   what `--store postgresql://...` gives a graph), turn by turn in lockstep so load hits both
   alike; per-turn wall and CPU of this process (the server's CPU is not in it) and the bytes
   the turn added to the checkpoint tables, at turn 10 and at the last turn.

`--quick` runs 60 turns, one session, 10 tool calls, 3 repeats, and skips the durability modes; `--adapters
pydantic` (or `langchain`) runs one adapter's figures only (6 is LangChain's); `--postgres` runs
only 6, `--memory` only 5.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

warnings.filterwarnings("ignore", category=DeprecationWarning)

_T = TypeVar("_T")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "langchain"))
sys.path.insert(0, str(ROOT / "tests"))

CALLS_EXTENSION = """
# Python calls made on the event-loop thread between `on` and `off` (cProfile): a count, not a time,
# so load does not move it; the bench takes it for one of our turns and one alone, early and late.
import cProfile
profiles = {}

@extensions.method("bench/calls")
async def calls(params: dict) -> dict:
    if params["on"]:
        profiles["now"] = profile = cProfile.Profile()
        profile.enable()
        return {}
    profile = profiles.pop("now")
    profile.disable()
    profile.create_stats()
    return {"calls": sum(stat[1] for stat in profile.stats.values())}

"""
"""Added to both agent scripts, before their `run_acp(...)` line."""


def _with_calls(script: str) -> str:
    head, run, tail = script.rpartition("\nrun_acp(")
    return head + "\n" + CALLS_EXTENSION + run.lstrip("\n") + tail


PYD_AGENT = _with_calls("""
import sys
import time
from acpkit_core.extensions import Extensions
from pydantic_acp import run_acp
from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import DeltaToolCall, FunctionModel

TOOLS = int(sys.argv[1])

def decide(messages):
    done = 0
    for m in reversed(messages):
        prompt = next((p.content for p in m.parts if p.part_kind == "user-prompt"), None)
        if prompt is not None:
            break
        done += sum(isinstance(p, ToolReturnPart) for p in m.parts)
    return done if prompt == "tools" and done < TOOLS else None

def respond(messages, info):
    n = decide(messages)
    if n is None:
        return ModelResponse(parts=[TextPart("ok")])
    return ModelResponse(parts=[ToolCallPart("ping", {"n": n}, tool_call_id="c%d" % n)])

async def stream(messages, info):
    n = decide(messages)
    if n is None:
        yield "ok"
    else:
        yield {0: DeltaToolCall(name="ping", json_args='{"n": %d}' % n, tool_call_id="c%d" % n)}

agent = Agent(FunctionModel(respond, stream_function=stream, model_name="bench"))

@agent.tool_plain
def ping(n: int) -> str:
    return f"pong {n}"

# The framework alone in this process (same heap, same interpreter as our turns): the bench calls
# `_bench/alone` right after each of our turns; one session of its own, the history kept here.
extensions = Extensions()
alone_history = []

async def drain(ctx, events):
    async for _ in events:
        pass

@extensions.method("bench/alone")
async def alone(params: dict) -> dict:
    global alone_history
    cpu, start = time.thread_time(), time.perf_counter()
    result = await agent.run(params["text"], message_history=alone_history, event_stream_handler=drain)
    alone_history = result.all_messages()
    return {"wall": time.perf_counter() - start, "cpu": time.thread_time() - cpu}

run_acp(agent, name="bench", extensions=extensions)
""")

LC_AGENT = _with_calls("""
import sys
import time
sys.path.insert(0, sys.argv[3])
from acpkit_core.extensions import Extensions
from fake_model import Call, FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_acp import run_acp
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool

TOOLS = int(sys.argv[1])

@tool
def ping(n: int) -> str:
    \"\"\"Answer pong.\"\"\"
    return f"pong {n}"

def reply(messages):
    done = 0
    for m in reversed(messages):
        if isinstance(m, HumanMessage):
            prompt = m.content if isinstance(m.content, str) else m.content[0]["text"]
            break
        done += isinstance(m, ToolMessage)
    if prompt == "tools" and done < TOOLS:
        return Reply(calls=[Call("ping", {"n": done}, f"c{done}")])
    return Reply(text="ok")

class BenchModel(FakeChatModel):
    \"\"\"The tests' scripted model without its call log (which would grow with the session).\"\"\"

    def _next(self, messages, tool_names):
        return reply(messages)

graph = create_agent(BenchModel(), tools=[ping])

# LangGraph's own cost per turn in this process (same heap as our turns): the graph without a
# checkpointer, the whole history kept here and passed in at each run, streamed as the runner
# streams it; the bench calls `_bench/alone` right after each of our turns.
extensions = Extensions()
alone_history = []

@extensions.method("bench/alone")
async def alone(params: dict) -> dict:
    global alone_history
    cpu, start = time.thread_time(), time.perf_counter()
    run_input = {"messages": [*alone_history, HumanMessage(content=params["text"])]}
    modes = ["messages", "updates", "values"]  # "values" only to keep the final state
    async for _, mode, data in graph.astream(run_input, stream_mode=modes, subgraphs=True):
        if mode == "values":
            alone_history = data["messages"]
    return {"wall": time.perf_counter() - start, "cpu": time.thread_time() - cpu}

run_acp(graph, name="bench", durability=sys.argv[2], extensions=extensions)
""")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _thread_ns(pid: int) -> dict[str, int]:
    """Nanoseconds on CPU of each live thread of a process (/proc/PID/task/TID/schedstat), `{}` if unreadable."""
    out: dict[str, int] = {}
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                out[task.name] = int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    except OSError:
        return {}
    return out


class CpuMeter:
    """A process's CPU time between two points, to the nanosecond when the kernel says it per thread.

    /proc/PID/stat counts in clock ticks (10 ms), too coarse for a turn of a few ms; the per-thread
    schedstat counts nanoseconds. When a thread ended in between (its time is gone from the sum),
    the ticks are used for that interval.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._ticks = _cpu_seconds(pid)
        self._threads = _thread_ns(pid)

    def seconds(self) -> float:
        """CPU seconds since the meter was made."""
        ticks, threads = _cpu_seconds(self.pid), _thread_ns(self.pid)
        if self._threads and threads and self._threads.keys() <= threads.keys():
            return sum(ns - self._threads.get(tid, 0) for tid, ns in threads.items()) / 1e9
        return ticks - self._ticks


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class StdioAgent:
    """An agent process driven by a raw JSON-RPC client."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    @classmethod
    async def start(cls, script: str, *args: str, state_dir: str, env: dict[str, str] | None = None) -> StdioAgent:
        env = {**os.environ, "ACPKIT_STATE_DIR": state_dir, **(env or {})}
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            script,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
            limit=2**26,
        )
        return cls(process)

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.process.stdin.write(line.encode() + b"\n")
        await self.process.stdin.drain()
        while True:
            raw = await self.process.stdout.readline()
            if not raw:
                raise RuntimeError(f"the agent exited before answering {method}")
            if b'"method"' in raw[:40]:
                continue
            message = json.loads(raw)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    async def prompt(self, session_id: str, text: str) -> tuple[float, float]:
        """Wall and agent-CPU seconds of one prompt."""
        cpu = CpuMeter(self.process.pid)
        start = time.perf_counter()
        result = await self.call(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        )
        wall = time.perf_counter() - start
        assert result["stopReason"] == "end_turn", result
        return wall, cpu.seconds()

    async def alone(self, text: str) -> tuple[float, float]:
        """Wall and CPU seconds of one turn by the framework alone inside the agent process (`_bench/alone`)."""
        result = await self.call("_bench/alone", {"text": text})
        return result["wall"], result["cpu"]

    async def calls(self, turn: Callable[[], Awaitable[Any]]) -> int:
        """Python calls on the agent's event-loop thread while `turn` runs (`_bench/calls`, cProfile)."""
        await self.call("_bench/calls", {"on": True})
        await turn()
        return int((await self.call("_bench/calls", {"on": False}))["calls"])

    async def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.wait()


async def session_over_stdio(script: str, args: list[str], turns: int) -> tuple[list[tuple[float, float]], float]:
    """Per-turn (wall, cpu) of one session of short turns; and the initialize time."""
    run = await session_side_by_side(script, args, turns)
    return run.ours, run.init


@dataclass
class SessionRun:
    """One session of short turns over stdio, with the framework alone beside it."""

    ours: list[tuple[float, float]]
    """(wall, cpu) seconds of each of our turns."""
    floor: list[tuple[float, float]]
    """The framework alone doing each turn (empty when not asked)."""
    init: float
    """Seconds `initialize` took."""
    beside: list[tuple[float, float]]
    """Another way of running the framework alone, turn by turn (empty when not asked)."""
    calls: dict[int, tuple[int, int]] = field(default_factory=dict[int, tuple[int, int]])
    """After turn N (a key): Python calls on the agent's event-loop thread in one more turn of ours
    and one alone, (ours, alone); that turn is not timed."""


async def session_side_by_side(
    script: str,
    args: list[str],
    turns: int,
    alone: Callable[[int], Awaitable[Any]] | None = None,
    *,
    beside: Callable[[int], Awaitable[Any]] | None = None,
    alone_in_agent: bool = False,
    count_after: frozenset[int] = frozenset(),
) -> SessionRun:
    """One session of short turns over stdio and, when given, the framework alone doing turn i
    (`alone(i)` in this process, or `_bench/alone` in the agent process when `alone_in_agent`; then
    `beside(i)`: another way of running it, in this process) right after ours, so all meet the same
    machine load. After each turn count in `count_after` (with `alone_in_agent`), one more turn of
    ours and one alone run untimed under cProfile in the agent process, and their calls are kept."""
    run = SessionRun([], [], 0.0, [])
    with tempfile.TemporaryDirectory() as state:
        agent = await StdioAgent.start(script, *args, state_dir=state)
        start = time.perf_counter()
        await agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        run.init = time.perf_counter() - start
        sid = (await agent.call("session/new", {"cwd": state, "mcpServers": []}))["sessionId"]
        for i in range(turns):
            run.ours.append(await agent.prompt(sid, f"turn {i}"))
            if alone_in_agent:
                run.floor.append(await agent.alone(f"turn {i}"))
            elif alone is not None:
                run.floor.append(await _timed(lambda i=i: alone(i)))
            if beside is not None:
                run.beside.append(await _timed(lambda i=i: beside(i)))
            if alone_in_agent and i + 1 in count_after:
                text = f"counted {i}"
                ours = await agent.calls(lambda text=text: agent.prompt(sid, text))
                run.calls[i + 1] = (ours, await agent.calls(lambda text=text: agent.alone(text)))
        await agent.stop()
    return run


async def _until_idle(pid: int, quiet: float = 0.3, limit: float = 15.0) -> float:
    """Wait until the process has used no CPU for `quiet` seconds (start-up work done); seconds waited."""
    start = time.perf_counter()
    last = _cpu_seconds(pid)
    while time.perf_counter() - start < limit:
        await asyncio.sleep(quiet)
        now = _cpu_seconds(pid)
        if now == last:
            break
        last = now
    return time.perf_counter() - start


async def first_prompt_when_idle(
    script: str, args: list[str], later: int = 10, *, idle: bool = True
) -> tuple[float, float, float]:
    """The first prompt of a fresh process sent once it is idle after `session/new` (a user typing),
    or right after `session/new` (`idle=False`), next to the mean of the `later` prompts after it:
    (first ms, later ms, seconds waited)."""
    with tempfile.TemporaryDirectory() as state:
        agent = await StdioAgent.start(script, *args, state_dir=state)
        await agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        sid = (await agent.call("session/new", {"cwd": state, "mcpServers": []}))["sessionId"]
        waited = await _until_idle(agent.process.pid) if idle else 0.0
        first, _ = await agent.prompt(sid, "turn 0")
        rest = [(await agent.prompt(sid, f"turn {i}"))[0] for i in range(1, later + 1)]
        await agent.stop()
    return first * 1000, sum(rest) / len(rest) * 1000, waited


async def tools_side_by_side(
    script: str, args: list[str], alone: Callable[[], Awaitable[Any]], repeats: int
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(wall, CPU) seconds of `repeats` turns of sequential tool calls over stdio, each in a fresh
    session (after a warm-up turn in the process), and of `repeats` runs of `alone` in this process,
    taken in turns (one of ours, one alone) so that both meet the same machine load."""
    ours: list[tuple[float, float]] = []
    floor: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as state:
        agent = await StdioAgent.start(script, *args, state_dir=state)
        await agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        sid = (await agent.call("session/new", {"cwd": state, "mcpServers": []}))["sessionId"]
        await agent.prompt(sid, "warm up")
        for _ in range(repeats):
            sid = (await agent.call("session/new", {"cwd": state, "mcpServers": []}))["sessionId"]
            ours.append(await agent.prompt(sid, "tools"))
            floor.append(await _timed(alone))
        await agent.stop()
    return ours, floor


async def rss_after_big_prompt(script: str, args: list[str], megabytes: int = 20) -> tuple[float, float, float, float]:
    """Agent RSS (MB) around a turn with a big prompt: before it, right after it, once the process has
    settled (no CPU used for 0.3 s: the memory release runs shortly after such a turn), and after
    one more short turn, settled too."""
    with tempfile.TemporaryDirectory() as state:
        # Over the default 16 MiB prompt limit: raised for this agent.
        limit = {"ACPKIT_MAX_PROMPT_BYTES": str(megabytes * 2_000_000)}
        agent = await StdioAgent.start(script, *args, state_dir=state, env=limit)
        await agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        sid = (await agent.call("session/new", {"cwd": state, "mcpServers": []}))["sessionId"]
        for i in range(3):
            await agent.prompt(sid, f"warm {i}")
        before = _rss_mb(agent.process.pid)
        await agent.prompt(sid, "y" * (megabytes * 1_000_000))
        after = _rss_mb(agent.process.pid)
        await _until_idle(agent.process.pid)
        settled = _rss_mb(agent.process.pid)
        await agent.prompt(sid, "small")
        await _until_idle(agent.process.pid)
        later = _rss_mb(agent.process.pid)
        await agent.stop()
    return before, after, settled, later


async def rss_around_refused_prompts(script: str, args: list[str], megabytes: int = 20, count: int = 3) -> list[float]:
    """Agent RSS (MB), settled, before and after each of `count` prompts over the default prompt limit
    (refused -32602 before any turn runs)."""
    with tempfile.TemporaryDirectory() as state:
        agent = await StdioAgent.start(script, *args, state_dir=state)
        await agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        sid = (await agent.call("session/new", {"cwd": state, "mcpServers": []}))["sessionId"]
        for i in range(3):
            await agent.prompt(sid, f"warm {i}")
        await _until_idle(agent.process.pid)
        figures = [_rss_mb(agent.process.pid)]
        big = [{"type": "text", "text": "y" * (megabytes * 1_000_000)}]
        for _ in range(count):
            try:
                await agent.call("session/prompt", {"sessionId": sid, "prompt": big})
            except RuntimeError as refused:
                assert "max_prompt_bytes" in str(refused), refused
            else:
                raise AssertionError("a prompt over the limit was accepted")
            await _until_idle(agent.process.pid)
            figures.append(_rss_mb(agent.process.pid))
        await agent.stop()
    return figures


# --- the frameworks alone -----------------------------------------------------------------------


async def _timed(fn: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    cpu = time.process_time()
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start, time.process_time() - cpu


def _pyd_agent(tools: int) -> Any:
    namespace: dict[str, Any] = {"__name__": "bench_agent", "run_acp": lambda *a, **k: None}
    source = PYD_AGENT.replace("from pydantic_acp import run_acp\n", "").replace("int(sys.argv[1])", str(tools))
    exec(compile(source, "<pyd-bench-agent>", "exec"), namespace)
    return namespace["agent"]


def _lc_graph(tools: int, checkpointer: Any) -> Any:
    namespace: dict[str, Any] = {"__name__": "bench_graph"}
    source = (
        LC_AGENT.replace("sys.path.insert(0, sys.argv[3])\n", "")
        .replace("from langchain_acp import run_acp\n", "")
        .replace('run_acp(graph, name="bench", durability=sys.argv[2], extensions=extensions)\n', "")
        .replace("int(sys.argv[1])", str(tools))
    )
    exec(compile(source, "<lc-bench-graph>", "exec"), namespace)
    return namespace["graph"].copy(update={"checkpointer": checkpointer})


async def _drain(ctx: Any, events: Any) -> None:
    """An event handler that reads every event: pydantic-ai streams the model, as in an ACP turn."""
    async for _ in events:
        pass


def pyd_alone() -> Callable[[int], Awaitable[None]]:
    """Turn i of one session by pydantic-ai alone: `agent.run(..., message_history=...)`, streamed."""
    agent = _pyd_agent(0)
    history: list[Any] = []

    async def turn(i: int) -> None:
        nonlocal history
        result = await agent.run(f"turn {i}", message_history=history, event_stream_handler=_drain)
        history = result.all_messages()

    return turn


def lc_alone() -> Callable[[int], Awaitable[Any]]:
    """Turn i of one thread by the LangGraph graph alone, with `InMemorySaver`."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    graph = _lc_graph(0, InMemorySaver())
    config = {"configurable": {"thread_id": "bench"}}
    return lambda i: graph.ainvoke({"messages": [HumanMessage(content=f"turn {i}")]}, config)


async def pyd_tools_alone(tools: int, *, streamed: bool = True) -> Callable[[], Awaitable[Any]]:
    """One run of the tool-calling prompt by pydantic-ai alone (warmed up); `streamed`: with an event
    handler (the model streams, as in an ACP turn), else a plain `agent.run`."""
    agent = _pyd_agent(tools)
    handler = _drain if streamed else None
    await agent.run("warm up", event_stream_handler=handler)
    return lambda: agent.run("tools", event_stream_handler=handler)


async def lc_tools_alone(tools: int) -> Callable[[], Awaitable[Any]]:
    """One run of the tool-calling prompt by the LangGraph graph alone (`InMemorySaver`), each on a new thread."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    graph = _lc_graph(tools, InMemorySaver())
    await graph.ainvoke({"messages": [HumanMessage(content="warm up")]}, {"configurable": {"thread_id": "warm"}})
    threads = iter(range(1_000_000))

    def run() -> Awaitable[Any]:
        config = {"configurable": {"thread_id": f"bench-{next(threads)}"}}
        return graph.ainvoke({"messages": [HumanMessage(content="tools")]}, config)

    return run


def serializer_ms(turns: int) -> tuple[float, int]:
    """Milliseconds to serialize the messages of a `turns`-turn LangGraph session (JsonPlusSerializer)."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    messages = [m for i in range(turns) for m in (HumanMessage(content=f"turn {i}"), AIMessage(content="ok"))]
    serde = JsonPlusSerializer()
    start = time.perf_counter()
    for _ in range(5):
        _, blob = serde.dumps_typed(messages)
    return (time.perf_counter() - start) / 5 * 1000, len(blob)


async def lc_postgres(turns: int) -> dict[str, list[tuple[float, float, int]]] | str:
    """Per-turn (wall s, cpu s, bytes added) of one LangGraph session per Postgres saver, or why not run."""
    from postgres_cluster import PostgresCluster, new_schema_name, postgres_missing, schema_url

    reason = postgres_missing()
    if reason is not None:
        return reason
    import psycopg
    from langchain_acp._message_saver_postgres import MessagePostgresSaver
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    savers: dict[str, type[AsyncPostgresSaver]] = {
        "LangGraph's AsyncPostgresSaver": AsyncPostgresSaver,
        "ours (MessagePostgresSaver)": MessagePostgresSaver,
    }
    cluster = await asyncio.to_thread(PostgresCluster.start)
    pools: list[AsyncConnectionPool[Any]] = []
    try:
        runs: dict[str, tuple[Any, str]] = {}
        for name, cls in savers.items():
            schema = new_schema_name()
            with psycopg.connect(cluster.url, autocommit=True) as conn:
                conn.execute(f"CREATE SCHEMA {schema}".encode())
            url = schema_url(cluster.url, schema)
            pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
                url,
                min_size=1,
                max_size=4,
                kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
                open=False,
            )
            await pool.open(wait=True)
            pools.append(pool)
            saver = cls(pool)
            await saver.setup()
            runs[name] = (_lc_graph(0, saver), url)

        def stored(url: str) -> int:
            """Bytes in the checkpoint tables (what the turns wrote, as stored)."""
            sizes = (
                ("checkpoints", "octet_length(checkpoint::text) + octet_length(metadata::text)"),
                ("checkpoint_blobs", "octet_length(blob)"),
                ("checkpoint_writes", "octet_length(blob)"),
                ("acpkit_messages", "octet_length(value)"),
            )
            total = 0
            with psycopg.connect(url) as conn:
                for table, size in sizes:
                    if conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone() == (True,):
                        row = conn.execute(f"SELECT COALESCE(SUM({size}), 0) FROM {table}".encode()).fetchone()
                        total += int(row[0]) if row else 0
            return total

        out: dict[str, list[tuple[float, float, int]]] = {name: [] for name in runs}
        config = {"configurable": {"thread_id": "bench"}}
        for i in range(turns):
            for name, (graph, url) in runs.items():
                before = stored(url)
                wall, cpu = await _timed(
                    lambda graph=graph, i=i: graph.ainvoke(
                        {"messages": [HumanMessage(content=f"turn {i}")]}, config, durability="exit"
                    )
                )
                out[name].append((wall, cpu, stored(url) - before))
        return out
    finally:
        for pool in pools:
            await pool.close()
        await asyncio.to_thread(cluster.stop)


def report_postgres(results: dict[str, list[tuple[float, float, int]]] | str, turns: int) -> None:
    print(f"\nlangchain on Postgres, one session of {turns} short turns in process (durability exit), per turn")
    if isinstance(results, str):
        print(f"  skipped: {results}")
        return
    first, last = 10, turns
    print(f"  {'saver':<32} | {'turn ' + str(first) + ' wall / cpu ms':>22} {'bytes':>8} | ", end="")
    print(f"{'turn ' + str(last) + ' wall / cpu ms':>22} {'bytes':>8} | {'wall ' + str(last) + '/' + str(first):>9}")
    for name, values in results.items():
        w1, c1 = _window([(w, c) for w, c, _ in values], first)
        wn, cn = _window([(w, c) for w, c, _ in values], last)
        b1 = statistics.median(b for _, _, b in _turns(values, first))
        bn = statistics.median(b for _, _, b in _turns(values, last))
        print(
            f"  {name:<32} | {w1:>10.2f} / {c1:>9.2f} {b1:>8,.0f} | {wn:>10.2f} / {cn:>9.2f} {bn:>8,.0f} | "
            f"{wn / w1:>8.2f}x"
        )


# --- report --------------------------------------------------------------------------------------


WINDOW = 20
"""Turns per mark: the figure at turn N is the median of turns N-19..N (turn 1 left out)."""


def _turns(values: list[_T], turn: int) -> list[_T]:
    """The `WINDOW` turns ending at `turn` (1-based), turn 1 left out: the first prompt of a fresh
    process is its own figure (printed beside the table)."""
    return values[max(1, turn - WINDOW) : turn]


def _window(values: list[tuple[float, float]], turn: int) -> tuple[float, float]:
    """Median (wall, cpu) in ms of the `WINDOW` turns ending at `turn` (a median: one turn that met a
    garbage collection or a busy core does not move it)."""
    chunk = _turns(values, turn)
    return (statistics.median(w for w, _ in chunk) * 1000, statistics.median(c for _, c in chunk) * 1000)


def _added_ratio(first: tuple[float, float], last: tuple[float, float]) -> float | str:
    """Added (ours minus alone) at the last mark over the first, or why there is no ratio."""
    (o1, f1), (on, fn) = first, last
    if on - fn <= 0:
        return f"{on - fn:.1f} ms, below the framework alone"
    if o1 - f1 <= 0:
        return f"{on - fn:.1f} ms at the last mark, {o1 - f1:.1f} ms at the first"
    return (on - fn) / (o1 - f1)


def report_session(
    name: str,
    runs: list[SessionRun],
    marks: list[int],
    beside: str | None = None,
) -> None:
    """Each run's `floor` is what "added" is measured against; `beside` names the first run's `beside`
    figures (another way of running the framework alone). The table holds, for each mark, the
    median over the runs; the ratios are given for each run and their median."""
    turns, count = len(runs[0].ours), f"{len(runs)} session{'s' if len(runs) > 1 else ''}"
    print(
        f"\n{name}: one session of {turns} short turns, {count} (fresh processes), ms per turn "
        f"(median of the {WINDOW} turns up to each mark, then the median over the sessions)"
    )
    extra = f" | {beside + ' wall':>18} {'cpu':>6}" if beside else ""
    print(
        f"{'turn':>6} | {'ours wall':>9} {'ours cpu':>9} | {'alone wall':>10} {'alone cpu':>9} | "
        f"{'added wall':>10} {'cpu':>6}" + extra
    )
    for mark in marks:
        ow, oc, fw, fc = (
            statistics.median(
                _window(values, mark)[i] for values in (run.ours if side == 0 else run.floor for run in runs)
            )
            for side, i in ((0, 0), (0, 1), (1, 0), (1, 1))
        )
        row = f"{mark:>6} | {ow:>9.2f} {oc:>9.2f} | {fw:>10.2f} {fc:>9.2f} | {ow - fw:>10.2f} {oc - fc:>6.2f}"
        if beside:
            bw, bc = _window(runs[0].beside, mark)
            row += f" | {bw:>18.2f} {bc:>6.2f}"
        print(row)
    first, last = marks[0], marks[-1]
    for what, i in (("wall", 0), ("cpu", 1)):
        ratios: list[float | str] = []
        totals: list[tuple[float, float]] = []
        for run in runs:
            o1, f1, on, fn = (_window(v, m)[i] for m in (first, last) for v in (run.ours, run.floor))
            ratios.append(_added_ratio((o1, f1), (on, fn)))
            totals.append((on / o1, fn / f1))
        shown = ", ".join(r if isinstance(r, str) else f"{r:.2f}x" for r in ratios)
        numbers = [r for r in ratios if not isinstance(r, str)]
        middle = f"median {statistics.median(numbers):.2f}x" if len(numbers) == len(ratios) else "no median"
        print(
            f"  {what:<4} turn {last} / turn {first}: added {middle} ({shown}; target <= 1.3x), "
            f"total {statistics.median(t for t, _ in totals):.2f}x (target <= 1.5x; the framework alone "
            f"{statistics.median(f for _, f in totals):.2f}x)"
        )
    counted = runs[0].calls
    if counted:
        print("  Python calls on the agent's event-loop thread in one turn (cProfile; a count, load does not move it):")
        for mark, (ours, alone) in sorted(counted.items()):
            print(f"    after turn {mark:>4}: ours {ours:>9,}  alone {alone:>9,}  added {ours - alone:>7,}")
    print(
        f"  first prompt of the process, sent right after session/new: "
        f"{statistics.median(run.ours[0][0] for run in runs) * 1000:.1f} ms wall; "
        f"turns 2-11 median {statistics.median(_window(run.ours, 11)[0] for run in runs):.1f} ms"
    )


def _median_ms(values: list[tuple[float, float]], index: int, per: int) -> float:
    """The median of `values[...][index]` (seconds), in ms per `per`."""
    return statistics.median(v[index] for v in values) / per * 1000


# --- why the added cost still moves: the framework's history walks -------------------------------

_DUMMY_HISTORY = """
from pydantic_ai.messages import ModelRequest, UserPromptPart
DUMMY = []
for i in range(1000):
    DUMMY += [ModelRequest(parts=[UserPromptPart(f"turn {i}")]), ModelResponse(parts=[TextPart("ok")])]
"""
"""Held by the agent process: 1,000 turns' worth of pydantic-ai messages (a bigger heap)."""

_WALK = """
def walk():
    n = 0
    for _ in range(25):
        for m in DUMMY:
            for p in m.parts:
                n += isinstance(p, TextPart) and len(p.content) > 0
    return n
"""
"""What the bench's model then does at each request besides deciding: a walk over those messages,
as pydantic-ai walks the history when it prepares a request (a few ms)."""


def _interference_script(mode: str) -> str:
    """The pydantic agent script with a bigger heap (`heap`) or with its model walking it (`walk`)."""
    if mode == "base":
        return PYD_AGENT
    extra = _DUMMY_HISTORY + (_WALK if mode == "walk" else "")
    tools, decide = "TOOLS = int(sys.argv[1])\n", "def decide(messages):\n"
    assert tools in PYD_AGENT and decide in PYD_AGENT, "the agent script changed: update _interference_script"
    script = PYD_AGENT.replace(tools, tools + extra)
    return script.replace(decide, decide + "    walk()\n") if mode == "walk" else script


async def interference(turns: int = 80, repeats: int = 3) -> None:
    """Our added cost early in a session, as is, with a bigger heap, and with the model walking that
    heap at each request: the framework's own walks over a long history slow the code around them."""
    print(
        f"\npydantic-acp: added cost per turn (agent CPU, ms; median of turns 21-{turns}, each of {repeats} fresh "
        "processes) in a short session, as is / holding 1,000 turns of messages it never reads / its model "
        "walking them 25 times at each request (alone pays the same walk)"
    )
    for mode in ("base", "heap", "walk"):
        added: list[float] = []
        ours_ms: list[float] = []
        for _ in range(repeats):
            run = await session_side_by_side(_interference_script(mode), ["0"], turns, alone_in_agent=True)
            ours = statistics.median(c for _, c in run.ours[20:]) * 1000
            alone = statistics.median(c for _, c in run.floor[20:]) * 1000
            added.append(ours - alone)
            ours_ms.append(ours)
        shown = ", ".join(f"{a:.2f}" for a in added)
        middle = statistics.median(added)
        print(f"  {mode:<5} ours {statistics.median(ours_ms):6.2f}   added median {middle:5.2f} ({shown})")


def _adapters(adapters: set[str], tools: int, lc_dir: str) -> list[tuple[str, str, list[str]]]:
    """(name, agent script, its arguments) of the adapters to measure."""
    out: list[tuple[str, str, list[str]]] = []
    if "pydantic" in adapters:
        out.append(("pydantic-acp", PYD_AGENT, [str(tools)]))
    if "langchain" in adapters:
        out.append(("langchain-acp", LC_AGENT, [str(tools), "exit", lc_dir]))
    return out


async def main(
    turns: int,
    tools: int,
    quick: bool,
    repeats: int,
    adapters: set[str],
    postgres_only: bool = False,
    first_repeats: int = 5,
    session_count: int = 5,
    interference_only: bool = False,
    memory_only: bool = False,
) -> None:
    load = os.getloadavg()
    loads = " ".join(f"{v:.2f}" for v in load)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {loads}")
    if interference_only:
        await interference()
        return
    lc_dir = str(ROOT / "tests" / "langchain")
    if memory_only:
        await report_memory(adapters, tools, lc_dir)
        return
    if postgres_only:
        report_postgres(await lc_postgres(turns), turns)
        return
    marks = [m for m in (10, 100, 250, 500) if m <= turns] or [turns]
    if marks[-1] != turns:
        marks.append(turns)

    pyd_on, lc_on = "pydantic" in adapters, "langchain" in adapters
    counted = frozenset({marks[0], turns})

    async def sessions(script: str, args: list[str], beside: Callable[[int], Awaitable[Any]]) -> list[SessionRun]:
        """`sessions` runs of one long session (fresh agent processes); only the first runs `beside`
        and counts calls."""
        runs = [
            await session_side_by_side(script, args, turns, alone_in_agent=True, beside=beside, count_after=counted)
        ]
        for _ in range(session_count - 1):
            runs.append(await session_side_by_side(script, args, turns, alone_in_agent=True))
        return runs

    if pyd_on:
        pyd = await sessions(PYD_AGENT, [str(tools)], pyd_alone())
        print(
            "\n(pydantic-acp: alone = pydantic-ai agent.run(..., message_history=..., event_stream_handler=...) "
            "inside the agent process (`_bench/alone`, CPU of its thread), same heap as our turns; "
            "in bench = the same in this process, first session only, for reference: another process's heap)"
        )
        report_session("pydantic-acp", pyd, marks, beside="in bench")
    if lc_on:
        lc = await sessions(LC_AGENT, [str(tools), "exit", lc_dir], lc_alone())
        print(
            "\n(langchain-acp: alone = LangGraph with the whole history in memory, no checkpointer and no "
            "serialization, streamed as the runner streams: LangGraph's own cost per turn, the floor, run inside "
            "the agent process (`_bench/alone`, CPU of its thread); InMemorySaver = the same graph checkpointing "
            "in memory, serializing every message at each run, in this process, first session only)"
        )
        report_session("langchain-acp (durability exit, the default)", lc, marks, beside="InMemorySaver")

    print(
        f"\nfirst prompt of a fresh process next to the 10 after it, ms, median of {first_repeats} processes each "
        "(target: within 10 ms); sent right after session/new, and once the process is idle after it"
    )
    for name, script, args in _adapters(adapters, tools, lc_dir):
        for idle in (False, True):
            runs = [await first_prompt_when_idle(script, args, idle=idle) for _ in range(first_repeats)]
            first = statistics.median(r[0] for r in runs)
            later = statistics.median(r[1] for r in runs)
            when = f"idle (after {statistics.median(r[2] for r in runs):.1f} s)" if idle else "right after"
            print(f"  {name:<14} {when:<20} first {first:7.1f}   next 10 {later:7.1f}   ({first - later:+.1f})")

    print(
        f"\n{tools} sequential tool calls in one turn, ms per call, median of {repeats} turns taken in turns "
        "(agent CPU: ours the agent process's, alone this process's; target <= 1.3x)"
    )
    for name, script, args in _adapters(adapters, tools, lc_dir):
        note = ""
        if name == "pydantic-acp":
            ours, alone = await tools_side_by_side(script, args, await pyd_tools_alone(tools), repeats)
            unstreamed = await pyd_tools_alone(tools, streamed=False)
            plain = [await _timed(unstreamed) for _ in range(repeats)]
            note = f"   (pydantic-ai unstreamed agent.run: cpu {_median_ms(plain, 1, tools):.2f})"
        else:
            ours, alone = await tools_side_by_side(script, args, await lc_tools_alone(tools), repeats)
        ow, oc, aw, ac = (_median_ms(v, i, tools) for v in (ours, alone) for i in (0, 1))
        print(
            f"  {name:<14} cpu: ours {oc:6.2f} alone {ac:6.2f} {oc / ac:.2f}x   "
            f"wall: ours {ow:6.2f} alone {aw:6.2f} {ow / aw:.2f}x{note}"
        )

    if not quick and lc_on:
        short = min(turns, 150)
        print(f"\nlangchain-acp checkpoint durability, one session of {short} turns over stdio, ms per turn")
        for mode in ("exit", "async", "sync"):
            values, _ = await session_over_stdio(LC_AGENT, [str(tools), mode, lc_dir], short)
            w10, c10 = _window(values, 10)
            wn, cn = _window(values, short)
            print(f"  {mode:<6} turn 10: {w10:6.2f} wall {c10:6.2f} cpu   turn {short}: {wn:6.2f} wall {cn:6.2f} cpu")
        ms, size = serializer_ms(turns)
        print(f"  JsonPlusSerializer, the {2 * turns} messages of a {turns}-turn session: {ms:.2f} ms, {size:,} bytes")

    if lc_on:
        report_postgres(await lc_postgres(turns), turns)

    await report_memory(adapters, tools, lc_dir)


async def report_memory(adapters: set[str], tools: int, lc_dir: str) -> None:
    """Section 5: the agent's RSS around an accepted big prompt and around refused ones."""
    print(
        "\nagent RSS around a turn with a 20 MB prompt, MB (before / right after / settled / after one more"
        " turn, settled; settled: no CPU used for 0.3 s) (target: settled within 1.1x of before)"
    )
    for name, script, args in _adapters(adapters, tools, lc_dir):
        before, after, settled, later = await rss_after_big_prompt(script, args)
        print(
            f"  {name:<14} {before:7.1f} / {after:7.1f} / {settled:7.1f} / {later:7.1f}"
            f"   ({settled / before:.2f}x, {later / before:.2f}x)"
        )
    print(
        "\nagent RSS around three 20 MB prompts refused for the 16 MiB prompt limit, MB, settled (before, then after"
        " each) (target: the last within 1.1x of before, as for the accepted prompt above)"
    )
    for name, script, args in _adapters(adapters, tools, lc_dir):
        figures = await rss_around_refused_prompts(script, args)
        steps = " -> ".join(f"{f:.1f}" for f in figures)
        print(f"  {name:<14} {steps}   ({figures[-1] / figures[0]:.2f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--tools", type=int, default=49)
    parser.add_argument("--repeats", type=int, default=7, help="tool-calling turns measured per adapter")
    parser.add_argument("--adapters", default="pydantic,langchain", help="comma-separated: pydantic, langchain")
    parser.add_argument("--quick", action="store_true", help="60 turns, 10 tool calls, 3 repeats, no durability modes")
    parser.add_argument("--postgres", action="store_true", help="only the LangChain-on-Postgres comparison")
    parser.add_argument(
        "--interference", action="store_true", help="only: does the framework's history walk slow our code? (pydantic)"
    )
    parser.add_argument("--memory", action="store_true", help="only the agent's RSS around big prompts (section 5)")
    parser.add_argument("--first", type=int, default=5, help="fresh processes per first-prompt figure (median)")
    parser.add_argument("--sessions", type=int, default=5, help="long sessions per adapter (fresh processes; median)")
    ns = parser.parse_args()
    if ns.quick:
        ns.turns, ns.tools, ns.repeats, ns.sessions = min(ns.turns, 60), min(ns.tools, 10), min(ns.repeats, 3), 1
    chosen = {a.strip() for a in ns.adapters.split(",") if a.strip()}
    if not chosen or chosen - {"pydantic", "langchain"}:
        parser.error("--adapters takes pydantic, langchain or both")
    asyncio.run(
        main(
            ns.turns,
            ns.tools,
            ns.quick,
            ns.repeats,
            chosen,
            ns.postgres,
            max(1, ns.first),
            max(1, ns.sessions),
            ns.interference,
            ns.memory,
        )
    )
