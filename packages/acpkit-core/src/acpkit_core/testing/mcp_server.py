"""The client's half of MCP over ACP for `AcpTestClient`: real MCP servers served through the connection.

The test client answers `mcp/connect` by starting the MCP server it was given (in this process,
or as a subprocess over stdio), relays the `mcp/message` traffic to it both ways with core's
[`McpRelay`][acpkit_core.runner.mcp_over_acp.McpRelay], and stops it on `mcp/disconnect`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from acp import RequestError
from acp.schema import AcpMcpServer

from ..runner.mcp_over_acp import MCP_CONNECT, MCP_DISCONNECT, MCP_MESSAGE, McpRelay, wire_object
from ..runner.types import StdioMcpServer
from ..server._sdk import raw_notifier, raw_requester, route_raw

__all__ = ["ClientMcp", "ServedConnection"]


@dataclass(kw_only=True)
class ServedConnection:
    """One `mcp/connect` this client answered."""

    connection_id: str
    """The `connectionId` it answered."""
    server_id: str
    """The `serverId` the agent asked for."""
    relay: McpRelay
    """Carries the messages between the agent and the server."""
    task: asyncio.Task[None]
    """Holds the server's streams open (entered and left in this task)."""
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    """Set to stop the server."""
    methods: list[str] = field(default_factory=list[str])
    """The MCP methods the agent sent on it, in order (its requests and notifications)."""
    disconnected: bool = False
    """The agent sent `mcp/disconnect` for it."""


@contextlib.asynccontextmanager
async def _streams(server: Any) -> AsyncGenerator[tuple[Any, Any]]:
    """The (read, write) streams of an MCP client talking to `server`."""
    if isinstance(server, StdioMcpServer):
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=server.command, args=list(server.args), env=dict(server.env) or None)
        async with stdio_client(params) as streams:
            yield streams
        return
    from mcp.client._memory import InMemoryTransport  # the `mcp` package's own in-process transport

    async with InMemoryTransport(server) as streams:
        yield streams[0], streams[1]


class ClientMcp:
    """The MCP servers a test client serves over ACP, and the connections the agent opened to them."""

    def __init__(self) -> None:
        self.servers: dict[str, tuple[str, Any]] = {}
        """Each served server's name and server object, by `serverId`."""
        self.connections: dict[str, ServedConnection] = {}
        """Every connection the agent opened, by `connectionId` (closed ones stay, `disconnected`)."""
        self._ids = itertools.count(1)
        self._request: Any = None
        self._notify: Any = None

    def add(self, server: Any, *, name: str | None = None, server_id: str | None = None) -> AcpMcpServer:
        """Serve `server`; returns its `mcpServers` entry."""
        server_id = server_id or uuid.uuid4().hex
        if server_id in self.servers:
            raise ValueError(f"serverId {server_id!r} is already served on this connection")
        label = name or str(getattr(server, "name", None) or "mcp")
        self.servers[server_id] = (label, server)
        return AcpMcpServer(type="acp", name=label, server_id=server_id)

    def attach(self, conn: object) -> None:
        """Answer `mcp/connect`, `mcp/message` and `mcp/disconnect` on `conn`."""
        self._request, self._notify = raw_requester(conn), raw_notifier(conn)
        route_raw(
            conn,
            {MCP_CONNECT: self.on_connect, MCP_DISCONNECT: self.on_disconnect, MCP_MESSAGE: self.on_message},
            {MCP_MESSAGE: self.on_notification},
        )

    @property
    def open(self) -> list[ServedConnection]:
        """The connections not closed yet."""
        return [c for c in self.connections.values() if not c.disconnected]

    async def on_connect(self, params: Any) -> dict[str, Any]:
        """`mcp/connect`: start the server `serverId` names and answer a fresh `connectionId`."""
        server_id = wire_object(params).get("serverId")
        if not isinstance(server_id, str) or server_id not in self.servers:
            raise RequestError.invalid_params({"serverId": f"no MCP server {server_id!r} is served here"})
        _, server = self.servers[server_id]
        connection_id = f"conn-{next(self._ids)}"
        ready: asyncio.Future[tuple[Any, Any]] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()

        async def hold() -> None:
            try:
                async with _streams(server) as streams:
                    ready.set_result(streams)
                    await stop.wait()
            except Exception as error:
                if not ready.done():
                    ready.set_exception(error)

        task = asyncio.create_task(hold(), name=f"acpkit-test-mcp-{connection_id}")
        try:
            read, write = await ready
        except Exception as error:
            raise RequestError.internal_error({"serverId": server_id, "reason": str(error)}) from None
        relay = McpRelay(connection_id, read, write, send_request=self._request, send_notification=self._notify)
        self.connections[connection_id] = ServedConnection(
            connection_id=connection_id, server_id=server_id, relay=relay, task=task, stop=stop
        )
        relay.start()
        return {"connectionId": connection_id}

    def _connection(self, params: Any) -> ServedConnection:
        connection_id = wire_object(params).get("connectionId")
        found = self.connections.get(connection_id) if isinstance(connection_id, str) else None
        if found is None or found.disconnected:
            raise RequestError.invalid_params({"connectionId": f"no open MCP connection {connection_id!r}"})
        return found

    async def on_message(self, params: Any) -> Any:
        """The agent's MCP request on a connection: the server's result."""
        connection = self._connection(params)
        connection.methods.append(str(params.get("method")))
        return await connection.relay.request(str(params.get("method")), params.get("params"))

    async def on_notification(self, params: Any) -> None:
        """The agent's MCP notification on a connection."""
        try:
            connection = self._connection(params)
        except RequestError:
            return
        connection.methods.append(str(params.get("method")))
        await connection.relay.notify(str(params.get("method")), params.get("params"))

    async def on_disconnect(self, params: Any) -> dict[str, Any]:
        """`mcp/disconnect`: stop the server of that connection."""
        connection = self._connection(params)
        await self._stop(connection)
        return {}

    async def _stop(self, connection: ServedConnection) -> None:
        connection.disconnected = True
        await connection.relay.close()
        connection.stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(connection.task), timeout=5)
        except TimeoutError:
            connection.task.cancel()

    async def close(self) -> None:
        """Stop every server still connected (the test client is leaving)."""
        for connection in self.open:
            await self._stop(connection)
