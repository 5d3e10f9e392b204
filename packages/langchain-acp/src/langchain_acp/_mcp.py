"""The client's MCP servers for one session, as LangChain tools: [`McpTools`][langchain_acp.McpTools].

The runner and a hand-built server use the same loader. Each server gets one long-lived MCP
session, opened and closed by one background task (the MCP client's task groups must be entered
and left in the same task); its tools become `StructuredTool`s calling that session, whose
results keep their images, audio and resources as LangChain content blocks. The `mcp` package is
used directly: stdio, streamable HTTP and SSE are all really connected, and so is a server the
client serves over the ACP connection itself (MCP over ACP, unstable).

A server that fails to start is never dropped silently: it is recorded as an
[`McpServerFailure`][langchain_acp.McpServerFailure] naming the server and why, and with
`on_error="raise"` (the default) the loader raises [`McpServerError`][langchain_acp.McpServerError].
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, TypeAlias

from acpkit_core.errors import AcpKitError
from acpkit_core.runner.types import McpServer, WireMcpServer, mcp_servers_from_wire
from langchain_core.tools import BaseTool, StructuredTool, ToolException

__all__ = [
    "MCP_SERVER_METADATA",
    "McpServerError",
    "McpServerFailure",
    "McpServerLike",
    "McpTools",
    "tool_result_content",
]

McpServerLike: TypeAlias = McpServer | WireMcpServer
"""An MCP server description: core's (`acpkit_core.runner.types.McpServer`) or the SDK's, as `session/new` gives it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerFailure:
    """An MCP server that could not be started or listed."""

    server: str
    """The server's name, as the client gave it."""
    transport: Literal["stdio", "http", "sse", "acp"]
    """How it was to be reached."""
    reason: str
    """Why it failed (the underlying error, unwrapped from task groups)."""

    @property
    def message(self) -> str:
        """One line for the user: `MCP server 'notes' (stdio) failed to start: ...`."""
        return f"MCP server {self.server!r} ({self.transport}) failed to start: {self.reason}"


class McpServerError(AcpKitError):
    """One or more of a session's MCP servers failed to start (raised by `McpTools` with `on_error="raise"`)."""

    def __init__(self, failures: Iterable[McpServerFailure]) -> None:
        self.failures = tuple(failures)
        """Every server that failed, with the reason."""
        super().__init__("; ".join(f.message for f in self.failures))


def _reason(error: BaseException) -> str:
    """The leaf errors of `error` (task groups wrap them), as one line."""
    if isinstance(error, BaseExceptionGroup):
        leaves: list[str] = [_reason(e) for e in error.exceptions]  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType, reportUnknownArgumentType]
        return "; ".join(dict.fromkeys(leaves))
    if isinstance(error, TimeoutError):
        return "timed out"
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


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
    elif server.transport == "sse":
        from mcp.client.sse import sse_client

        read, write = await stack.enter_async_context(sse_client(server.url, headers=dict(server.headers) or None))
    else:  # MCP over ACP: a server the client serves through the ACP connection itself
        read, write = await stack.enter_async_context(server.streams())
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


MCP_SERVER_METADATA = "acp_mcp_server"
"""The key of a tool's `metadata` that names the MCP server it comes from (`/tools` groups by it)."""


def _tool(session: Any, spec: Any, server: str) -> BaseTool:
    name = str(spec.name)

    async def call(**arguments: Any) -> str | list[dict[str, Any]]:
        result = await session.call_tool(name, arguments)
        content = tool_result_content(result)
        if result.is_error:
            text = content if isinstance(content, str) else " ".join(str(b.get("text", "")) for b in content)
            raise ToolException(text or f"MCP tool {name} failed")
        return content

    tool = StructuredTool.from_function(
        coroutine=call,
        name=name,
        description=spec.description or name,
        args_schema=dict(spec.input_schema),
        metadata={MCP_SERVER_METADATA: server},
    )
    tool.handle_tool_error = True
    return tool


class McpTools:
    """The LangChain tools of a session's MCP servers, connected while the object is open.

    ```python
    async with McpTools(mcp_servers) as mcp:  # the `mcp_servers` of `session/new`
        graph = create_agent(model, tools=[*my_tools, *mcp.tools])
        ...
    ```

    Use it as an async context manager, or call `start()` when the session opens and `aclose()`
    when it closes (from the same event loop). The servers are connected side by side, each
    held open by a task of its own: stdio (a subprocess), streamable HTTP, SSE. A tool's result
    keeps images, audio and embedded files as LangChain content blocks (`tool_result_content`);
    an MCP error result fails the call.

    A server that fails to start (or does not answer within `timeout` seconds) is recorded in
    `failures`. With `on_error="raise"` (default), `start()` then closes the servers that did
    connect and raises `McpServerError` naming every failed server and why; with `"report"` the
    session goes on with the tools that connected, and `notice()` is the text to show the user.
    """

    def __init__(
        self,
        servers: Iterable[McpServerLike],
        *,
        on_error: Literal["raise", "report"] = "raise",
        timeout: float = 30.0,
    ) -> None:
        """Describe the servers to connect (nothing is started before `start()` or `async with`)."""
        given = list(servers)
        wire = [s for s in given if not isinstance(s, McpServer)]
        converted = iter(mcp_servers_from_wire(wire))
        self.servers: tuple[McpServer, ...] = tuple(s if isinstance(s, McpServer) else next(converted) for s in given)
        """The servers to connect, as core descriptions (an SDK ACP-transport entry is left out: only the
        server's session gives one a connection, as a core `ClientMcpServer`)."""
        self.on_error: Literal["raise", "report"] = on_error
        """What a failed server does to `start()`: raise `McpServerError`, or only record it."""
        self.timeout = timeout
        """Seconds each server gets to start and list its tools."""
        self.tools: list[BaseTool] = []
        """Tools of every server that connected, in server order."""
        self.failures: list[McpServerFailure] = []
        """Servers that failed to start, with the reason."""
        self._tasks: list[asyncio.Task[None]] = []
        self._stop = asyncio.Event()

    def notice(self) -> str | None:
        """The failures as a message for the user (one line per server), or `None` when every server started."""
        if not self.failures:
            return None
        return "\n".join(f"{f.message}. Its tools are not available in this session." for f in self.failures)

    async def start(self) -> None:
        """Connect every server; see the class docstring for what a failure does."""
        if self._tasks:
            return
        self._stop.clear()
        self.tools, self.failures = [], []
        outcomes = await asyncio.gather(*(self._start_one(server) for server in self.servers))
        for server, outcome in zip(self.servers, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                failure = McpServerFailure(server=server.name, transport=server.transport, reason=_reason(outcome))
                self.failures.append(failure)
                print(f"langchain-acp: {failure.message}", file=sys.stderr)
            else:
                self.tools.extend(outcome)
        if self.failures and self.on_error == "raise":
            await self.aclose()
            raise McpServerError(self.failures)

    async def _start_one(self, server: McpServer) -> list[BaseTool] | BaseException:
        ready: asyncio.Future[list[BaseTool] | BaseException] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._hold(server, ready), name=f"langchain-acp-mcp-{server.name}")
        self._tasks.append(task)

        def ended(done: asyncio.Task[None]) -> None:
            if not ready.done():  # ended without connecting (cancelled from inside the MCP client)
                ready.set_result(ConnectionError("the connection closed while starting"))

        task.add_done_callback(ended)
        try:
            return await asyncio.wait_for(asyncio.shield(ready), self.timeout)
        except TimeoutError:
            task.cancel()
            return TimeoutError()

    async def _hold(self, server: McpServer, ready: asyncio.Future[list[BaseTool] | BaseException]) -> None:
        """Open one server, hand its tools over, and keep it open until `aclose()` (all in this task)."""
        try:
            async with AsyncExitStack() as stack:
                session = await _open(stack, server)
                listed = await session.list_tools()
                ready.set_result([_tool(session, spec, server.name) for spec in listed.tools])
                await self._stop.wait()
        except Exception as error:
            if not ready.done():
                ready.set_result(error)

    async def aclose(self) -> None:
        """Disconnect every server (stdio subprocesses end); the tools stop working."""
        self._stop.set()
        tasks, self._tasks = self._tasks, []
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=10)
            for task in pending:
                task.cancel()

    async def __aenter__(self) -> McpTools:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
