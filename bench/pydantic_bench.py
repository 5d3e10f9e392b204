"""pydantic-acp overhead, side by side with pydantic-ai alone, in one run.

    uv run python bench/pydantic_bench.py [--tokens 2000] [--tools 100] [--repeat 5]

1. per-token streaming: the same FunctionModel streaming N text deltas, consumed by
   `agent.run_stream_events` (pydantic-ai alone); served over ACP to an in-process `AcpTestClient`
   (JSON-RPC over a socket pair, every update validated by the client in the same process); and
   served by a separate agent process over real stdio to a raw client that only reads lines
   (what an editor sees; the client's own parsing is not counted);
2. a turn with N tool calls (one response calling a tool N times, then an answer);
3. cold start: a fresh `python` process serving an agent over stdio, until `initialize` answers.

Figures are medians of `--repeat` runs. The target is ACP within 1.5x of pydantic-ai for streaming.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

warnings.filterwarnings("ignore", category=DeprecationWarning)

from acpkit_core.prompt.ir import Prompt, Text  # noqa: E402
from acpkit_core.runner.tool_lifecycle import ToolCalls  # noqa: E402
from acpkit_core.runner.types import ClientInfo, Session  # noqa: E402
from acpkit_core.testing import AcpTestClient  # noqa: E402
from pydantic_acp import PydanticRunner, create_acp_agent  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _stdio_client import prompt_seconds  # noqa: E402


def streaming_agent(tokens: int) -> Agent[None, str]:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for i in range(tokens):
            yield f"t{i} "

    return Agent(FunctionModel(stream_function=stream, model_name="bench"))


def tools_agent(calls: int) -> Agent[None, str]:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
            yield "all done"
            return
        for i in range(calls):
            yield {i: DeltaToolCall(name="lookup", json_args=f'{{"key": "k{i}"}}', tool_call_id=f"c{i}")}

    agent = Agent(FunctionModel(stream_function=stream, model_name="bench"))

    @agent.tool_plain
    def lookup(key: str) -> str:
        return f"value of {key}"

    return agent


async def alone(agent: Agent[None, str]) -> None:
    async with agent.run_stream_events("go") as events:
        async for _ in events:
            pass


async def over_acp(agent: Agent[None, str], **options: object) -> None:
    acp_agent = create_acp_agent(agent, store="memory", **options)  # pyright: ignore[reportArgumentType]
    async with AcpTestClient.connect(acp_agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("go", session_id=sid)
        assert r.stop_reason == "end_turn"


class _NullEmitter:
    """Drops every update: isolates the runner from the server and the transport."""

    def new_message(self) -> None:
        pass

    async def text(self, delta: str) -> None:
        pass

    async def thought(self, delta: str) -> None:
        pass

    async def tool_call(self, *args: object, **kwargs: object) -> None:
        pass

    async def tool_call_update(self, *args: object, **kwargs: object) -> None:
        pass

    async def send_tool_call(self, *args: object, **kwargs: object) -> None:
        pass

    async def send_tool_call_update(self, *args: object, **kwargs: object) -> None:
        pass

    async def plan(self, items: object) -> None:
        pass

    async def usage(self, usage: object) -> None:
        pass


class _NullTurn:
    """A `Turn` with no client behind it."""

    def __init__(self) -> None:
        self.session = Session(id="bench", cwd=tempfile.gettempdir())
        self.prompt = Prompt((Text(text="go"),))
        self.emit = _NullEmitter()
        self.client = ClientInfo()
        self.model_id = None
        self.cancelled = False
        self.plan_only = False
        self.tool_calls = ToolCalls(self.emit, self)  # pyright: ignore[reportArgumentType]

    async def wait_cancelled(self) -> None:
        await asyncio.Event().wait()

    def classify_tool(self, name: str, args: object = None) -> str:
        return "other"

    def tool_locations(self, args: object) -> list[tuple[str, int | None]]:
        return []

    def tool_allowed(self, name: str, kind: str) -> bool:
        return True

    def needs_permission(self, name: str, kind: str) -> bool:
        return False


async def runner_alone(agent: Agent[None, str]) -> None:
    """The pydantic-acp runner with a turn that drops every update (no server, no transport)."""
    await PydanticRunner(agent).run_turn(_NullTurn())  # pyright: ignore[reportArgumentType]


async def timed(run: Callable[[], Awaitable[None]], repeat: int) -> float:
    await run()  # warm up imports and caches
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        await run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def session_setup(repeat: int) -> float:
    """Connect, initialize and open a session, without a turn (subtracted from the ACP figures)."""

    async def run() -> None:
        async with AcpTestClient.connect(create_acp_agent(Agent("test"), store="memory")) as c:
            await c.initialize()
            await c.new_session()

    return await timed(run, repeat)


STREAM_SERVER = """
import sys
from pydantic_ai import Agent
from pydantic_ai.models.function import FunctionModel
from pydantic_acp import run_acp
N = int(sys.argv[1])
async def stream(messages, info):
    for i in range(N):
        yield f"t{i} "
run_acp(Agent(FunctionModel(stream_function=stream, model_name="bench")), store="memory")
"""


async def over_stdio(tokens: int, repeat: int) -> float:
    """Seconds of one prompt streaming `tokens` deltas from an agent process, read by a raw JSON-RPC client."""
    return statistics.median(await prompt_seconds(STREAM_SERVER, str(tokens), repeat=repeat))


COLD = "from pydantic_ai import Agent; from pydantic_acp import run_acp; run_acp(Agent('test'), store='memory')"


async def cold_start(repeat: int) -> tuple[float, float]:
    """Seconds from process start to the `initialize` answer; and a bare `import pydantic_ai` for scale."""
    acp_times: list[float] = []
    import_times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        async with AcpTestClient.spawn(sys.executable, "-c", COLD) as c:
            await c.initialize()
            acp_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        process = await asyncio.create_subprocess_exec(sys.executable, "-c", "import pydantic_ai")
        await process.wait()
        import_times.append(time.perf_counter() - start)
    return statistics.median(acp_times), statistics.median(import_times)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--tools", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("ACPKIT_STATE_DIR", tempfile.mkdtemp(prefix="acpkit-bench-"))

    setup = await session_setup(args.repeat)
    n = args.tokens
    base = await timed(lambda: alone(streaming_agent(n)), args.repeat)
    bare = await timed(lambda: runner_alone(streaming_agent(n)), args.repeat)
    acp = await timed(lambda: over_acp(streaming_agent(n), coalesce_ms=0), args.repeat) - setup
    merged = await timed(lambda: over_acp(streaming_agent(n), coalesce_ms=5.0), args.repeat) - setup
    stdio = await over_stdio(n, args.repeat)
    print(f"streaming {n} text deltas (median of {args.repeat}; ACP minus {setup * 1e3:.1f} ms session setup)")
    print(f"  pydantic-ai run_stream_events  {base * 1e3:8.1f} ms  {base / n * 1e6:7.1f} µs/token")
    print(f"  pydantic-acp runner, no server {bare * 1e3:8.1f} ms  {bare / n * 1e6:7.1f} µs/token  {bare / base:5.2f}x")
    print(f"  over ACP                       {acp * 1e3:8.1f} ms  {acp / n * 1e6:7.1f} µs/token  {acp / base:5.2f}x")
    ratio = merged / base
    print(f"  over ACP, coalesce_ms=5        {merged * 1e3:8.1f} ms  {merged / n * 1e6:7.1f} µs/token  {ratio:5.2f}x")
    print(
        f"  agent process over real stdio  {stdio * 1e3:8.1f} ms  {stdio / n * 1e6:7.1f} µs/token  {stdio / base:5.2f}x"
    )

    k = args.tools
    base = await timed(lambda: alone(tools_agent(k)), args.repeat)
    bare = await timed(lambda: runner_alone(tools_agent(k)), args.repeat)
    acp = await timed(lambda: over_acp(tools_agent(k)), args.repeat) - setup
    print(f"a turn with {k} tool calls")
    print(f"  pydantic-ai run_stream_events  {base * 1e3:8.1f} ms  {base / k * 1e3:7.2f} ms/call")
    print(f"  pydantic-acp runner, no server {bare * 1e3:8.1f} ms  {bare / k * 1e3:7.2f} ms/call  {bare / base:5.2f}x")
    print(f"  over ACP                       {acp * 1e3:8.1f} ms  {acp / k * 1e3:7.2f} ms/call  {acp / base:5.2f}x")

    acp_cold, import_cold = await cold_start(max(1, min(args.repeat, 3)))
    print("cold start")
    print(f"  python -c 'import pydantic_ai'           {import_cold * 1e3:8.1f} ms")
    print(f"  stdio agent process until initialize     {acp_cold * 1e3:8.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
