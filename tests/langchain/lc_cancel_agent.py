"""A LangGraph agent process whose scripted model writes one line to `$MODEL_CALLS` per call.

    python lc_cancel_agent.py SHAPE TOOL

SHAPE is the graph: `create_agent`, `state_graph` (a hand-built `StateGraph` with a `ToolNode`),
`state_graph_sync` (the same with a sync model node, which LangGraph runs in a worker thread) or
`deepagents` (the main agent hands the work to a subagent with `task`; the subagent calls the tool).
TOOL is what the model calls, again and again (each reply calls it anew, as a model that keeps
trying would): `delete_file` (the permission policy asks about it); `finishes_anyway` (an async tool
that swallows the cancellation and returns its result as soon as the turn is cancelled) or
`finishes_anyway_sync` (the same in a worker thread): both return inside the moment the server
gives a cancelled run to stop on its own, so the graph moves on to its next step; or `stubborn`
(an async tool that swallows the cancellation and returns after two seconds, after the server gave
up waiting for it).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from acpkit_core.permissions import PermissionPolicy
from fake_model import Call, FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_acp import current_acp, run_acp
from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

SHAPE, TOOL = sys.argv[1], sys.argv[2]
CALLS = Path(os.environ["MODEL_CALLS"])


class CountingModel(FakeChatModel):
    """Appends `<label>` to the calls file at each model call (before it streams anything)."""

    label: str = "model"

    def _next(self, messages: list[BaseMessage], tool_names: list[str]) -> Reply:
        with CALLS.open("a") as calls:
            calls.write(self.label + "\n")
        return super()._next(messages, tool_names)


@tool
def delete_file(path: str) -> str:
    """Delete a file (pretend)."""
    return f"deleted {path}"


@tool
async def stubborn(path: str) -> str:
    """Takes two seconds and ignores cancellation."""
    deadline = time.monotonic() + 2.0
    while (left := deadline - time.monotonic()) > 0:
        try:
            await asyncio.sleep(left)
        except asyncio.CancelledError:
            continue  # a badly behaved tool: it swallows the cancellation and goes on
    return f"done with {path}"


def _cancelled() -> bool:
    binding = current_acp()
    return binding is not None and binding.gate.cancelled


@tool
async def finishes_anyway(path: str) -> str:
    """Works until the turn is cancelled, then returns as if it had finished."""
    deadline = time.monotonic() + 5.0
    while not _cancelled() and time.monotonic() < deadline:
        try:
            await asyncio.sleep(0.005)
        except asyncio.CancelledError:
            continue
    return f"done with {path}"


@tool
def finishes_anyway_sync(path: str) -> str:
    """Works (in a worker thread) until the turn is cancelled, then returns as if it had finished."""
    deadline = time.monotonic() + 5.0
    while not _cancelled() and time.monotonic() < deadline:
        time.sleep(0.005)
    return f"done with {path}"


TOOLS: dict[str, BaseTool] = {
    "delete_file": delete_file,
    "stubborn": stubborn,
    "finishes_anyway": finishes_anyway,
    "finishes_anyway_sync": finishes_anyway_sync,
}


def calling(label: str) -> CountingModel:
    """A model that calls the tool at every call (a new id each time)."""
    replies = [Reply(text=f"call {i}. ", calls=[Call(TOOL, {"path": "a.txt"}, f"c{i}")]) for i in range(1, 20)]
    return CountingModel(script=replies, label=label)


def state_graph(model: CountingModel, tools: list[BaseTool], *, sync: bool = False) -> Any:
    bound = model.bind_tools(tools)

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    def call_model_sync(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model_sync if sync else call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, ["tools", END])
    builder.add_edge("tools", "model")
    return builder.compile()


def deep_agent() -> Any:
    from deepagents import create_deep_agent

    worker = {
        "name": "worker",
        "description": "Does the work.",
        "system_prompt": "You do the work.",
        "tools": [TOOLS[TOOL]],
        "model": calling("subagent"),
    }
    task = Call("task", {"description": "Do the work.", "subagent_type": "worker"}, "task1")
    main = CountingModel(script=[Reply(text="Delegating. ", calls=[task]), Reply(text="Done.")], label="main")
    return create_deep_agent(model=main, subagents=[worker])  # pyright: ignore[reportArgumentType]


if SHAPE == "create_agent":
    graph = create_agent(calling("model"), tools=[TOOLS[TOOL]])
elif SHAPE.startswith("state_graph"):
    graph = state_graph(calling("model"), [TOOLS[TOOL]], sync=SHAPE.endswith("_sync"))
else:
    graph = deep_agent()

run_acp(graph, name="cancel-agent", store="memory", permission_policy=PermissionPolicy(ask=("delete_*",)))
