"""An MCP server whose tools answer with an image, audio, an embedded file, or an error.

`python lc_mcp_media_server.py` serves stdio; `... http PORT` or `... sse PORT` serves streamable
HTTP or SSE on 127.0.0.1.
"""

import base64
import os
import sys

from mcp.server.mcpserver import Audio, Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import BlobResourceContents, EmbeddedResource

server = MCPServer("media")

# A 1x1 transparent PNG.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")
# The first bytes of a WAV file (enough for the tests: nobody plays it).
WAV = (
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00"
    b"D\xac\x00\x00\x88X\x01\x00\x02\x00\x10\x00data\x00\x00\x00\x00"
)
PDF = b"%PDF-1.4\n%%EOF\n"


@server.tool(structured_output=False)
def swatch(color: str) -> list[object]:
    """A colour swatch and its name."""
    return [f"swatch of {color}", Image(data=PNG, format="png")]


@server.tool(structured_output=False)
def chime() -> list[object]:
    """A short sound."""
    return [Audio(data=WAV, format="wav")]


@server.tool(structured_output=False)
def manual() -> list[object]:
    """The manual, as an embedded PDF."""
    blob = BlobResourceContents(
        uri="file:///docs/manual.pdf", blob=base64.b64encode(PDF).decode(), mime_type="application/pdf"
    )
    return [EmbeddedResource(type="resource", resource=blob)]


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def header(ctx: Context) -> str:
    """The `x-test` header of the HTTP request (empty over stdio)."""
    return (ctx.headers or {}).get("x-test", "")


@server.tool()
def broken(reason: str) -> str:
    """Always fails, with a message for the model."""
    raise ToolError(f"broken: {reason}")


if __name__ == "__main__":
    if len(sys.argv) == 3:  # `http PORT` or `sse PORT`
        transport = "streamable-http" if sys.argv[1] == "http" else "sse"
        server.run(transport, host="127.0.0.1", port=int(sys.argv[2]))  # pyright: ignore[reportCallIssue, reportArgumentType]
    else:
        server.run("stdio")
