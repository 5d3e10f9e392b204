"""How the middleware finds the ACP side: the current turn, or a connection bound by the developer."""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager

from acp.schema import ToolKind
from acpkit_core.errors import HostUnavailableError
from acpkit_core.host import ClientHost
from acpkit_core.permissions import PermissionPolicy
from langchain_core.tools import BaseTool

from .._context import Binding, current_binding
from ..callbacks import SessionUpdater, binding_for_connection

__all__ = ["bind_connection", "client_host", "current_acp"]


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


@contextmanager
def bind_connection(
    conn: SessionUpdater,
    session_id: str,
    *,
    cwd: str = ".",
    tool_kinds: Mapping[str, ToolKind] | None = None,
    mcp_tools: Sequence[BaseTool] = (),
    permission_policy: PermissionPolicy | None = None,
) -> Generator[Binding]:
    """Report the middleware (and an `AcpCallbackHandler()` without arguments) to `conn` for `session_id`.

    ```python
    with bind_connection(conn, session_id, cwd=cwd):
        await agent.ainvoke({"messages": [...]}, config)
    ```

    `mcp_tools` are the session's MCP tools, for `AcpMcpMiddleware` to offer. Every tool run
    passes the binding's permission gate (with `AcpCallbackHandler().handlers()` in the run's
    callbacks): `permission_policy` decides which calls are asked about or refused, "always"
    answers are remembered for the session while the connection lives, and `binding.cancel()`
    (call it from the server's `session/cancel`) gives up an open question.
    """
    binding = binding_for_connection(
        conn, session_id, cwd=cwd, tool_kinds=tool_kinds, mcp_tools=mcp_tools, permission_policy=permission_policy
    )
    token = current_binding.set(binding)
    try:
        yield binding
    finally:
        current_binding.reset(token)
