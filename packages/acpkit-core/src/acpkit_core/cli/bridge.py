"""`acpkit bridge URL`: an editor speaks stdio, the agent is remote.

Editors that can only start a command (Zed, JetBrains) start `acpkit bridge wss://host/acp
--token-file ~/.acp-token`: each JSON-RPC line from stdin goes to the remote agent, each message
from it is written to stdout as one line. A line that is not JSON is answered -32700 here. When the
editor closes stdin the remote connection ends (Streamable HTTP: `DELETE`). A dropped connection is
re-established with backoff and every session waiting for a turn re-attached after the last update
the editor got ([`ResumingTransport`][acpkit_core.remote.ResumingTransport]); when the server stays
away (about a minute of attempts) the bridge says so on stderr and exits 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from typing import Any, cast

from ..server.jsonrpc import PARSE_ERROR, error_response
from ..server.process_io import stdio_streams
from ..server.transport import encode_message

__all__ = ["bridge", "bridge_main"]

log = logging.getLogger("acpkit.cli")

EXIT_SERVER_GONE = 1
EXIT_CONNECT = 2
LINE_LIMIT = 64 << 20


async def bridge(url: str, *, token: str | None) -> int:
    """Relay stdin/stdout to the agent at `url` until either side ends; returns the exit code."""
    from ..remote.client import RemoteError
    from ..remote.resume import ResumingTransport

    try:
        # a dropped connection is re-established and its sessions re-attached: the editor sees no gap
        transport: Any = await ResumingTransport(url, token=token).start()
    except RemoteError as exc:
        print(f"acpkit bridge: {exc}", file=sys.stderr)
        return EXIT_CONNECT
    reader, writer = await stdio_streams(limit=LINE_LIMIT)

    pending: set[str] = set()
    answered = asyncio.Event()

    def write(message: Any) -> None:
        writer.write(encode_message(message))

    def key(message: dict[str, Any]) -> str:
        return json.dumps(message.get("id"))

    async def upstream() -> None:
        while True:
            try:
                line = await reader.readline()
            except ValueError:  # over the limit: the remote side would refuse it too
                write(error_response(None, -32600, "Invalid Request: the message is too large for the bridge"))
                continue
            if not line:
                break
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                write(error_response(None, PARSE_ERROR, f"Parse error: {exc}"))
                continue
            request = cast("dict[str, Any]", message) if isinstance(message, dict) else {}
            if "id" in request and "method" in request:
                pending.add(key(request))
            try:
                await transport.send(message)
            except Exception as exc:  # a refused POST (HTTP status) or a closed socket
                reason = f"the remote agent refused the message: {exc}"
                print(f"acpkit bridge: {reason}", file=sys.stderr)
                if "id" in request and "method" in request:
                    pending.discard(key(request))
                    write(error_response(request["id"], -32603, reason))
        # stdin ended: the editor is done; its requests still in flight are answered first.
        while pending:
            answered.clear()
            await answered.wait()

    async def downstream() -> None:
        while (message := await transport.receive()) is not None:
            write(message)
            if isinstance(message, dict) and "method" not in message:
                pending.discard(key(cast("dict[str, Any]", message)))
                answered.set()
            await writer.drain()

    up = asyncio.ensure_future(upstream())
    down = asyncio.ensure_future(downstream())
    done, _ = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
    code = 0
    if down in done:
        print(f"acpkit bridge: the server at {url} closed the connection", file=sys.stderr)
        code = EXIT_SERVER_GONE
    for task in (up, down):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    with contextlib.suppress(Exception):
        await transport.close()
    with contextlib.suppress(Exception):
        await writer.drain()
    return code


def bridge_main(url: str, token_file: str | None) -> int:
    """Run `acpkit bridge`; returns the exit code."""
    try:
        from ..remote.client import RemoteError, read_token
    except ModuleNotFoundError as exc:
        from .serve import missing_extra

        return missing_extra("bridge", exc)
    try:
        token = read_token(token_file)
    except RemoteError as exc:
        print(f"acpkit bridge: {exc}", file=sys.stderr)
        return EXIT_CONNECT
    try:
        return asyncio.run(bridge(url, token=token))
    except KeyboardInterrupt:
        return 130
