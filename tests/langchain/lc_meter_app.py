"""A LangChain graph whose (scripted, offline) model says it is `gpt-4o`: the context meter over stdio.

`METER_WINDOW` in the environment sets `context_window` (the developer's window).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from langchain.agents import create_agent
from langchain_acp import run_acp
from langchain_core.tools import tool

sys.path.insert(0, str(Path(__file__).parent))
from fake_model import Call, FakeChatModel, Reply

GPT_4O = {"model_name": "gpt-4o", "model_provider": "openai"}


@tool
def look() -> str:
    """Look around."""
    return "nothing here"


model = FakeChatModel(
    script=[
        Reply(calls=[Call("look", {}, "look-1")], input_tokens=1000, output_tokens=100, extra=GPT_4O),
        Reply(text="All clear.", input_tokens=1200, output_tokens=20, extra=GPT_4O),
    ]
)
graph = create_agent(model, tools=[look])

if __name__ == "__main__":
    window = os.environ.get("METER_WINDOW")
    run_acp(graph, name="meter", store="memory", context_window=int(window) if window else None)
