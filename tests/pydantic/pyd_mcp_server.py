"""A tiny MCP server for the tests: `python pyd_mcp_server.py` (stdio) or `... http|sse PORT`."""

from __future__ import annotations

from mcp.server import MCPServer

server = MCPServer("notes")


@server.tool()
def lookup_word(word: str) -> str:
    """Look a word up in the test dictionary."""
    return f"{word}: a word the MCP server knows"


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3:  # `http PORT` or `sse PORT`
        transport = "streamable-http" if sys.argv[1] == "http" else "sse"
        server.run(transport, host="127.0.0.1", port=int(sys.argv[2]))  # pyright: ignore[reportCallIssue, reportArgumentType]
    else:
        server.run()
