"""A tiny stdio MCP server for the tests: `python pyd_mcp_server.py`."""

from __future__ import annotations

from mcp.server import MCPServer

server = MCPServer("notes")


@server.tool()
def lookup_word(word: str) -> str:
    """Look a word up in the test dictionary."""
    return f"{word}: a word the MCP server knows"


if __name__ == "__main__":
    server.run()
