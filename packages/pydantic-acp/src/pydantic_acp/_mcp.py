"""The client's MCP servers (`mcpServers` of `session/new`) as pydantic-ai toolsets.

Each server becomes an `MCPToolset` (stdio, streamable HTTP, SSE, or MCP over ACP: a server the
client serves through the ACP connection) for the session's runs.
[`SessionMcp`][pydantic_acp._mcp.SessionMcp] starts them when the session opens and stops them
when it closes. The connections live in one background task per session: an MCP client opens
anyio task groups that must be exited by the task that entered them, while the server may open
and close a session from different tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING, Any, assert_never

from acpkit_core.runner.types import (
    ClientMcpServer,
    HttpMcpServer,
    McpServer,
    McpServerStatus,
    SseMcpServer,
    StdioMcpServer,
)
from pydantic_ai.toolsets import AbstractToolset

if TYPE_CHECKING:
    from pydantic_ai.mcp import MCPToolset

__all__ = ["SessionMcp", "mcp_toolset"]

logger = logging.getLogger("pydantic_acp")


def mcp_toolset(server: McpServer, *, cwd: str | None = None) -> MCPToolset[Any]:
    """A pydantic-ai toolset for one MCP server description from the client."""
    # Imported here: the MCP client stack takes a second to import and most sessions have no servers.
    from fastmcp.client import Client
    from fastmcp.client.transports import SSETransport, StdioTransport, StreamableHttpTransport
    from pydantic_ai.mcp import MCPToolset

    transport: Any
    match server:
        case StdioMcpServer():
            transport = StdioTransport(
                server.command, list(server.args), env=dict(server.env) or None, cwd=cwd, keep_alive=False
            )
        case HttpMcpServer():
            transport = StreamableHttpTransport(server.url, headers=dict(server.headers) or None)
        case SseMcpServer():
            transport = SSETransport(server.url, headers=dict(server.headers) or None)
        case ClientMcpServer():
            transport = _acp_transport(server)
        case _:
            assert_never(server)
    return MCPToolset(Client(transport), id=f"acp-mcp-{server.name}", tool_error_behavior="failed")


def _acp_transport(server: ClientMcpServer) -> Any:
    """A fastmcp transport over the ACP connection (MCP over ACP): core opens the streams."""
    from fastmcp.client.transports import ClientTransport
    from fastmcp.client.transports.base import TransportOptions

    class AcpTransport(ClientTransport):
        @contextlib.asynccontextmanager
        async def connect_session(  # pyright: ignore[reportIncompatibleMethodOverride]
            self, *, transport_options: TransportOptions | None = None, **session_kwargs: Any
        ) -> AsyncGenerator[Any]:
            options = transport_options or TransportOptions()
            async with (
                server.streams() as (read, write),
                options.session_class(read_stream=read, write_stream=write, **session_kwargs) as session,
            ):
                yield session

        def __repr__(self) -> str:
            return f"<AcpTransport(serverId={server.server_id!r})>"

    return AcpTransport()


class SessionMcp:
    """The running MCP toolsets of one session."""

    def __init__(self, servers: Sequence[McpServer], *, cwd: str | None = None) -> None:
        self._all = [mcp_toolset(s, cwd=cwd) for s in servers]
        self.toolsets: list[AbstractToolset[Any]] = list(self._all)
        """One toolset per server that started."""
        self.servers: dict[str, MCPToolset[Any]] = {}
        """The toolset of each server that started, by server name."""
        self.failures: dict[str, str] = {}
        """Why each server that did not start failed, by server name."""
        self._names = [s.name for s in servers]
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Connect to every server (a server that fails is logged and left out)."""
        self._task = asyncio.create_task(self._hold(), name="acp-mcp")
        await self._ready.wait()

    async def stop(self) -> None:
        """Disconnect from every server."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def listing(self) -> tuple[dict[str, str], list[str]]:
        """The server of each tool the started servers offer (by tool name), and notes on the servers
        whose tools cannot be listed (they did not start, or listing failed)."""
        found: dict[str, str] = {}
        notes = [f"MCP server `{name}` did not start: {why}" for name, why in sorted(self.failures.items())]
        for name, toolset in sorted(self.servers.items()):
            try:
                tools = await toolset.list_tools()
            except Exception as error:
                notes.append(f"MCP server `{name}` did not list its tools: {error}")
                continue
            for tool in tools:
                found.setdefault(tool.name, name)
        return found, notes

    async def statuses(self) -> list[McpServerStatus]:
        """Each server's state for `/mcp`: connected with its tools, or failed and why."""
        out: list[McpServerStatus] = []
        for name in self._names:
            if name in self.failures:
                out.append(
                    McpServerStatus(name=name, state="failed", detail=f"It did not start: {self.failures[name]}")
                )
                continue
            toolset = self.servers.get(name)
            if toolset is None:
                continue
            try:
                tools = await toolset.list_tools()
            except Exception as error:
                out.append(
                    McpServerStatus(name=name, state="connected", detail=f"Its tools could not be listed: {error}")
                )
                continue
            out.append(McpServerStatus(name=name, state="connected", tools=[t.name for t in tools]))
        return out

    async def _hold(self) -> None:
        async with contextlib.AsyncExitStack() as stack:
            started: list[AbstractToolset[Any]] = []
            for name, toolset in zip(self._names, self._all, strict=True):
                try:
                    await stack.enter_async_context(toolset)
                except Exception as error:
                    logger.warning("MCP server %r did not start: %s", name, error)
                    self.failures[name] = str(error) or type(error).__name__
                    continue
                started.append(toolset)
                self.servers[name] = toolset
            self.toolsets = started
            self._ready.set()
            await self._stop.wait()
