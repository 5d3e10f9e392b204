"""The client's MCP servers for one session, connected through `langchain-mcp-adapters`.

Each server gets a long-lived MCP session (opened and closed by one background task, as the MCP
client's task groups require), and its tools are loaded once as LangChain tools.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any

from acpkit_core.runner import McpServer
from langchain_core.tools import BaseTool

__all__ = ["McpConnections", "connection_spec"]


def connection_spec(server: McpServer) -> dict[str, Any]:
    """The `langchain-mcp-adapters` connection for an ACP MCP server description."""
    if server.transport == "stdio":
        return {"transport": "stdio", "command": server.command, "args": list(server.args), "env": dict(server.env) or None}
    if server.transport == "http":
        return {"transport": "streamable_http", "url": server.url, "headers": dict(server.headers) or None}
    return {"transport": "sse", "url": server.url, "headers": dict(server.headers) or None}


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
        from langchain_mcp_adapters.client import MultiServerMCPClient
        from langchain_mcp_adapters.tools import load_mcp_tools

        client = MultiServerMCPClient({s.name: connection_spec(s) for s in self.servers})  # pyright: ignore[reportArgumentType]
        async with AsyncExitStack() as stack:
            for server in self.servers:
                try:
                    session = await stack.enter_async_context(client.session(server.name))
                    self.tools.extend(await load_mcp_tools(session))
                except Exception as error:  # noqa: BLE001 - one broken server must not break the session
                    self.errors[server.name] = str(error)
                    print(f"langchain-acp: MCP server {server.name!r} failed: {error}", file=sys.stderr)
            self._ready.set()
            await self._stop.wait()

    async def stop(self) -> None:
        """Disconnect every server."""
        self._stop.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, 10)
            except (Exception, asyncio.CancelledError):  # noqa: BLE001
                self._task.cancel()
            self._task = None
