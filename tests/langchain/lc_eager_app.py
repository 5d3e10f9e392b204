"""A LangChain graph whose model never hands control back while it streams (it waits, blocking,
for the client to have read its first chunk): its chunks must reach the client as it makes them.

`EAGER_MARK` in the environment is the file the client writes once it has read the first chunk.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_acp import run_acp
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

WAIT_S = 20.0


class BlockingModel(BaseChatModel):
    """Streams "first ", then blocks (never awaiting) until the client has read it."""

    @property
    def _llm_type(self) -> str:
        return "blocking-test"

    def _generate(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="first second"))])

    async def _astream(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        yield ChatGenerationChunk(message=AIMessageChunk(content="first "))
        mark = Path(os.environ["EAGER_MARK"])
        deadline = time.monotonic() + WAIT_S
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.01)  # blocks the event loop: nothing else of this process runs meanwhile
        yield ChatGenerationChunk(message=AIMessageChunk(content="second" if mark.exists() else "unread"))


graph = create_agent(BlockingModel(), tools=[])

if __name__ == "__main__":
    run_acp(graph, name="eager", store="memory")
