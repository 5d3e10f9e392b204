"""The ACP turn a graph is running for, visible to the middleware and callbacks inside it.

The runner sets [`current_binding`][langchain_acp._context.current_binding] around each graph run;
LangGraph runs nodes and tools in tasks that copy the context, so the middleware and the callback
handler find the same turn and the same tool-call tracker the stream mapper uses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from acp.schema import ToolKind
from acpkit_core.runner.permission_gate import PermissionGate
from acpkit_core.runner.protocols import Emitter, Turn
from acpkit_core.runner.tool_lifecycle import StaticClassifier, ToolCalls
from acpkit_core.runner.types import PermissionDecision
from langchain_core.tools import BaseTool

__all__ = ["Binding", "StaticClassifier", "ToolGate", "current_binding"]


class ToolGate(Protocol):
    """The permission and mode gate (the server's turn, or a core `PermissionGate` for a hand-built server)."""

    @property
    def cancelled(self) -> bool:
        """True once the turn was cancelled."""
        ...

    def tool_allowed(self, name: str, kind: ToolKind) -> bool:
        """False when the policy denies the tool or the mode hides it."""
        ...

    def needs_permission(self, name: str, kind: ToolKind) -> bool:
        """True unless every rule lets the tool run without asking."""
        ...

    def refusal(self, name: str, kind: ToolKind) -> str:
        """Why the tool may not run, naming what refused it (the policy, the mode, the user)."""
        ...

    async def authorize_tool(
        self, tool_call_id: str, *, tool_name: str, title: str, kind: ToolKind = "other", raw_input: Any = None
    ) -> PermissionDecision:
        """May this call run now (asks only when the rules say `ask`)."""
        ...

    async def request_permission(
        self, tool_call_id: str, *, tool_name: str, title: str, kind: ToolKind = "other", raw_input: Any = None
    ) -> PermissionDecision:
        """Ask the client about this call (unless a rule or a remembered answer settles it)."""
        ...


@dataclass(frozen=True, slots=True)
class Binding:
    """One turn as the pieces inside the graph see it."""

    emit: Emitter
    """Where updates go."""
    tools: ToolCalls
    """The turn's tool calls (core's lifecycle object)."""
    turn: Turn | None = None
    """The server's turn (`None` when a hand-built server wires the middleware to a connection)."""
    gate: ToolGate = field(default_factory=lambda: PermissionGate())
    """The permission and mode gate (the turn, or a `PermissionGate` over a connection)."""
    send: Callable[[Any], Awaitable[None]] | None = None
    """Sends a raw `session/update` (for updates the emitter does not cover, e.g. `current_mode_update`)."""
    loop: asyncio.AbstractEventLoop | None = None
    """The event loop the emitter belongs to (callbacks of sync tools run in other threads and loops)."""
    mcp_tools: Sequence[BaseTool] = ()
    """Tools of the session's MCP servers (offered to the model by `AcpMcpMiddleware`)."""
    session_id: str | None = None
    """The ACP session id (the turn's session when served; the one given to `bind_connection` otherwise)."""

    def cancel(self) -> None:
        """Cancel the run (a hand-built server calls it from its `session/cancel` handler).

        A permission question still open is given up with the outcome `cancelled`, and the run's next
        model call stops it (with `AcpCallbackHandler().handlers()` in its callbacks): no model is
        called for a cancelled binding.
        """
        if isinstance(self.gate, PermissionGate):
            self.gate.cancel()

    async def run(self, work: Callable[[], Awaitable[object]]) -> None:
        """Run `work` on the binding's loop, from whatever loop or thread we are in."""
        loop = self.loop
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if loop is None or loop is here:
            await work()
            return

        async def wrapped() -> None:
            await work()

        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(wrapped(), loop))


current_binding: ContextVar[Binding | None] = ContextVar("langchain_acp_binding", default=None)
"""The binding of the turn running in this context, if any."""
