"""Warm pydantic-ai up at start-up, so the first prompt costs what later ones do.

The schedule is core's ([`acpkit_core.runner.warmup`][acpkit_core.runner.warmup]); this module supplies what is
pydantic-ai's. What a first turn pays that later ones do not (cProfile of a fresh process's first
turn against its second): building the validator and serializer of the history's TypeAdapter
(`ModelMessagesTypeAdapter`, deferred by pydantic-ai until first use: tens of milliseconds),
anyio's asyncio back end, imported on the first run, and `sysconfig`'s paths, read on the first
run. These are done at once, the user's agent never
run. The rest of a first run (pydantic-ai's run graph and its first-use caches, a few
milliseconds) is warmed by a throwaway run of an agent of its own once the process is quiet.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from acpkit_core.runner import warmup

__all__ = ["FIRST_RUN_MODULES", "warm_up"]

FIRST_RUN_MODULES = ("anyio._backends._asyncio",)
"""What the first turn of a process would import."""


def warm_up() -> threading.Thread:
    """Start the warm-up thread (once per process) and return it."""
    return warmup.warm_up("pydantic-acp", imports=FIRST_RUN_MODULES, prepare=_prepare, throwaway=_run)


def _prepare() -> None:
    import sysconfig

    from pydantic_ai.messages import ModelMessagesTypeAdapter

    sysconfig.get_paths()  # computed once per process, read on a first run (whether an installed package started it)

    # Builds the deferred validator and serializer (both at once) that loading and saving a history use.
    ModelMessagesTypeAdapter.dump_python(ModelMessagesTypeAdapter.validate_python([]), mode="json")


async def _run() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "warm"

    async def events(ctx: Any, stream: AsyncIterable[Any]) -> None:
        async for _ in stream:
            pass

    result = await Agent(FunctionModel(stream_function=stream)).run("warm up", event_stream_handler=events)
    ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode="json"))
