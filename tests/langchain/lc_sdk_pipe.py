"""Serve a hand-built ACP agent (the SDK's `Agent` interface, no `acpkit_core.server`) in this process.

`connect_sdk_agent(agent)` connects an `AcpTestClient` to it over a socket pair: a real JSON-RPC
connection on both sides (the SDK's `AgentSideConnection` and `ClientSideConnection`), without a
subprocess.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

import acp
from acp.schema import AgentCapabilities, Implementation, InitializeResponse, NewSessionResponse, PromptResponse
from acpkit_core.testing import AcpTestClient

__all__ = ["HandBuilt", "Run", "connect_sdk_agent"]

Run = Callable[[Any, str, str], Awaitable[str]]
"""`run(conn, session_id, prompt_text) -> stop reason`: one prompt of a hand-built server."""


class HandBuilt:
    """The few ACP methods a hand-built agent needs; each prompt calls `run`."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.count = 0
        self.conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="hand-built", version="0.1.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self.count += 1
        return NewSessionResponse(session_id=f"s{self.count}")

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = "".join(block.text for block in prompt if block.type == "text")
        return PromptResponse(stop_reason=cast(Any, await self.run(self.conn, session_id, text)))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


@asynccontextmanager
async def connect_sdk_agent(agent: Any, **options: Any) -> AsyncGenerator[AcpTestClient]:
    """An `AcpTestClient` talking to `agent` over a socket pair in this process."""
    client = AcpTestClient(**options)
    a, b = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=a)
    client_reader, client_writer = await asyncio.open_connection(sock=b)
    served = asyncio.ensure_future(acp.run_agent(agent, agent_writer, agent_reader, use_unstable_protocol=True))
    conn = acp.connect_to_agent(cast(acp.Client, client), client_writer, client_reader, use_unstable_protocol=True)
    client.conn = conn
    try:
        yield client
    finally:
        await client.host.close()
        client_writer.close()
        await conn.close()
        agent_writer.close()
        try:
            await asyncio.wait_for(served, timeout=5)
        except TimeoutError:
            served.cancel()
        client._cleanup()  # pyright: ignore[reportPrivateUsage]
