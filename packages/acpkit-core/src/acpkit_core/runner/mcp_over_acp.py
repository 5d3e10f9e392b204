"""MCP over ACP (unstable): MCP servers the client serves through the ACP connection itself.

A remote agent cannot start the editor's local MCP servers, and an editor may want to give the
agent tools that live in its own process. With MCP over ACP (`rfds/mcp-over-acp.mdx`, in
`schema.unstable.json`) the client lists such a server in `mcpServers` as
`{"type": "acp", "name": ..., "serverId": ...}`, and the MCP messages travel inside the ACP
connection:

- the agent opens a connection with `mcp/connect` (`{"serverId"}` → `{"connectionId"}`) and closes
  it with `mcp/disconnect`;
- every MCP message is wrapped in `mcp/message` (`{"connectionId", "method", "params"}`), in both
  directions: a request when the MCP message is a request (the ACP answer is the MCP result, an
  MCP error is the ACP error), a notification when it is one.

ACP Kit offers it to a client that opted into the `mcpOverAcp` unstable surface (it then answers
`mcpCapabilities.acp: true`); such a server reaches the runner as a
[`ClientMcpServer`][acpkit_core.runner.types.ClientMcpServer], whose
[`streams`][acpkit_core.runner.types.ClientMcpServer.streams] are the read and write streams an MCP
`ClientSession` takes, as a stdio server's are. Both adapters' MCP loaders connect it that way.

[`McpRelay`][acpkit_core.runner.mcp_over_acp.McpRelay] is the one piece both ends use: it carries the
messages of one MCP stream pair over ACP. The agent's [`McpOverAcp`][acpkit_core.runner.mcp_over_acp.McpOverAcp]
relays an MCP client session; the test client (`AcpTestClient.serve_mcp`) relays a real MCP server.
The streams need the `mcp` package (both adapters depend on it).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, Final, TypeAlias, cast

from acp import RequestError

__all__ = [
    "MCP_CONNECT",
    "MCP_DISCONNECT",
    "MCP_MESSAGE",
    "McpOverAcp",
    "McpRelay",
    "SendNotification",
    "SendRequest",
    "wire_object",
]

log = logging.getLogger("acpkit_core.mcp")

MCP_CONNECT: Final = "mcp/connect"
"""Agent → client: open a connection to the server `serverId`; answers `{"connectionId"}`."""
MCP_MESSAGE: Final = "mcp/message"
"""Both ways: one MCP message on a connection (a request or a notification, as the MCP message is)."""
MCP_DISCONNECT: Final = "mcp/disconnect"
"""Agent → client: close a connection."""

SendRequest: TypeAlias = Callable[[str, Any], Awaitable[Any]]
"""Sends one ACP request (method, params) to the peer and returns its result (raises `RequestError`)."""
SendNotification: TypeAlias = Callable[[str, Any], Awaitable[None]]
"""Sends one ACP notification (method, params) to the peer."""

_PEER_GONE = -32603


def wire_object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (wire params are untyped)."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _wire(connection_id: str, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """`mcp/message` params: the inner method and params flattened next to the connection id."""
    out: dict[str, Any] = {"connectionId": connection_id, "method": method}
    if params is not None:
        out["params"] = dict(params)
    return out


class McpRelay:
    """Carries the MCP messages of one stream pair over ACP `mcp/message`, both ways.

    `read` and `write` are the local end's streams of `SessionMessage`s (as `mcp`'s transports
    yield them): what the local end writes is sent to the peer (its requests as ACP requests whose
    answers come back as MCP responses, its notifications as notifications, its responses as the
    answers of the peer's requests); what the peer sends arrives through
    [`request`][acpkit_core.runner.mcp_over_acp.McpRelay.request] and
    [`notify`][acpkit_core.runner.mcp_over_acp.McpRelay.notify].
    """

    def __init__(
        self,
        connection_id: str,
        read: Any,
        write: Any,
        *,
        send_request: SendRequest,
        send_notification: SendNotification,
    ) -> None:
        self.connection_id = connection_id
        """The `connectionId` this relay serves."""
        self._read = read
        self._write = write
        self._send_request = send_request
        self._send_notification = send_notification
        self._ids = itertools.count(1)
        self._waiting: dict[int | str, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._pump: asyncio.Task[None] | None = None
        self.closed = False
        """The relay was closed: the peer's messages are refused, nothing more is sent."""

    def start(self) -> None:
        """Start carrying what the local end writes to the peer."""
        self._pump = asyncio.create_task(self._run(), name=f"acpkit-mcp-relay-{self.connection_id}")

    async def _run(self) -> None:
        from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

        try:
            async for item in self._read:
                if isinstance(item, Exception):
                    log.warning("MCP connection %s: the local end sent an error: %s", self.connection_id, item)
                    continue
                message = item.message
                if isinstance(message, JSONRPCRequest):
                    task = asyncio.create_task(self._forward(message))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                elif isinstance(message, JSONRPCNotification):
                    await self._notify_peer(message.method, message.params)
                elif isinstance(message, JSONRPCResponse):
                    self._settle(message.id, result=message.result)
                elif isinstance(message, JSONRPCError):  # pyright: ignore[reportUnnecessaryIsInstance]
                    error = RequestError(message.error.code, message.error.message, message.error.data)
                    self._settle(message.id, error=error)
        except Exception:  # the streams closed under us: the relay is over either way
            log.debug("MCP connection %s: the local stream ended", self.connection_id, exc_info=True)

    def _settle(self, request_id: Any, *, result: Any = None, error: BaseException | None = None) -> None:
        future = self._waiting.pop(request_id, None)
        if future is None or future.done():
            log.debug("MCP connection %s: an answer to no pending request (%r)", self.connection_id, request_id)
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    async def _notify_peer(self, method: str, params: Mapping[str, Any] | None) -> None:
        try:
            await self._send_notification(MCP_MESSAGE, _wire(self.connection_id, method, params))
        except (ConnectionError, OSError, RuntimeError) as error:
            log.debug("MCP connection %s: notification %s not sent: %s", self.connection_id, method, error)

    async def _forward(self, message: Any) -> None:
        """The local end's request: ask the peer, and give the local end its answer."""
        from mcp.shared.message import SessionMessage
        from mcp_types import ErrorData, JSONRPCError, JSONRPCResponse

        answer: Any
        try:
            result = await self._send_request(MCP_MESSAGE, _wire(self.connection_id, message.method, message.params))
            if isinstance(result, dict):
                answer = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)  # pyright: ignore[reportUnknownArgumentType]
            else:
                error = ErrorData(code=_PEER_GONE, message=f"the MCP result is not an object: {result!r}")
                answer = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        except RequestError as error:
            answer = JSONRPCError(
                jsonrpc="2.0", id=message.id, error=ErrorData(code=error.code, message=str(error), data=error.data)
            )
        except (ConnectionError, OSError, RuntimeError) as error:
            data = ErrorData(code=_PEER_GONE, message=f"the ACP connection did not carry the request: {error}")
            answer = JSONRPCError(jsonrpc="2.0", id=message.id, error=data)
        with contextlib.suppress(Exception):  # the local end went away meanwhile
            await self._write.send(SessionMessage(message=answer))

    async def request(self, method: str, params: Mapping[str, Any] | None) -> Any:
        """The peer's MCP request: hand it to the local end and return its result (its error raises)."""
        from mcp.shared.message import SessionMessage
        from mcp_types import JSONRPCRequest

        if self.closed:
            raise RequestError.invalid_params({"connectionId": f"{self.connection_id!r} is closed"})
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            message = JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=dict(params or {}) or None)
            await self._write.send(SessionMessage(message=message))
            return await future
        finally:
            self._waiting.pop(request_id, None)

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        """The peer's MCP notification: hand it to the local end."""
        from mcp.shared.message import SessionMessage
        from mcp_types import JSONRPCNotification

        if self.closed:
            return
        message = JSONRPCNotification(jsonrpc="2.0", method=method, params=dict(params or {}) or None)
        with contextlib.suppress(Exception):
            await self._write.send(SessionMessage(message=message))

    async def close(self) -> None:
        """Stop relaying: pending requests of the peer fail, the local end's write stream is closed."""
        if self.closed:
            return
        self.closed = True
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(RequestError(_PEER_GONE, f"MCP connection {self.connection_id} closed"))
        self._waiting.clear()
        tasks = [t for t in (self._pump, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self._write.aclose()


class McpOverAcp:
    """The agent's end of MCP over ACP on one connection: opens connections to the client's servers.

    The server creates one per connection; [`connect`][acpkit_core.runner.mcp_over_acp.McpOverAcp.connect]
    is what a [`ClientMcpServer`][acpkit_core.runner.types.ClientMcpServer]'s `streams()` calls, and
    the client's `mcp/message` requests and notifications arrive at
    [`on_message`][acpkit_core.runner.mcp_over_acp.McpOverAcp.on_message].
    """

    def __init__(self, send_request: SendRequest, send_notification: SendNotification) -> None:
        self._send_request = send_request
        self._send_notification = send_notification
        self.relays: dict[str, McpRelay] = {}
        """The open connections, by `connectionId`."""

    @contextlib.asynccontextmanager
    async def connect(self, server_id: str) -> AsyncGenerator[tuple[Any, Any]]:
        """Open a connection to the client's server `server_id`: yields the (read, write) streams of an
        MCP client session; `mcp/disconnect` is sent on exit. A refused `mcp/connect` raises
        `ConnectionError` with the client's reason."""
        from mcp.shared.memory import create_client_server_memory_streams

        try:
            answer = await self._send_request(MCP_CONNECT, {"serverId": server_id})
        except RequestError as error:
            detail = f" ({error.data})" if error.data else ""
            raise ConnectionError(f"the client refused mcp/connect for {server_id!r}: {error}{detail}") from None
        connection_id = wire_object(answer).get("connectionId")
        if not isinstance(connection_id, str):
            raise ConnectionError(f"the client's mcp/connect answer has no connectionId: {answer!r}")
        async with create_client_server_memory_streams() as (client_streams, server_streams):
            relay = McpRelay(
                connection_id,
                *server_streams,
                send_request=self._send_request,
                send_notification=self._send_notification,
            )
            self.relays[connection_id] = relay
            relay.start()
            try:
                yield client_streams
            finally:
                self.relays.pop(connection_id, None)
                await relay.close()
                with contextlib.suppress(RequestError, ConnectionError, OSError, RuntimeError):
                    await self._send_request(MCP_DISCONNECT, {"connectionId": connection_id})

    def _relay(self, wire: Any) -> tuple[McpRelay, str, Mapping[str, Any] | None]:
        params = wire_object(wire)
        connection_id = params.get("connectionId")
        method = params.get("method")
        if not isinstance(connection_id, str) or not isinstance(method, str):
            raise RequestError.invalid_params({"details": "mcp/message needs a string connectionId and method"})
        relay = self.relays.get(connection_id)
        if relay is None:
            raise RequestError.invalid_params({"connectionId": f"no open MCP connection {connection_id!r}"})
        inner: object = params.get("params")
        if inner is not None and not isinstance(inner, dict):
            raise RequestError.invalid_params({"params": "must be an object or null"})
        return relay, method, wire_object(inner) if inner is not None else None

    async def on_message(self, params: Any) -> Any:
        """The client's `mcp/message` request: its MCP request, answered by the agent's MCP session."""
        relay, method, inner = self._relay(params)
        return await relay.request(method, inner)

    async def on_notification(self, params: Any) -> None:
        """The client's `mcp/message` notification (a notification is never answered, even when wrong)."""
        try:
            relay, method, inner = self._relay(params)
        except RequestError as error:
            log.info("dropped an mcp/message notification: %s", error.data)
            return
        await relay.notify(method, inner)

    async def close(self) -> None:
        """The connection ended: close every relay."""
        relays, self.relays = list(self.relays.values()), {}
        for relay in relays:
            await relay.close()
