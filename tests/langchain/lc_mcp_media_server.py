"""A stdio MCP server whose tools answer with an image, an embedded resource, or an error."""

import base64

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("media")

# A 1x1 transparent PNG.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")


@server.tool(structured_output=False)
def swatch(color: str) -> list[object]:
    """A colour swatch and its name."""
    return [f"swatch of {color}", Image(data=PNG, format="png")]


@server.tool()
def broken(reason: str) -> str:
    """Always fails, with a message for the model."""
    raise ToolError(f"broken: {reason}")


if __name__ == "__main__":
    server.run("stdio")
