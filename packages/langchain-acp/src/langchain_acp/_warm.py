"""Warm LangChain and LangGraph up at start-up, so the first prompt costs what later ones do.

The first turn of a process imports the modules LangChain imports on a chat model's first run
(its tracers, the v0 content-block translator) and, unless the runner imported it at start-up,
the embedded saver (`aiosqlite`, LangGraph's SQLite saver): from a few milliseconds with a
bytecode cache to twenty-odd without one, that would otherwise land on the first prompt.
[`warm_up`][langchain_acp._warm.warm_up] imports them once per process in a daemon thread while
the client is still initializing. Then, once the process has had no new session for
`QUIET_SECONDS` and no turn has started, it runs a throwaway graph of its own (its own scripted
chat model: the user's graph is never run) through the code paths a turn takes, streaming as the
runner does.

Everything runs on one interpreter lock: work the warm-up does while a turn runs slows the turn
down by as much. Hence the order (what the first turn needs first), no work the user's graph
does not need (no model of LangChain's fakes, no state read back), and the throwaway run left
for a quiet moment: a client that sends its first prompt right after `session/new` finds the
imports done and pays the first run's few remaining milliseconds itself rather than waiting for
a whole throwaway run to finish beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

__all__ = ["FIRST_RUN_MODULES", "QUIET_SECONDS", "session_opened", "turn_started", "warm_up"]

FIRST_RUN_MODULES = (
    "aiosqlite",
    "langgraph.checkpoint.sqlite.aio",
    "langchain_acp._message_saver",
    # Imported by LangChain on a chat model's first run in a process.
    "langchain_core.tracers.stdout",
    "langchain_core.tracers.run_collector",
    "langchain_core.tracers.context",
    "langchain_core.messages.block_translators.langchain_v0",
)
"""What the first turn of a process would import, the embedded saver's modules first."""

QUIET_SECONDS = 0.05
"""How long after start-up or the last `session/new` the throwaway run waits for a first prompt."""

_lock = threading.Lock()
_thread: threading.Thread | None = None
_turn_started = threading.Event()
_last_activity = time.monotonic()


def warm_up() -> threading.Thread:
    """Start the warm-up thread (once per process) and return it."""
    global _thread
    with _lock:
        if _thread is None:
            session_opened()
            _thread = threading.Thread(target=_warm, name="langchain-acp-warm-up", daemon=True)
            _thread.start()
        return _thread


def session_opened() -> None:
    """A session was opened: a first prompt may follow at once, so the throwaway run waits a little longer."""
    global _last_activity
    _last_activity = time.monotonic()


def turn_started() -> None:
    """A turn has started: the warm-up does not begin its throwaway run (it would only slow the turn down)."""
    _turn_started.set()


def _warm() -> None:
    # Warming is best effort: whatever fails here, the first prompt is just slower.
    for name in FIRST_RUN_MODULES:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    while not _turn_started.is_set():
        quiet = time.monotonic() - _last_activity
        if quiet >= QUIET_SECONDS:
            with contextlib.suppress(Exception):
                asyncio.run(_run())
            return
        _turn_started.wait(QUIET_SECONDS - quiet)


async def _run() -> None:
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    from langgraph.checkpoint.memory import InMemorySaver

    from ._callbacks import AcpCallbackHandler

    def chunks() -> Iterator[ChatGenerationChunk]:
        yield ChatGenerationChunk(message=AIMessageChunk(content="warm"))
        usage: Any = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        last = AIMessageChunk(content="", usage_metadata=usage, response_metadata={"finish_reason": "stop"})
        yield ChatGenerationChunk(message=last)

    class WarmUpModel(BaseChatModel):
        """Answers "warm", streamed in two chunks as a provider's model streams."""

        @property
        def _llm_type(self) -> str:
            return "acpkit-warm-up"

        def _generate(  # pyright: ignore[reportIncompatibleMethodOverride]
            self, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any
        ) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="warm"))])

        async def _astream(  # pyright: ignore[reportIncompatibleMethodOverride]
            self, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any
        ) -> AsyncIterator[ChatGenerationChunk]:
            for chunk in chunks():
                yield chunk

    graph: Any = create_agent(WarmUpModel(), tools=[], checkpointer=InMemorySaver())  # pyright: ignore[reportUnknownVariableType]
    handler = AcpCallbackHandler(stream_tokens=False)
    config: Any = {"configurable": {"thread_id": "warm-up"}, "callbacks": handler.handlers()}
    stream: Any = graph.astream(
        {"messages": [HumanMessage(content="warm up")]},
        config,
        stream_mode=["messages", "updates"],
        subgraphs=True,
        durability="exit",
    )
    async for _ in stream:
        pass
