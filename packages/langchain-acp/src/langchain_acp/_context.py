"""The ACP turn a graph is running for, visible to the middleware and callbacks inside it.

The runner sets [`current_binding`][langchain_acp._context.current_binding] around each graph run;
LangGraph runs nodes and tools in tasks that copy the context, so the middleware and the callback
handler find the same turn and the same tool-call tracker the stream mapper uses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from acp.schema import ToolKind
from acpkit_core.runner import Emitter, PermissionDecision, Turn
from acpkit_core.tools import classify_tool, tool_locations
from langchain_core.tools import BaseTool

from ._tools import ToolCallTracker

__all__ = ["Asker", "Binding", "StaticClassifier", "current_binding"]


Asker = Callable[..., Awaitable[PermissionDecision]]
"""`ask(tool_call_id, *, tool_name, title, kind, raw_input) -> PermissionDecision`."""


@dataclass(frozen=True, slots=True)
class Binding:
    """One turn as the pieces inside the graph see it."""

    emit: Emitter
    """Where updates go."""
    tools: ToolCallTracker
    """The turn's tool-call tracker."""
    turn: Turn | None = None
    """The server's turn (`None` when a hand-built server wires the middleware to a connection)."""
    ask: Asker | None = None
    """Asks the user for permission (the turn's `request_permission`, or one over a connection)."""
    send: Callable[[Any], Awaitable[None]] | None = None
    """Sends a raw `session/update` (for updates the emitter does not cover, e.g. `current_mode_update`)."""
    loop: asyncio.AbstractEventLoop | None = None
    """The event loop the emitter belongs to (callbacks of sync tools run in other threads and loops)."""
    mcp_tools: Sequence[BaseTool] = ()
    """Tools of the session's MCP servers (offered to the model by `AcpMcpMiddleware`)."""

    async def run(self, work: Callable[[], Awaitable[None]]) -> None:
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


@dataclass(frozen=True, slots=True)
class StaticClassifier:
    """Tool kinds and locations without a server turn: the core classifier with fixed overrides."""

    cwd: str
    """Directory relative paths are resolved against."""
    overrides: Mapping[str, ToolKind] | None = None
    """Per-tool kind overrides."""

    def classify_tool(self, name: str, args: Mapping[str, Any] | None = None) -> ToolKind:
        """The ACP kind of a tool."""
        return classify_tool(name, args, self.overrides)

    def tool_locations(self, args: Mapping[str, Any] | None) -> list[tuple[str, int | None]]:
        """Locations from path-like arguments (virtual paths outside `cwd` left out, as in a server turn)."""
        return tool_locations(args, self.cwd, roots=(self.cwd,))
