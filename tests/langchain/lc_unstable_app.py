"""A LangChain `create_agent` graph for the unstable surfaces over stdio: a tool (its `name`), todos
(`TodoListMiddleware`: the plan), LangChain's own `SummarizationMiddleware` (a scripted summary
model that streams its summary in two pieces), MCP servers through `AcpMcpMiddleware`, and
`max_turn_requests=4` (a limit reached; the summarization's own model call counts as a request).

Turn 1 writes todos and calls `look`, then answers; turn 2 finds five messages or more, so the
middleware summarizes all but the last two, and the todo is done; turn 3 calls `look` until the
request limit stops it.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware, TodoListMiddleware
from langchain_acp import AcpMcpMiddleware, run_acp
from langchain_core.messages import BaseMessage
from langchain_core.tools import tool

sys.path.insert(0, str(Path(__file__).parent))
from fake_model import Call, FakeChatModel, Reply

SUMMARY = "The user said hello; the agent looked around and found nothing."


@tool
def look() -> str:
    """Look around."""
    return "nothing here"


_looks = itertools.count(2)


def look_again(messages: list[BaseMessage]) -> Reply:
    return Reply(calls=[Call("look", {}, f"look-{next(_looks)}")])


model = FakeChatModel(
    script=[
        Reply(
            calls=[
                Call("write_todos", {"todos": [{"content": "look", "status": "in_progress"}]}, "plan-1"),
                Call("look", {}, "look-1"),
            ]
        ),
        Reply(text="All clear."),
        Reply(calls=[Call("write_todos", {"todos": [{"content": "look", "status": "completed"}]}, "plan-2")]),
        Reply(text="Still clear."),
        look_again,  # from here on, every call looks again: only the request limit ends the turn
    ],
    repeat_last=True,
)
SUMMARY_PARTS = ("The user said hello; ", "the agent looked around and found nothing.")
summarizer = FakeChatModel(script=[Reply(text=SUMMARY_PARTS)], repeat_last=True)  # streamed in two pieces
middleware: list[Any] = [
    AcpMcpMiddleware(),
    TodoListMiddleware(),
    SummarizationMiddleware(model=summarizer, trigger=("messages", 5), keep=("messages", 2)),
]
graph = create_agent(model, tools=[look], middleware=middleware)

if __name__ == "__main__":
    run_acp(graph, name="unstable", store="memory", max_turn_requests=4)
