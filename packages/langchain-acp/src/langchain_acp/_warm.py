"""Warm LangChain and LangGraph up at start-up, so the first prompt costs what later ones do.

The schedule is core's ([`acpkit_core.runner.warmup`][acpkit_core.runner.warmup]); this module supplies what is
LangChain's. The first turn of a process imports the modules LangChain imports on a chat model's
first run (its tracers, the v0 content-block translator) and, unless the runner imported it at
start-up, the embedded saver (`aiosqlite`, LangGraph's SQLite saver): from a few milliseconds with a
bytecode cache to twenty-odd without one. Those are imported at once; the throwaway run (a graph of
its own with its own scripted chat model, the user's graph never run, streamed as the runner
streams) waits for a quiet moment. No model of LangChain's fakes and no state read back: nothing
the user's graph does not need.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from acpkit_core.runner import warmup

__all__ = ["FIRST_RUN_MODULES", "warm_up"]

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


def warm_up() -> threading.Thread:
    """Start the warm-up thread (once per process) and return it."""
    return warmup.warm_up("langchain-acp", imports=FIRST_RUN_MODULES, throwaway=_run)


async def _run() -> None:
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    from langgraph.checkpoint.memory import InMemorySaver
    from langsmith.run_helpers import tracing_context  # pyright: ignore[reportUnknownVariableType]

    from ._callbacks import AcpCallbackHandler
    from ._message_tap import MessageTap

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

    async def nowhere(namespace: tuple[str, ...], mode: str, data: Any) -> None:
        pass

    graph: Any = create_agent(WarmUpModel(), tools=[], checkpointer=InMemorySaver())  # pyright: ignore[reportUnknownVariableType]
    handler = AcpCallbackHandler(stream_tokens=False)
    tap = MessageTap(nowhere)
    config: Any = {"configurable": {"thread_id": "warm-up"}, "callbacks": [*handler.handlers(), tap]}
    # Never traced: with LangSmith tracing on (LANGSMITH_TRACING), it would record a run nobody made.
    with tracing_context(enabled=False):
        stream: Any = graph.astream(
            {"messages": [HumanMessage(content="warm up")]},
            config,
            stream_mode="updates",
            subgraphs=True,
            durability="exit",
        )
        async for namespace, data in stream:
            await tap.updates(namespace, data)
