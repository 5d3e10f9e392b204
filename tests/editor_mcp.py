"""The in-process MCP server the MCP-over-ACP tests serve from the test client (the editor's own tools)."""

from __future__ import annotations

import warnings

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning


def editor_words() -> MCPServer:
    """A real MCP server with one tool, `lookup_word`, which logs to the agent (a server-to-client
    notification, relayed client → agent) before it answers."""
    server = MCPServer("editor-words")

    @server.tool()
    async def lookup_word(word: str, ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
        """Look a word up in the editor's dictionary."""
        with warnings.catch_warnings():  # MCP logging is deprecated by the 2026-07-28 revision, still served
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await ctx.info(f"looking up {word}")  # pyright: ignore[reportDeprecated]
        return f"{word}: a word the editor knows"

    return server
