"""A hand-built ACP server with langchain-acp middleware and callbacks (see docs/langchain/middleware.md)."""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path
from typing import Any

import acp
from acp.schema import AgentCapabilities, Implementation, InitializeResponse, NewSessionResponse, PromptResponse
from acpkit_core.permissions import PermissionPolicy
from langchain.agents import create_agent
from langchain_acp import AcpCallbackHandler, AcpPermissionMiddleware, AcpToolMiddleware, bind_connection
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

sys.path.insert(0, str(Path(__file__).parent))
from fake_model import Call, FakeChatModel, Reply


@tool
def delete_file(path: str) -> str:
    """Delete a file (pretend)."""
    return f"deleted {path}"


model = FakeChatModel(
    script=[
        Reply(reasoning="Deleting.", text="On it.", calls=[Call("delete_file", {"path": "old.txt"}, "d1")]),
        Reply(text="Done."),
    ]
)
graph = create_agent(
    model,
    tools=[delete_file],
    middleware=[AcpToolMiddleware(), AcpPermissionMiddleware(PermissionPolicy(ask=("delete_*",)))],
    checkpointer=InMemorySaver(),
)


class HandBuiltAgent:
    """Implements the few ACP methods a minimal agent needs."""

    def __init__(self) -> None:
        self.cwd: dict[str, str] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="hand-built", version="0.1.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = uuid.uuid4().hex
        self.cwd[session_id] = cwd
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = "".join(block.text for block in prompt if block.type == "text")
        # One binding for the whole run: the middleware and the handler report to this session.
        with bind_connection(self.conn, session_id, cwd=self.cwd[session_id]):
            await graph.ainvoke(
                {"messages": [HumanMessage(content=text)]},
                {"configurable": {"thread_id": session_id}, "callbacks": AcpCallbackHandler().handlers()},
            )
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


if __name__ == "__main__":
    asyncio.run(acp.run_agent(HandBuiltAgent()))  # type: ignore[arg-type]
