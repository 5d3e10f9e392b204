"""A hand-built ACP server over a plain `create_agent` graph (no ACP middleware): the gate comes from `bind_connection`.

The model deletes `old.txt` on every prompt (call ids `d1`, `d2`, ...); the tool records each run
in the file named by `$RUNS_FILE`. `session/cancel` calls `binding.cancel()`.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import acp
from acp.schema import AgentCapabilities, Implementation, InitializeResponse, NewSessionResponse, PromptResponse
from acpkit_core.permissions import PermissionPolicy
from langchain.agents import create_agent
from langchain_acp import AcpCallbackHandler, bind_connection
from langchain_acp._context import Binding
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

sys.path.insert(0, str(Path(__file__).parent))
from fake_model import Call, FakeChatModel, Reply


@tool
def delete_file(path: str) -> str:
    """Delete a file (pretend)."""
    with open(os.environ["RUNS_FILE"], "a") as runs:
        runs.write(path + "\n")
    return f"deleted {path}"


@tool
async def slow_ok() -> str:
    """Finishes after a moment."""
    await asyncio.sleep(0.3)
    return "ok"


@tool
async def explode() -> str:
    """Raises an unexpected error."""
    raise RuntimeError("kaboom")


# "parallel": two calls at once, one raises (not a ToolException: the ToolNode lets it through).
parallel = create_agent(
    FakeChatModel(script=[Reply(calls=[Call("slow_ok", {}, "p1"), Call("explode", {}, "p2")]), Reply(text="never")]),
    tools=[slow_ok, explode],
)


@tool
async def slow_tool() -> str:
    """Waits 30 seconds."""
    await asyncio.sleep(30)
    return "slow done"


# "slow": one call of a tool that takes 30 s (the client cancels while it runs).
slow = create_agent(
    FakeChatModel(script=[Reply(calls=[Call("slow_tool", {}, "s1")]), Reply(text="never")]), tools=[slow_tool]
)

script: list[Reply] = []
for n in range(1, 4):
    script += [Reply(calls=[Call("delete_file", {"path": "old.txt"}, f"d{n}")]), Reply(text=f"turn {n}")]
graph = create_agent(FakeChatModel(script=script), tools=[delete_file], checkpointer=InMemorySaver())


class GateAgent:
    def __init__(self) -> None:
        self.cwd: dict[str, str] = {}
        self.bindings: dict[str, Binding] = {}
        self.tasks: dict[str, asyncio.Future[Any]] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="hand-built-gate", version="0.1.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = uuid.uuid4().hex
        self.cwd[session_id] = cwd
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = "".join(block.text for block in prompt if block.type == "text")
        policy = PermissionPolicy(ask=("delete_*",))
        run = {"parallel": parallel, "slow": slow}.get(text, graph)
        try:
            async with bind_connection(
                self.conn, session_id, cwd=self.cwd[session_id], permission_policy=policy
            ) as binding:
                self.bindings[session_id] = binding
                task = asyncio.ensure_future(
                    run.ainvoke(
                        {"messages": [HumanMessage(content=text)]},
                        {"configurable": {"thread_id": session_id}, "callbacks": AcpCallbackHandler().handlers()},
                    )
                )
                self.tasks[session_id] = task
                await task
        except RuntimeError:
            return PromptResponse(stop_reason="refusal")
        except asyncio.CancelledError:
            if binding.gate.cancelled:  # pyright: ignore[reportPossiblyUnboundVariable]  # our own `session/cancel`, not the server shutting down
                return PromptResponse(stop_reason="cancelled")
            raise
        return PromptResponse(stop_reason="cancelled" if binding.gate.cancelled else "end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        binding = self.bindings.get(session_id)
        if binding is not None:
            binding.cancel()  # gives up an open permission question
        task = self.tasks.get(session_id)
        if task is not None:
            task.cancel()  # stops the graph


if __name__ == "__main__":
    asyncio.run(acp.run_agent(GateAgent()))  # type: ignore[arg-type]
