"""The client's MCP servers for one session, as LangChain tools.

Each server gets one long-lived MCP session (opened and closed by one background task, as the MCP
client's task groups require); its tools become `StructuredTool`s calling that session, whose
results keep their images, audio and resources as LangChain content blocks. The `mcp` package is
used directly: stdio, streamable HTTP and SSE are all really connected.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any

from acpkit_core.runner import McpServer
from langchain_core.tools import BaseTool, StructuredTool, ToolException

__all__ = ["McpConnections", "tool_result_content"]


async def _open(stack: AsyncExitStack, server: McpServer) -> Any:
    from mcp import ClientSession

    if server.transport == "stdio":
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=server.command, args=list(server.args), env=dict(server.env) or None)
        read, write = await stack.enter_async_context(stdio_client(params))
    elif server.transport == "http":
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        client = await stack.enter_async_context(httpx2.AsyncClient(headers=dict(server.headers)))
        read, write, *_ = await stack.enter_async_context(streamable_http_client(server.url, http_client=client))
    else:
        from mcp.client.sse import sse_client

        read, write = await stack.enter_async_context(sse_client(server.url, headers=dict(server.headers) or None))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def tool_result_content(result: Any) -> str | list[dict[str, Any]]:
    """An MCP `CallToolResult` as `ToolMessage` content: plain text, or LangChain content blocks.

    Text stays a string (blocks joined by newlines). Images and audio become `image` / `audio`
    blocks with their base64 and MIME type, an embedded resource its text (or a `file` block for a
    blob), a resource link a line naming it. With no content, the structured content as text.
    """
    blocks: list[dict[str, Any]] = []
    for block in result.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            blocks.append({"type": "text", "text": str(block.text)})
        elif kind in ("image", "audio"):
            blocks.append({"type": kind, "base64": str(block.data), "mime_type": str(block.mime_type)})
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                blocks.append({"type": "text", "text": text})
            else:
                mime = str(getattr(resource, "mime_type", None) or "application/octet-stream")
                blocks.append({"type": "file", "base64": str(resource.blob), "mime_type": mime})
        elif kind == "resource_link":
            blocks.append({"type": "text", "text": f"{block.name}: {block.uri}"})
    if not blocks and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False, default=str)
    if all(b["type"] == "text" for b in blocks):
        return "\n".join(str(b["text"]) for b in blocks)
    return blocks


def _tool(session: Any, spec: Any) -> BaseTool:
    name = str(spec.name)

    async def call(**arguments: Any) -> str | list[dict[str, Any]]:
        result = await session.call_tool(name, arguments)
        content = tool_result_content(result)
        if result.is_error:
            text = content if isinstance(content, str) else " ".join(str(b.get("text", "")) for b in content)
            raise ToolException(text or f"MCP tool {name} failed")
        return content

    tool = StructuredTool.from_function(
        coroutine=call, name=name, description=spec.description or name, args_schema=dict(spec.input_schema)
    )
    tool.handle_tool_error = True
    return tool


class McpConnections:
    """Connections to a session's MCP servers and the tools they offer."""

    def __init__(self, servers: Sequence[McpServer]) -> None:
        self.servers = tuple(servers)
        """The servers to connect to."""
        self.tools: list[BaseTool] = []
        """Tools of every server that connected."""
        self.errors: dict[str, str] = {}
        """Servers that failed to connect, with the reason."""
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()

    async def start(self, timeout: float = 30.0) -> None:
        """Connect every server (a server that fails is logged and skipped)."""
        self._task = asyncio.create_task(self._run())
        await asyncio.wait_for(self._ready.wait(), timeout)

    async def _run(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                for server in self.servers:
                    try:
                        session = await _open(stack, server)
                        listed = await session.list_tools()
                        self.tools.extend(_tool(session, spec) for spec in listed.tools)
                    except Exception as error:
                        self.errors[server.name] = str(error)
                        print(f"langchain-acp: MCP server {server.name!r} failed: {error}", file=sys.stderr)
                self._ready.set()
                await self._stop.wait()
        finally:
            self._ready.set()

    async def stop(self) -> None:
        """Disconnect every server."""
        self._stop.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, 10)
            except (Exception, asyncio.CancelledError):
                self._task.cancel()
            self._task = None
