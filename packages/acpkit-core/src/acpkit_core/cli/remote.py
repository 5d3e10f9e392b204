"""`acpkit chat --url` / `acpkit sessions --url`: the terminal client over the remote transport.

The same [`LocalClient`][acpkit_core.cli.local.LocalClient] answers the agent's fs, terminal and
permission requests as over stdio; only the connection differs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.client.connection import ClientSideConnection
from acp.connection import StreamEvent
from acp.schema import InitializeResponse

from ..server._sdk import tracked
from .local import CAPABILITIES, LocalClient
from .spawn import AgentExited, chat_cancel, client_info

__all__ = ["RemoteAgent", "connect_url", "initialize_remote"]


@dataclass(frozen=True, slots=True)
class RemoteAgent:
    """The agent at the other end of a URL."""

    url: str

    @property
    def name(self) -> str:
        """The URL, as the user typed it."""
        return self.url


@asynccontextmanager
async def connect_url(
    url: str,
    client: LocalClient,
    *,
    token_file: str | None,
    observers: list[Callable[[StreamEvent], None]] | None = None,
) -> AsyncGenerator[tuple[ClientSideConnection, RemoteAgent]]:
    """The SDK client connection to the agent at `url`; `AgentExited` (with the reason) when it cannot be reached."""
    from ..remote.client import RemoteError, read_token
    from ..remote.resume import ResumingTransport

    try:
        # a dropped connection is re-established and its sessions re-attached (nothing said meanwhile is lost)
        transport: Any = await ResumingTransport(url, token=read_token(token_file)).start()
    except RemoteError as exc:
        raise AgentExited(str(exc), 2) from None
    kwargs: dict[str, Any] = {"observers": list(observers)} if observers else {}
    conn = ClientSideConnection(cast(Client, client), transport, use_unstable_protocol=True, **kwargs)
    tracked(conn, chat_cancel)
    try:
        yield conn, RemoteAgent(url)
    finally:
        await client.close()
        with contextlib.suppress(Exception):
            await conn.close()
        with contextlib.suppress(Exception):
            await transport.close()


async def initialize_remote(conn: ClientSideConnection, agent: RemoteAgent, *, timeout: float) -> InitializeResponse:
    """`initialize` over the remote connection; `AgentExited` saying what went wrong (HTTP status, refusal)."""
    import httpx
    from acp.http.client import AcpHttpStatusError

    try:
        return await asyncio.wait_for(
            conn.initialize(
                protocol_version=PROTOCOL_VERSION, client_capabilities=CAPABILITIES, client_info=client_info()
            ),
            timeout,
        )
    except AcpHttpStatusError as exc:
        why = {401: "the server wants a valid token (--token-file)", 403: "the server refused this origin"}
        raise AgentExited(f"{agent.url}: HTTP {exc.status_code}: {why.get(exc.status_code, 'refused')}", 2) from None
    except httpx.HTTPError as exc:
        raise AgentExited(f"{agent.url}: cannot connect: {exc}", 2) from None
    except ConnectionError:
        raise AgentExited(f"{agent.url}: the server closed the connection before answering initialize", 2) from None
    except TimeoutError:
        raise AgentExited(f"{agent.url} did not answer initialize within {timeout:g} s", 2) from None
    except RequestError as exc:
        raise AgentExited(f"{agent.url} refused initialize ({exc})", 2) from None
