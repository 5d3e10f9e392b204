"""An `acpkit serve --otel` target: a LangChain agent that calls a tool, then answers (a scripted chat model)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "langchain"))

from fake_model import Call, FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_core.tools import tool


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"result for {query}"


graph = create_agent(
    FakeChatModel(
        script=[Reply(calls=[Call("lookup", {"query": "notes"}, "call-1")]), Reply(text="found it")], repeat_last=True
    ),
    tools=[lookup],
)
