"""langchain-acp figures, side by side in one run.

    uv run python bench/langchain_bench.py [--tokens 2000]

1. per-token overhead: the same `create_agent` graph streaming N tokens, consumed by its own
   `astream(stream_mode="messages")`; served through ACP to an in-process client (the full
   path: runner, emitter, JSON-RPC framing, and the SDK client validating every update in the
   same process); and served by a separate agent process over real stdio to a raw client that
   only reads lines (what an editor sees; the client's own parsing is not counted);
2. cold start: spawning `examples/langgraph_agent.py` until `initialize` answers;
3. a turn with 100 tool calls (one model response calling a tool 100 times, then an answer).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "langchain"))

from acpkit_core.testing import AcpTestClient  # noqa: E402
from fake_model import Call, FakeChatModel, Reply  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_acp import create_acp_agent  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from _stdio_client import prompt_seconds  # noqa: E402


@tool
def ping(n: int) -> str:
    """Answer pong."""
    return f"pong {n}"


def token_graph(tokens: int):
    return create_agent(FakeChatModel(script=[Reply(text=["tok "] * tokens)], repeat_last=True), tools=[])


async def raw_stream(tokens: int, runs: int) -> float:
    graph = token_graph(tokens)
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        async for _chunk in graph.astream({"messages": [HumanMessage(content="go")]}, stream_mode="messages"):
            pass
        best = min(best, time.perf_counter() - start)
    return best


class _NullEmitter:
    """An emitter that drops everything: measures the adapter alone, without the transport."""

    def new_message(self) -> None: ...
    async def text(self, delta: str) -> None: ...
    async def thought(self, delta: str) -> None: ...
    async def tool_call(self, *args: object, **kwargs: object) -> None: ...
    async def tool_call_update(self, *args: object, **kwargs: object) -> None: ...
    async def plan(self, items: object) -> None: ...
    async def usage(self, usage: object) -> None: ...


async def mapped_stream(tokens: int, runs: int) -> float:
    """The runner's streaming path (checkpointer, `updates` and the message tap, subgraphs, the mapper)
    into a null emitter."""
    from acpkit_core.runner.tool_lifecycle import ToolCalls
    from langchain_acp._events import StreamMapper
    from langchain_acp._message_tap import MessageTap
    from langgraph.checkpoint.memory import InMemorySaver

    graph = token_graph(tokens).copy(update={"checkpointer": InMemorySaver()})
    emit = _NullEmitter()
    best = float("inf")
    for i in range(runs):
        mapper = StreamMapper(emit, ToolCalls(emit))  # type: ignore[arg-type]
        tap = MessageTap(mapper.feed)  # the messages, from the run's callbacks (as the runner takes them)
        start = time.perf_counter()
        async for ns, data in graph.astream(
            {"messages": [HumanMessage(content="go")]},
            {"configurable": {"thread_id": f"t{i}"}, "callbacks": [tap]},
            stream_mode="updates",
            subgraphs=True,
        ):
            await tap.updates(ns, data)
        best = min(best, time.perf_counter() - start)
    return best


async def acp_stream(tokens: int, runs: int, coalesce_ms: float = 0.0) -> float:
    agent = create_acp_agent(token_graph(tokens), store="memory", coalesce_ms=coalesce_ms)
    best = float("inf")
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        for _ in range(runs):
            sid = await c.new_session()
            start = time.perf_counter()
            r = await c.prompt("go", session_id=sid)
            best = min(best, time.perf_counter() - start)
            assert len(r.text) == 4 * tokens
    return best


STREAM_SERVER = """
import sys
sys.path.insert(0, sys.argv[2])
from fake_model import FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_acp import run_acp
N = int(sys.argv[1])
run_acp(create_agent(FakeChatModel(script=[Reply(text=["tok "] * N)], repeat_last=True), tools=[]), store="memory")
"""


async def over_stdio(tokens: int, runs: int) -> float:
    """Seconds of one prompt streaming `tokens` chunks from an agent process, read by a raw JSON-RPC client."""
    return min(await prompt_seconds(STREAM_SERVER, str(tokens), str(ROOT / "tests" / "langchain"), repeat=runs))


async def cold_start() -> float:
    start = time.perf_counter()
    async with AcpTestClient.spawn(sys.executable, str(ROOT / "examples" / "langgraph_agent.py")) as c:
        await c.initialize()
        return time.perf_counter() - start


def tools_graph(count: int = 100):
    calls = [Call("ping", {"n": i}, f"p{i}") for i in range(count)]
    return create_agent(FakeChatModel(script=[Reply(calls=calls), Reply(text="all pinged")]), tools=[ping])


async def hundred_tools_alone(count: int = 100) -> float:
    """The same 100-tool-call turn through the graph's own `astream`."""
    graph = tools_graph(count)
    start = time.perf_counter()
    async for _chunk in graph.astream({"messages": [HumanMessage(content="ping a lot")]}, stream_mode="messages"):
        pass
    return time.perf_counter() - start


async def hundred_tools(count: int = 100) -> tuple[float, int]:
    agent = create_acp_agent(tools_graph(count), store="memory")
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        start = time.perf_counter()
        r = await c.prompt("ping a lot", session_id=sid)
        elapsed = time.perf_counter() - start
    assert sum(t.status == "completed" for t in r.tool_calls.values()) == count
    return elapsed, len(r.updates)


async def main(tokens: int, runs: int) -> None:
    raw = await raw_stream(tokens, runs)
    mapped = await mapped_stream(tokens, runs)
    served = await acp_stream(tokens, runs)
    coalesced = await acp_stream(tokens, runs, coalesce_ms=20)
    stdio = await over_stdio(tokens, runs)
    print(f"per-token, {tokens} tokens (best of {runs}):")
    rows = [
        ("graph.astream(messages)", raw),
        ("runner streaming path, null emitter", mapped),
        ("served over ACP (in-process client)", served),
        ("served over ACP, coalesce_ms=20", coalesced),
        ("agent process over real stdio", stdio),
    ]
    for label, value in rows:
        print(f"  {label:38} {value * 1000:8.1f} ms  {value / tokens * 1e6:6.1f} us/token  {value / raw:5.2f}x")
    cold = await cold_start()
    print(f"cold start to initialize (examples/langgraph_agent.py): {cold * 1000:.0f} ms")
    await hundred_tools_alone()  # warm up
    alone = min([await hundred_tools_alone() for _ in range(runs)])
    elapsed, updates = min([await hundred_tools() for _ in range(runs)])
    print(f"a turn with 100 tool calls (best of {runs}):")
    print(f"  graph.astream(messages)                {alone * 1000:8.1f} ms")
    print(
        f"  served over ACP (in-process client)    {elapsed * 1000:8.1f} ms  {updates} updates  {elapsed / alone:5.2f}x"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as state:
        os.environ["ACPKIT_STATE_DIR"] = state
        asyncio.run(main(args.tokens, args.runs))
