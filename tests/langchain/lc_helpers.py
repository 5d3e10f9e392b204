"""Tools and graphs shared by the LangChain tests."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import Any

from acpkit_core.server import AcpAgent
from fake_model import Call, FakeChatModel, Reply
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_acp import client_host, create_acp_agent, current_acp
from langchain_core.tools import BaseTool, ToolException, tool

__all__ = [
    "Call",
    "FakeChatModel",
    "Reply",
    "agent_for",
    "boom",
    "delete_file",
    "message_content",
    "read_file",
    "slow_tool",
]


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


def message_content(sent: Sequence[Mapping[str, Any]], rendered: list[Any]) -> str | list[Any]:
    """The `HumanMessage.content` a graph gets for the prompt blocks a client `sent`, rendered as `rendered`.

    Read from what the client sent, not from the renderer: one non-empty `text` block with no
    annotations (empty text blocks aside) is that text as a `str`; a prompt of empty text only is
    `""`; anything else is the rendered list.
    """
    kept = [b for b in sent if not (b.get("type") == "text" and not b.get("text"))]
    if not kept and sent and all(b.get("type") == "text" for b in sent):
        return ""
    if len(kept) == 1 and kept[0].get("type") == "text" and not kept[0].get("annotations"):
        return str(kept[0]["text"])
    return rendered
