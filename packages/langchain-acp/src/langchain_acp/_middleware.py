"""How the middleware finds the ACP side: the current turn, or a connection bound by the developer."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from contextvars import Token

from acp.schema import ToolKind
from acpkit_core.errors import HostUnavailableError
from acpkit_core.permissions import PermissionPolicy
from acpkit_core.runner.host import ClientHost
from acpkit_core.runner.tool_presentation import ToolPresentation
from langchain_core.tools import BaseTool

from ._callbacks import LEFT_OPEN_TEXT, SessionUpdater, binding_for_connection
from ._context import Binding, current_binding

__all__ = ["BoundConnection", "bind_connection", "client_host", "current_acp"]


def current_acp() -> Binding | None:
    """The ACP binding of the running turn, or `None` outside any."""
    return current_binding.get()


def client_host() -> ClientHost:
    """The client's files and terminal for the running turn (for tools that read or write through the editor).

    Raises `HostUnavailableError` outside a turn served by `LangGraphRunner`.
    """
    binding = current_binding.get()
    if binding is None or binding.turn is None:
        raise HostUnavailableError("client_host(): no ACP turn is running (call it from a tool of a served graph)")
    return binding.turn.host


class BoundConnection:
    """What `bind_connection` returns: a context manager, `with` or (better) `async with`, giving the `Binding`.

    On leaving, every tool call the run left open (a parallel call whose sibling raised, a run
    that failed or was cancelled) is closed `failed`: with `async with` before the block ends, with
    a plain `with` as soon as the event loop runs next.
    """

    def __init__(self, binding: Binding) -> None:
        """Bind `binding` while the block runs."""
        self.binding = binding
        """The binding."""
        self._tokens: list[Token[Binding | None]] = []
        self._closing: asyncio.Task[None] | None = None

    def __enter__(self) -> Binding:
        self._tokens.append(current_binding.set(self.binding))
        return self.binding

    def __exit__(self, *exc: object) -> None:
        current_binding.reset(self._tokens.pop())
        loop = self.binding.loop
        if self.binding.tools.open_ids() and loop is not None and loop.is_running():
            self._closing = loop.create_task(self.binding.tools.close_open(LEFT_OPEN_TEXT))

    async def __aenter__(self) -> Binding:
        return self.__enter__()

    async def __aexit__(self, *exc: object) -> None:
        current_binding.reset(self._tokens.pop())
        await self.binding.tools.close_open(LEFT_OPEN_TEXT)


def bind_connection(
    conn: SessionUpdater,
    session_id: str,
    *,
    cwd: str = ".",
    tool_kinds: Mapping[str, ToolKind] | None = None,
    mcp_tools: Sequence[BaseTool] = (),
    permission_policy: PermissionPolicy | None = None,
    tool_presentation: Mapping[str, ToolPresentation] | None = None,
) -> BoundConnection:
    """Report the middleware (and an `AcpCallbackHandler()` without arguments) to `conn` for `session_id`.

    ```python
    async with bind_connection(conn, session_id, cwd=cwd) as binding:
        await agent.ainvoke({"messages": [...]}, {"callbacks": AcpCallbackHandler().handlers()})
    ```

    `mcp_tools` are the session's MCP tools, for `AcpMcpMiddleware` to offer (connect the
    `mcpServers` of `session/new` with [`McpTools`][langchain_acp.McpTools] and pass `mcp.tools`). Every tool run
    passes the binding's permission gate (with `AcpCallbackHandler().handlers()` in the run's
    callbacks): `permission_policy` decides which calls are asked about or refused, "always"
    answers are remembered for the session while the connection lives, and `binding.cancel()`
    (call it from the server's `session/cancel`) gives up an open question. Leaving the block
    closes the tool calls the run left open. `tool_presentation` says how tool calls are shown, as
    the option of the same name does
    ([`acpkit_core.runner.tool_presentation`][acpkit_core.runner.tool_presentation]); its diffs read
    the old text from this machine's disk, under `cwd`.
    """
    binding = binding_for_connection(
        conn,
        session_id,
        cwd=cwd,
        tool_kinds=tool_kinds,
        mcp_tools=mcp_tools,
        permission_policy=permission_policy,
        tool_presentation=tool_presentation,
    )
    return BoundConnection(binding)
