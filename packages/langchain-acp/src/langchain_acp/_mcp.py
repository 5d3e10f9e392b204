"""The client's MCP servers for one session, as LangChain tools.

Each server gets one long-lived MCP session (opened and closed by one background task, as the MCP
client's task groups require); its tools become `StructuredTool`s calling that session. The `mcp`
package is used directly: stdio, streamable HTTP and SSE are all really connected.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any

from acpkit_core.runner import McpServer
from langchain_core.tools import BaseTool, StructuredTool, ToolException

__all__ = ["McpConnections"]


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


def _tool(session: Any, spec: Any) -> BaseTool:
    name = str(spec.name)

    async def call(**arguments: Any) -> str:
        result = await session.call_tool(name, arguments)
        text = "\n".join(str(getattr(block, "text", "")) for block in result.content if getattr(block, "text", None))
        if not text and result.structured_content is not None:
            text = str(result.structured_content)
        if result.is_error:
            raise ToolException(text or f"MCP tool {name} failed")
        return text

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
