"""The text of `/mcp`: each of the session's MCP servers, its transport, its state and its tools.

The servers are the ones the client gave (`mcpServers` of `session/new`, `session/load`, ...); the
runner says where each stands ([`McpLister`][acpkit_core.runner.protocols.McpLister]). A server the runner
does not report on is shown as not connected, so the list never leaves one out.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..runner.types import McpServer, McpServerStatus

__all__ = ["mcp_text"]

_STATE_WORDS = {"connected": "connected", "failed": "failed", "not_connected": "not connected"}
_TOOL_LIMIT = 40
"""How many tool names one server's line lists before it says how many more there are."""


def _where(server: McpServer) -> str:
    match server.transport:
        case "stdio":
            return " ".join([server.command, *server.args])
        case "http" | "sse":
            return server.url
        case "acp":
            return f"served by the client over ACP, id {server.server_id}"


def _tools(names: Sequence[str]) -> str:
    if not names:
        return "no tools"
    shown = ", ".join(f"`{n}`" for n in names[:_TOOL_LIMIT])
    more = len(names) - _TOOL_LIMIT
    count = f"{len(names)} tool{'s' if len(names) != 1 else ''}"
    return f"{count}: {shown}" + (f" and {more} more" if more > 0 else "")


def mcp_text(servers: Sequence[McpServer], statuses: Sequence[McpServerStatus]) -> str:
    """The `/mcp` text for the session's `servers` given the runner's `statuses` (by server name)."""
    if not servers:
        return "This session has no MCP servers (an editor sends them with session/new or session/load)."
    by_name = {s.name: s for s in statuses}
    connected = sum(1 for s in servers if (st := by_name.get(s.name)) is not None and st.state == "connected")
    lines = [f"MCP servers of this session: {len(servers)}, {connected} connected.", ""]
    for server in servers:
        status = by_name.get(server.name) or McpServerStatus(
            name=server.name, state="not_connected", detail="The agent did not report on it."
        )
        head = f"- `{server.name}` ({server.transport}: {_where(server)}) — {_STATE_WORDS[status.state]}"
        if status.state == "connected":
            head += f", {_tools(list(status.tools))}"
        if status.detail:
            head += f". {status.detail}"
        lines.append(head)
    return "\n".join(lines)
