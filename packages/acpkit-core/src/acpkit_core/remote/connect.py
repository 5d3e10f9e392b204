"""An SDK client connection to a remote agent, over a plain transport or one that reconnects by
itself ([`ResumingTransport`][acpkit_core.remote.resume.ResumingTransport]).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import Any, cast

import acp
from acp.client.connection import ClientSideConnection

from .client import abort_socket, open_transport

__all__ = ["open_remote"]


@contextlib.asynccontextmanager
async def open_remote(
    client: object, url: str, *, token: str | None = None, reconnect: bool = False
) -> AsyncGenerator[ClientSideConnection]:
    """An SDK client connection to the agent at `url`, serving `client`'s methods (fs, terminal, permissions).

    A Streamable HTTP URL is checked when `initialize` is sent (the SDK's transport POSTs it then):
    a refusal surfaces as an `AcpHttpStatusError` from that call. With `reconnect`, a dropped
    connection is re-established and every session re-attached
    ([`ResumingTransport`][acpkit_core.remote.ResumingTransport]): nothing said meanwhile is lost.
    """
    if reconnect:
        from .resume import ResumingTransport

        transport: Any = await ResumingTransport(url, token=token).start()
    else:
        transport = await open_transport(url, token=token)
    conn = acp.connect_to_agent(cast(acp.Client, client), transport, use_unstable_protocol=True)
    try:
        yield conn
    finally:
        try:
            with contextlib.suppress(Exception):
                await conn.close()
            with contextlib.suppress(Exception):
                await transport.close()
        finally:
            abort_socket(transport)
