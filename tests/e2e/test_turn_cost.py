"""A turn's own cost does not grow with the session (issue 11): counted, not timed.

Each adapter serves a real agent (a pydantic-ai `Agent` with a `FunctionModel`; a LangGraph
`create_agent` graph with the LangChain tests' scripted chat model) over a real ACP connection
(`AcpTestClient.connect`, an in-process socket pair) on the embedded SQLite store (for LangChain,
with the embedded SQLite checkpointer beside it). Each turn calls a tool, then answers (4 messages).
Right after each of our turns, the framework alone runs the same turn in the same process on its
own copy of the conversation (pydantic-ai `agent.run(..., message_history=...,
event_stream_handler=...)`; the graph without a checkpointer, the history passed in and streamed as
the runner streams it); the model records how many messages it was given, and both runs must have
given it the same. "Added" is ours minus the framework alone, per function or code object:

- calls: calls of Python functions (a coroutine's resumption counts as one) and of built-in functions;
- lines: Python lines run (a loop over the history shows here even when it calls nothing);
- allocated: bytes allocated while code runs on the event loop's thread (where the server, the
  runner, the framework and the store's serialization run): between two Python call or return
  events there, the rise of traced memory (`tracemalloc`) to its peak is what the code running
  there allocated, C code it called included, so a TypeAdapter validating or dumping the whole
  history in one call, or a `json.dumps` of a grown session state, counts what it built.
  `tracemalloc` traces the whole process: what another thread allocates meanwhile (the store's
  worker) is counted too, which `BYTES_SLACK` leaves room for.

Calls and lines are counted on every thread: the hooks are installed with `threading.setprofile` /
`threading.settrace` before the agent starts its threads (the session store's worker, the
checkpointer's connection thread, the warm-up), so the store's Python work on its worker counts.
What SQLite does in C is not seen (`tests/core/test_store.py::test_a_turn_appends_and_never_rewrites`
checks that a save writes only the new rows). Event-loop and thread plumbing (`asyncio`,
`selectors`, `threading`, `queue`, `concurrent.futures`, `socket`) is left out: how often the loop
polls depends on when the store's thread answers. So is the timer-driven transcript flush (its
interval is set beyond the test; the end-of-turn save writes the turn's updates). The garbage
collector is off during a measured run (a collection in one run and not the other would run
finalizers in it), so its cost over a bigger heap is not measured here.

The check, between EARLY and LATE: calls and lines of our added cost do not grow, compared by
package for Python code (`pydantic_acp`, `langgraph`, `json`, ...) and by function for built-ins.
The framework's own cost per message cancels out; LangGraph alone gets the whole history as input,
so some of LangGraph's work per message is in the floor only and our added counts may fall (by
package, it does not move LangGraph's work from one place to another into a false growth). The
allocations that grow add up to at most `BYTES_SLACK` plus `BYTES_PER_MESSAGE` per message of
history. Times are `bench/session_bench.py`'s; this test measures none.
"""

from __future__ import annotations

import gc
import sys
import sysconfig
import threading
import tracemalloc
from collections import Counter
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Generator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, cast

import pytest
from acp.schema import ToolCallStart
from acpkit_core import AcpAgent
from acpkit_core.prompt.ir import Prompt, Text
from acpkit_core.testing import AcpTestClient
from langchain.agents import create_agent
from langchain_acp import create_acp_agent as create_langchain_agent
from langchain_acp import to_human_message
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import StreamMode
from pydantic_acp import create_acp_agent as create_pydantic_agent
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import AgentStreamEvent, ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

sys.path.insert(0, str(Path(__file__).parents[1] / "langchain"))
from fake_model import Call, FakeChatModel, Reply  # the LangChain tests' scripted chat model

pytestmark = pytest.mark.timeout(120)

WARM, EARLY, LATE = 2, 4, 20
"""The turns whose calls and lines are counted (allocations: in the turn after each). The first
counting of a process is thrown away. EARLY and LATE are 64 messages apart (16 turns of 4), as long
as a run of the LangChain saver's message keys: the keys its checkpoint lists after the last run
are as many at both (that list grows up to 63 keys, then starts over)."""

BYTES_PER_MESSAGE = 64
"""Growth of the added allocations allowed per message of history, EARLY to LATE: room for lists
of the history's messages (8 bytes a message each) and the LangChain saver's check that each kept
message is the object it stored, done in C (about 50 bytes a message); rebuilding, copying or
encoding the messages costs hundreds of bytes a message or more."""

BYTES_SLACK = 16_384
"""Growth allowed whatever the length: a set somewhere in the process (asyncio's weak set of tasks,
say) resizes now and then (3 to 6 KB of growth seen in passing runs; each regression above 190 KB)."""

FLUSH_MS = 600_000.0
"""The periodic transcript flush is timer-driven (how many times it runs depends on how long the turn
takes); it is kept out of the measured turns, whose updates the end-of-turn save writes."""

_PLUMBING = ("/asyncio/", "/selectors.py", "/threading.py", "/queue.py", "/concurrent/futures/", "/socket.py")

Tally = Counter[str]


@dataclass
class Cost:
    """What one run cost, per function (calls), code object (lines) and where memory was allocated."""

    calls: Tally = field(default_factory=Tally)
    lines: Tally = field(default_factory=Tally)
    allocated: Tally = field(default_factory=Tally)

    def __sub__(self, other: Cost) -> Cost:
        return Cost(*(_minus(a, b) for a, b in zip(self.parts(), other.parts(), strict=True)))

    def parts(self) -> tuple[Tally, Tally, Tally]:
        return self.calls, self.lines, self.allocated


def _minus(a: Tally, b: Tally) -> Tally:
    """`a - b` for every key, keeping negative values (`Counter.__sub__` drops them)."""
    out = Tally(a)
    out.subtract(b)
    return out


_ROOTS = (f"{sysconfig.get_paths()['purelib']}/", f"{sysconfig.get_paths()['stdlib']}/", "/src/", "/tests/")


def _name(key: object) -> str:
    """`package/module.py:qualname` for Python code, `type.method` or `module.function` for a built-in."""
    if isinstance(key, CodeType):
        path = key.co_filename
        for root in _ROOTS:
            path = path.rsplit(root, 1)[-1]
        return f"{path}:{key.co_qualname}"
    return str(key)


def _builtin(fn: Any) -> str:
    module = getattr(fn, "__module__", None)
    qualname = str(getattr(fn, "__qualname__", None) or repr(fn))
    return f"{module}.{qualname}" if module else qualname


class Meter:
    """Counts the calls and lines of every thread, or what the event loop's thread allocates.

    `installed()` must be open before the agent starts its threads.
    """

    def __init__(self) -> None:
        self._counting = False
        self._skip: dict[CodeType, bool] = {}
        self._calls: Counter[object] = Counter()
        self._lines: Counter[object] = Counter()
        self._allocated: Counter[object] = Counter()
        self._where: CodeType | None = None  # the code running since the last event, and the memory then
        self._start = 0

    @contextmanager
    def installed(self) -> Generator[Meter]:
        """Hook every thread started inside (hooks that do nothing unless counting)."""
        old_profile, old_trace = threading.getprofile(), threading.gettrace()
        threading.setprofile(self._profile)
        threading.settrace(self._trace)
        try:
            yield self
        finally:
            threading.setprofile(old_profile)  # pyright: ignore[reportArgumentType]
            threading.settrace(old_trace)  # pyright: ignore[reportArgumentType]

    @contextmanager
    def counting(self, into: list[Cost]) -> Generator[None]:
        """Count the calls and lines of the block (all threads) and append them to `into`."""
        self._calls, self._lines = Counter(), Counter()
        with self._hooked(self._trace, self._profile):
            self._counting = True
            try:
                yield
            finally:
                self._counting = False
        into.append(Cost(calls=_named(self._calls), lines=_named(self._lines)))

    @contextmanager
    def allocating(self, into: list[Cost]) -> Generator[None]:
        """Add up what this thread allocated in the block; append it to `into`.

        Between two call or return events, the rise of traced memory to its peak is what the code
        running there allocated (C code that builds a whole structure in one call included).
        """
        self._allocated, self._where = Counter(), None
        tracemalloc.start()
        try:
            with self._hooked(None, self._memory):
                yield
        finally:
            tracemalloc.stop()
        into.append(Cost(allocated=_named(self._allocated)))

    @contextmanager
    def _hooked(self, trace: Any, profile: Any) -> Generator[None]:
        old_trace, old_profile = sys.gettrace(), sys.getprofile()
        gc.collect()
        gc.disable()
        sys.settrace(trace)
        sys.setprofile(profile)
        try:
            yield
        finally:
            sys.setprofile(old_profile)
            sys.settrace(old_trace)
            gc.enable()

    def _plumbing(self, code: CodeType) -> bool:
        skip = self._skip.get(code)
        if skip is None:
            skip = self._skip[code] = any(p in code.co_filename for p in _PLUMBING)
        return skip

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self._counting:
            return
        if event == "call":
            if not self._plumbing(frame.f_code):
                self._calls[frame.f_code] += 1
        elif event == "c_call" and not self._plumbing(frame.f_code):
            self._calls[_builtin(arg)] += 1

    def _trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        if not self._counting or self._plumbing(frame.f_code):
            return None
        return self._line

    def _line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            self._lines[frame.f_code] += 1
        return self._line

    def _memory(self, frame: FrameType, event: str, arg: Any) -> None:
        # The peak is read first and reset last, so what the hook itself allocates is never counted.
        if event[0] == "c":
            return
        peak = tracemalloc.get_traced_memory()[1]
        if self._where is not None:
            self._allocated[self._where] += peak - self._start
        code = frame.f_code
        if event == "return":
            back = frame.f_back
            code = back.f_code if back is not None else code
        self._where = None if self._plumbing(code) else code
        self._start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()


def _named(tally: Counter[object]) -> Tally:
    return Tally({_name(k): v for k, v in tally.items()})


RunTurn = Callable[[int], Awaitable[None]]


async def added_costs(meter: Meter, ours: RunTurn, alone: RunTurn, seen: list[int]) -> dict[int, tuple[Cost, int]]:
    """Run turns 1..LATE+1 of our session, each followed by the same turn of the framework alone.

    Returns, for WARM, EARLY and LATE, ours minus alone (calls and lines counted in that turn,
    allocations in the next one) and the number of messages of the conversation before the turn.
    `seen` is where the model appends the number of messages it was given at each call; ours and
    alone must have been given the same.
    """
    out: dict[int, tuple[Cost, int]] = {}
    for turn in range(1, LATE + 2):
        measure: Callable[[list[Cost]], AbstractContextManager[None]] = _unmeasured
        if turn in (WARM, EARLY, LATE):
            measure = meter.counting
        elif turn - 1 in (EARLY, LATE):
            measure = meter.allocating
        costs: list[Cost] = []
        first = len(seen)
        with measure(costs):
            await ours(turn)
        middle = len(seen)
        with measure(costs):
            await alone(turn)
        assert seen[first:middle] == seen[middle:], f"turn {turn}: ours and the framework alone saw different histories"
        if turn in (WARM, EARLY, LATE):
            out[turn] = (costs[0] - costs[1], seen[first] - 1)  # the messages before the turn's prompt
        elif costs:
            counted, messages = out[turn - 1]
            out[turn - 1] = (Cost(counted.calls, counted.lines, (costs[0] - costs[1]).allocated), messages)
    return out


async def served_costs(serve: Callable[[], AcpAgent], alone: RunTurn, seen: list[int]) -> dict[int, tuple[Cost, int]]:
    """`added_costs` of the agent `serve()` builds (inside the meter's hooks, so its threads are
    counted) over a real ACP connection, each turn a tool call `ping` and the answer `ok`."""
    meter = Meter()
    with meter.installed():
        async with AcpTestClient.connect(serve()) as client:
            await client.initialize()
            sid = await client.new_session()

            async def ours(turn: int) -> None:
                result = await client.prompt(f"turn {turn}", session_id=sid)
                assert (result.stop_reason, result.text) == ("end_turn", "ok")
                assert [u.title for u in result.updates if isinstance(u, ToolCallStart)] == ["ping"]

            return await added_costs(meter, ours, alone, seen)


@contextmanager
def _unmeasured(into: list[Cost]) -> Generator[None]:
    yield


def assert_flat(costs: dict[int, tuple[Cost, int]], framework: str) -> None:
    """Our added cost at LATE is no more than at EARLY (see the module docstring)."""
    (early, early_messages), (late, late_messages) = costs[EARLY], costs[LATE]
    grew = late - early
    problems: list[str] = []
    for label, tally in (("calls", grew.calls), ("lines run", grew.lines)):
        by_group = Tally()
        for key, value in tally.items():
            by_group[_group(key)] += value
        grown = {group for group, value in by_group.items() if value > 0}
        if grown:
            more = Tally({k: v for k, v in tally.items() if _group(k) in grown and v > 0})
            total = sum(by_group[g] for g in grown)
            problems.append(f"{label}: {total:+,} in {len(grown)} place(s); most: {_top(more)}")
    allowed = BYTES_SLACK + BYTES_PER_MESSAGE * (late_messages - early_messages)
    more = Tally({k: v for k, v in grew.allocated.items() if v > 0})
    if more.total() > allowed:
        problems.append(f"allocated: {more.total():+,} bytes (allowed {allowed:,}); most: {_top(more)}")
    assert not problems, (
        f"our added cost per turn (ours minus {framework} alone, same process) grew from turn {EARLY} "
        f"({early_messages} messages before it) to turn {LATE} ({late_messages} messages before it):\n  "
        + "\n  ".join(problems)
        + f"\n  added at turn {EARLY}: {_totals(early)}; at turn {LATE}: {_totals(late)}"
    )


def _group(key: str) -> str:
    """What a count is compared by: a built-in function by itself, Python code by its package (or module)."""
    path, colon, _ = key.partition(":")
    return path.split("/", 1)[0] if colon else key


def _top(tally: Tally, n: int = 6) -> str:
    return ", ".join(f"{k} {v:+,}" for k, v in tally.most_common(n))


def _totals(cost: Cost) -> str:
    calls, lines, allocated = (sum(t.values()) for t in cost.parts())
    return f"{calls:,} calls, {lines:,} lines, {allocated:,} bytes"


# --- pydantic-acp ----------------------------------------------------------------------------------


async def test_pydantic_turn_cost_does_not_grow_with_the_session(tmp_path: Path) -> None:
    seen: list[int] = []

    async def model(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        seen.append(len(messages))
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
            yield "ok"
        else:
            yield {0: DeltaToolCall(name="ping", json_args='{"n": 1}', tool_call_id=f"c{len(messages)}")}

    agent = Agent(FunctionModel(stream_function=model, model_name="counted"))

    @agent.tool_plain
    def ping(n: int) -> str:  # pyright: ignore[reportUnusedFunction]
        return f"pong {n}"

    history: list[ModelMessage] = []

    async def drain(ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
        async for _ in events:
            pass

    async def alone(turn: int) -> None:
        nonlocal history
        result = await agent.run(f"turn {turn}", message_history=history, event_stream_handler=drain)
        assert result.output == "ok"
        history = result.all_messages()

    def serve() -> AcpAgent:
        return create_pydantic_agent(
            agent, store=str(tmp_path / "sessions.sqlite3"), connect_mcp_servers=False, transcript_flush_ms=FLUSH_MS
        )

    assert_flat(await served_costs(serve, alone, seen), "pydantic-ai")


# --- langchain-acp ---------------------------------------------------------------------------------


class _CountingModel(FakeChatModel):
    """Calls `ping` once per turn, then answers `ok`; records how many messages it was given."""

    counts: Any  # `Any`: pydantic keeps the very list (a `list[int]` field would be a copy)

    def _next(self, messages: list[BaseMessage], tool_names: list[str]) -> Reply:
        self.counts.append(len(messages))
        if isinstance(messages[-1], ToolMessage):
            return Reply(text="ok")
        return Reply(calls=[Call("ping", {"n": 1}, f"c{len(messages)}")])


@tool
def ping(n: int) -> str:
    """Answer pong."""
    return f"pong {n}"


async def test_langchain_turn_cost_does_not_grow_with_the_session(tmp_path: Path) -> None:
    seen: list[int] = []
    graph = create_agent(_CountingModel(counts=seen), tools=[ping])
    history: Sequence[BaseMessage] = []

    async def alone(turn: int) -> None:
        nonlocal history
        # The human message our runner builds for a text prompt, so both runs see the same content.
        message = to_human_message(Prompt((Text(text=f"turn {turn}"),)))
        run_input: Any = {"messages": [*history, message]}
        modes: list[StreamMode] = ["messages", "updates", "values"]  # "values" only to keep the final state
        async for _, mode, data in graph.astream(run_input, stream_mode=modes, subgraphs=True):
            if mode == "values":
                history = cast(dict[str, Any], data)["messages"]
        assert history[-1].content == "ok"

    def serve() -> AcpAgent:
        return create_langchain_agent(graph, store=str(tmp_path / "sessions.sqlite3"), transcript_flush_ms=FLUSH_MS)

    costs = await served_costs(serve, alone, seen)
    assert (tmp_path / "langgraph-checkpoints.sqlite3").exists()  # the embedded SQLite checkpointer ran
    assert_flat(costs, "LangGraph")
