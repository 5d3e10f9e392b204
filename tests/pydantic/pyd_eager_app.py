"""A pydantic-ai agent whose model never hands control back while it streams (it waits, blocking,
for the client to have read its first chunk): its chunks must reach the client as it makes them.

`EAGER_MARK` in the environment is the file the client writes once it has read the first chunk.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_acp import run_acp
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

WAIT_S = 20.0


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield "first "
    mark = Path(os.environ["EAGER_MARK"])
    deadline = time.monotonic() + WAIT_S
    while not mark.exists() and time.monotonic() < deadline:
        time.sleep(0.01)  # blocks the event loop: nothing else of this process runs meanwhile
    yield "second" if mark.exists() else "unread"


agent = Agent(FunctionModel(stream_function=stream))

if __name__ == "__main__":
    run_acp(agent, name="eager", store="memory")
