"""An `acpkit serve` target: a LangGraph agent (the fake chat model) whose answer counts the user's turns.

Its store comes from `$REPLICA_STORE`, so the graph checkpoints in the embedded saver of that store.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "langchain"))

from fake_model import FakeChatModel, Reply  # pyright: ignore[reportMissingImports]
from langchain.agents import create_agent
from langchain_acp import create_acp_agent
from langchain_core.messages import BaseMessage, HumanMessage


def count(messages: list[BaseMessage]) -> Reply:  # pyright: ignore[reportUnknownParameterType]
    return Reply(text=f"turn {sum(isinstance(m, HumanMessage) for m in messages)}")  # pyright: ignore[reportUnknownVariableType]


agent = create_acp_agent(
    create_agent(FakeChatModel(script=[count], repeat_last=True), tools=[]),  # pyright: ignore[reportUnknownArgumentType]
    name="lc-remote",
    store=os.environ["REPLICA_STORE"],
)
