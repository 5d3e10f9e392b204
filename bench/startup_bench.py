"""Start-up: spawn to `initialize` answered and spawn to the first answered prompt, with and without a bytecode cache.

    uv run python bench/startup_bench.py [--runs 7] [--cache both|warm|none]

What an editor pays each time it opens a thread, and what a one-shot client (`acpkit chat -p`,
`acpx exec`) pays in full. Each configuration is a fresh process, the configurations interleaved run
by run; the figure is the median over `--runs`:

- ours: `pydantic-acp` serving a pydantic-ai agent (a `FunctionModel` streaming two deltas) and
  `langchain-acp` serving a LangChain `create_agent` graph (LangChain's own `GenericFakeChatModel`
  streaming three chunks: the tests' fake model is built on `langchain_acp`, which the framework
  alone must not import), each with
  `run_acp` on the default SQLite store (a state directory of its own, created by the warm-up run).
  Spawn to the `initialize` answer, and spawn to the answer of the first `session/prompt`
  (`initialize`, `session/new` and the prompt each sent as soon as the previous answer is read);
- the framework alone behind a bare stdio loop: a script that imports the framework, builds the
  same agent or graph and says so (one line: spawn to that line is the floor under any adapter's
  `initialize`, shown in that column: an agent script imports its framework before the adapter
  runs), reads one line from stdin and streams one run (pydantic-ai's `run_stream_events`; the
  graph's `astream` with the stream modes the adapter uses), then writes one line. Spawn to that
  line;
- the bare SDK agent (`bench/server_bench.py`'s): spawn to `initialize`, and to its first prompt.

Bytecode: "cached" runs with `PYTHONPYCACHEPREFIX` pointing at a cache the warm-up runs filled (as an
installed package has); "no cache" points it at an empty directory and sets
`PYTHONDONTWRITEBYTECODE`, so every module, the standard library's included, is compiled again.
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
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from server_bench import BARE_AGENT  # noqa: E402

PYDANTIC_ACP = """
from pydantic_ai import Agent
from pydantic_ai.models.function import FunctionModel
from pydantic_acp import run_acp

async def stream(messages, info):
    yield "hello "
    yield "world"

run_acp(Agent(FunctionModel(stream_function=stream, model_name="bench"), name="bench"))
"""

PYDANTIC_ALONE = """
import asyncio, json, sys
from pydantic_ai import Agent
from pydantic_ai.models.function import FunctionModel

async def stream(messages, info):
    yield "hello "
    yield "world"

agent = Agent(FunctionModel(stream_function=stream, model_name="bench"), name="bench")
sys.stdout.write('{"ready": true}\\n')  # the framework imported and the agent built
sys.stdout.flush()

async def main():
    text = json.loads(sys.stdin.readline())["text"]
    parts = []
    async with agent.run_stream_events(text) as events:
        async for event in events:
            parts.append(event)
    sys.stdout.write(json.dumps({"events": len(parts)}) + "\\n")
    sys.stdout.flush()

asyncio.run(main())
"""

LANGCHAIN_ACP = """
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_acp import run_acp

run_acp(create_agent(GenericFakeChatModel(messages=iter([AIMessage(content="hello world")])), tools=[]))
"""

LANGGRAPH_ALONE = """
import asyncio, json, sys
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

graph = create_agent(GenericFakeChatModel(messages=iter([AIMessage(content="hello world")])), tools=[])
sys.stdout.write('{"ready": true}\\n')  # the framework imported and the graph built
sys.stdout.flush()

async def main():
    text = json.loads(sys.stdin.readline())["text"]
    parts = []
    stream = graph.astream({"messages": [HumanMessage(content=text)]}, stream_mode=["messages", "updates"],
                           subgraphs=True)
    async for chunk in stream:
        parts.append(chunk)
    sys.stdout.write(json.dumps({"events": len(parts)}) + "\\n")
    sys.stdout.flush()

asyncio.run(main())
"""

AGENTS: dict[str, tuple[str, str]] = {
    # name: (script, protocol: "acp" or "loop")
    "pydantic-acp": (PYDANTIC_ACP, "acp"),
    "pydantic-ai alone": (PYDANTIC_ALONE, "loop"),
    "langchain-acp": (LANGCHAIN_ACP, "acp"),
    "LangGraph alone": (LANGGRAPH_ALONE, "loop"),
    "bare SDK agent": (BARE_AGENT, "acp"),
}

FRAMEWORK_OF = {"pydantic-acp": "pydantic-ai alone", "langchain-acp": "LangGraph alone"}


@dataclass
class Start:
    """One configuration's seconds, a value per run: wall time, and the agent process's CPU time by then."""

    initialize: list[float] = field(default_factory=list[float])
    first_prompt: list[float] = field(default_factory=list[float])
    initialize_cpu: list[float] = field(default_factory=list[float])
    first_prompt_cpu: list[float] = field(default_factory=list[float])


def cpu_seconds(pid: int) -> float:
    """CPU time of process `pid` so far, its ended threads' included (`utime` + `stime` of
    `/proc/PID/stat`, in clock ticks: 10 ms here). Summing each live thread's `schedstat` would
    drop a warm-up thread's time once the thread has ended."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _line(method: str, request_id: int, params: dict[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"


async def one_start(name: str, workdir: Path, env: dict[str, str], into: Start) -> None:
    """Spawn `name` once; note its spawn-to-initialize and spawn-to-first-answer seconds."""
    script, protocol = AGENTS[name]
    path = workdir / f"{name.replace(' ', '_')}.py"
    if not path.exists():
        path.write_text(script)
    argv = [sys.executable, str(path)]
    if name == "bare SDK agent":
        argv.append("0")
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env=env, cwd=workdir,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def answer(request_id: int) -> dict[str, object]:
        while line := await stdout.readline():
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message
        raise RuntimeError(f"{name} exited before answering")

    try:
        if protocol == "loop":
            if not await stdout.readline():  # the framework imported and the agent built: the floor
                raise RuntimeError(f"{name} exited before it was ready")
            into.initialize.append(time.perf_counter() - start)
            into.initialize_cpu.append(cpu_seconds(process.pid))
            stdin.write(json.dumps({"text": "stream 2"}).encode() + b"\n")
            await stdin.drain()
            if not await stdout.readline():
                raise RuntimeError(f"{name} exited before answering")
            into.first_prompt.append(time.perf_counter() - start)
            into.first_prompt_cpu.append(cpu_seconds(process.pid))
            return
        stdin.write(_line("initialize", 0, {"protocolVersion": 1, "clientCapabilities": {}}))
        await stdin.drain()
        await answer(0)
        into.initialize.append(time.perf_counter() - start)
        into.initialize_cpu.append(cpu_seconds(process.pid))
        stdin.write(_line("session/new", 1, {"cwd": str(workdir), "mcpServers": []}))
        await stdin.drain()
        sid = (await answer(1))["result"]["sessionId"]  # pyright: ignore[reportIndexIssue, reportUnknownVariableType]
        prompt: dict[str, object] = {"sessionId": sid, "prompt": [{"type": "text", "text": "stream 2"}]}
        stdin.write(_line("session/prompt", 2, prompt))
        await stdin.drain()
        result = await answer(2)
        into.first_prompt.append(time.perf_counter() - start)
        into.first_prompt_cpu.append(cpu_seconds(process.pid))
        assert result["result"]["stopReason"] == "end_turn", result  # pyright: ignore[reportIndexIssue]
    finally:
        if not stdin.is_closing():
            stdin.close()
        await process.wait()


def environments(root: Path, cache: str) -> dict[str, dict[str, str]]:
    """The process environments to measure: with a filled bytecode cache, without any, or both."""
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    base["ACPKIT_STATE_DIR"] = str(root / "state")
    out: dict[str, dict[str, str]] = {}
    if cache in ("both", "warm"):
        out["cached"] = {**base, "PYTHONPYCACHEPREFIX": str(root / "pycache")}
    if cache == "in place":  # the environment's own bytecode cache, as it is (the quick page run)
        out["cached"] = base
    if cache in ("both", "none"):
        (root / "empty").mkdir(exist_ok=True)
        out["no cache"] = {**base, "PYTHONPYCACHEPREFIX": str(root / "empty"), "PYTHONDONTWRITEBYTECODE": "1"}
    return out


async def measure(runs: int, cache: str = "both", agents: list[str] | None = None) -> dict[tuple[str, str], Start]:
    """Every (bytecode mode, agent), interleaved run by run, after one unmeasured run of each (none with
    `cache="in place"`: the environment's own bytecode cache is already filled)."""
    names = agents or list(AGENTS)
    with tempfile.TemporaryDirectory(prefix="acpkit-start-") as tmp:
        root = Path(tmp)
        envs = environments(root, cache)
        results = {(mode, name): Start() for mode in envs for name in names}
        for env in envs.values() if cache != "in place" else ():  # fills the cache and the store; not counted
            for name in names:
                await one_start(name, root, env, Start())
        for _ in range(runs):
            for (mode, name), into in results.items():
                await one_start(name, root, envs[mode], into)
        return results


def ms(values: list[float]) -> float:
    return statistics.median(values) * 1000 if values else float("nan")


def report(results: dict[tuple[str, str], Start]) -> list[str]:
    """The table as text lines: wall ms (agent CPU ms) and the ratios of each."""
    head = f"{'bytecode':<10}{'agent':<20}{'initialize':>16}{'x bare SDK':>14}{'+ framework':>14}"
    head += f"{'first prompt':>16}{'x alone':>14}"
    units = f"{'':<30}{'wall (CPU) ms':>16}{'wall (CPU)':>14}{'ms':>14}{'wall (CPU) ms':>16}{'wall (CPU)':>14}"
    lines = [head, units]
    for (mode, name), start in results.items():
        bare = results.get((mode, "bare SDK agent"))
        alone = results.get((mode, FRAMEWORK_OF.get(name, "")))
        init = f"{ms(start.initialize):.0f} ({ms(start.initialize_cpu):.0f})" if start.initialize else "-"
        x_bare = ""
        if bare is not None and start.initialize and name != "bare SDK agent":
            wall = ms(start.initialize) / ms(bare.initialize)
            x_bare = f"{wall:.2f} ({ms(start.initialize_cpu) / ms(bare.initialize_cpu):.2f})"
        beyond = ""
        if alone is not None and start.initialize and alone.initialize:
            beyond = f"{ms(start.initialize) - ms(alone.initialize):+.0f}"
        first = f"{ms(start.first_prompt):.0f} ({ms(start.first_prompt_cpu):.0f})"
        x_alone = ""
        if alone is not None:
            wall = ms(start.first_prompt) / ms(alone.first_prompt)
            x_alone = f"{wall:.2f} ({ms(start.first_prompt_cpu) / ms(alone.first_prompt_cpu):.2f})"
        lines.append(f"{mode:<10}{name:<20}{init:>16}{x_bare:>14}{beyond:>14}{first:>16}{x_alone:>14}")
    return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cache", choices=("both", "warm", "none", "in place"), default="both")
    parser.add_argument("--agents", default=",".join(AGENTS), help="comma-separated, of: " + ", ".join(AGENTS))
    ns = parser.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"start-up, median of {ns.runs} interleaved runs; {os.cpu_count()} cores, load {load}")
    results = await measure(ns.runs, ns.cache, ns.agents.split(","))
    print("\n".join(report(results)))
    print(f"load at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
