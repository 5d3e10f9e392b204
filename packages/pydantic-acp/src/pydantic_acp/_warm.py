"""Warm pydantic-ai up at start-up, so the first prompt costs what later ones do.

The first run of a process builds pydantic-ai's run graph and schemas, and the first dump of a
history builds its serializer: together tens of milliseconds that would otherwise land on the
first prompt. [`warm_up`][pydantic_acp._warm.warm_up] does it once per process in a daemon
thread, with an agent of its own (the user's agent is never run), while the client is still
initializing.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

__all__ = ["warm_up"]

_lock = threading.Lock()
_thread: threading.Thread | None = None


def warm_up() -> threading.Thread:
    """Start the warm-up thread (once per process) and return it."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_warm, name="pydantic-acp-warm-up", daemon=True)
            _thread.start()
        return _thread


def _warm() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "warm"

    async def events(ctx: Any, stream: AsyncIterable[Any]) -> None:
        async for _ in stream:
            pass

    async def run() -> None:
        result = await Agent(FunctionModel(stream_function=stream)).run("warm up", event_stream_handler=events)
        dumped = ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode="json")
        ModelMessagesTypeAdapter.validate_python(dumped)

    with contextlib.suppress(Exception):  # warming is best effort: the first prompt is just slower
        asyncio.run(run())
