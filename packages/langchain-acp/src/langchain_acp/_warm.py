"""Warm LangChain and LangGraph up at start-up, so the first prompt costs what later ones do.

The first run of a process imports the embedded saver (`aiosqlite`, LangGraph's SQLite saver),
configures LangChain's callback machinery, builds pydantic validators and serializers of the
message classes: about a hundred milliseconds that would otherwise land on the first prompt.
[`warm_up`][langchain_acp._warm.warm_up] does it once per process in a daemon thread, with a
throwaway graph of its own (the user's graph is never run), while the client is still
initializing.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

__all__ = ["warm_up"]

_lock = threading.Lock()
_thread: threading.Thread | None = None


def warm_up() -> threading.Thread:
    """Start the warm-up thread (once per process) and return it."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_warm, name="langchain-acp-warm-up", daemon=True)
            _thread.start()
        return _thread


def _warm() -> None:
    with contextlib.suppress(Exception):  # warming is best effort: the first prompt is just slower
        import aiosqlite  # noqa: F401  # pyright: ignore[reportUnusedImport]

        from . import _message_saver  # noqa: F401  # pyright: ignore[reportUnusedImport]

        asyncio.run(_run())


async def _run() -> None:
    from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from ._callbacks import AcpCallbackHandler

    model = GenericFakeChatModel(messages=iter([AIMessage(content="warm")]))
    graph: Any = create_agent(model, tools=[], checkpointer=InMemorySaver())  # pyright: ignore[reportUnknownVariableType]
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
    await graph.aget_state(config)
