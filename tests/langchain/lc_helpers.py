"""Tools and graphs shared by the LangChain tests."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from acpkit_core.server import AcpAgent
from fake_model import Call, FakeChatModel, Reply
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_acp import client_host, create_acp_agent, current_acp
from langchain_core.tools import BaseTool, ToolException, tool

__all__ = ["Call", "FakeChatModel", "Reply", "agent_for", "boom", "delete_file", "read_file", "slow_tool"]


@tool
async def read_file(path: str) -> str:
    """Read a text file through the editor."""
    try:
        binding = current_acp()
        cwd = binding.turn.session.cwd if binding and binding.turn else "."
        return await client_host().read_text_file(os.path.join(cwd, path))
    except Exception as error:
        raise ToolException(f"cannot read {path}: {error}") from error


read_file.handle_tool_error = True


@tool
def boom(x: int) -> str:
    """Always fails."""
    raise ToolException(f"boom {x}")


boom.handle_tool_error = True


@tool
def delete_file(path: str) -> str:
    """Delete a file (pretend)."""
    return f"deleted {path}"


@tool
def write_file(path: str, content: str) -> str:
    """Write a file (pretend)."""
    return f"wrote {len(content)} bytes to {path}"


@tool
async def slow_tool() -> str:
    """Waits 30 seconds."""
    await asyncio.sleep(30)
    return "slow done"


def agent_for(
    script: Sequence[Any],
    tools: Sequence[BaseTool] = (),
    *,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    model: FakeChatModel | None = None,
    **options: Any,
) -> tuple[AcpAgent, FakeChatModel]:
    """An `AcpAgent` over `create_agent(fake model, tools, middleware)` with a memory store by default."""
    model = model or FakeChatModel(script=list(script))
    graph = create_agent(model, tools=list(tools), middleware=list(middleware))
    options.setdefault("store", "memory")
    return create_acp_agent(graph, **options), model


def call(name: str, args: dict[str, Any], id: str) -> Call:
    """Shorthand."""
    return Call(name, args, id)
