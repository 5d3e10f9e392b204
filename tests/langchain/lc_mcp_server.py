"""A tiny stdio MCP server for the tests (`MCPServer` from the `mcp` package, v2)."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")


@server.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper() + "!"


if __name__ == "__main__":
    server.run("stdio")
