"""Serving an [`AcpAgent`][acpkit_core.server.AcpAgent] over stdin/stdout or a pair of streams."""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
from typing import cast

import acp
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.stdio import stdio_streams

from ._sdk import ndjson_transport
from .agent import AcpAgent

__all__ = ["run_stdio", "serve_stdio", "serve_streams"]


def _log_to_stderr() -> None:
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)


async def serve_streams(agent: AcpAgent, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Serve `agent` on a byte stream pair until the peer closes it, then close its sessions."""
    try:
        # AcpAgent leaves out what it does not serve (so those methods answer -32601): cast, not subclass.
        transport = ndjson_transport(reader, writer)
        if transport is None:  # an SDK without the transport seam: its own sender
            await acp.run_agent(cast(acp.Agent, agent), writer, reader, use_unstable_protocol=True)
        else:
            await acp.run_agent(cast(acp.Agent, agent), transport, use_unstable_protocol=True)
    finally:
        await agent.shutdown()


async def serve_stdio(agent: AcpAgent) -> None:
    """Serve `agent` over stdin/stdout (logs go to stderr) until the client closes stdin."""
    _log_to_stderr()
    # Everything allocated so far is start-up (the framework and the user's module, imported):
    # keep it out of the cyclic collector, whose full passes over it otherwise cost a streamed
    # turn (one object per token) up to half its time.
    gc.freeze()
    reader, writer = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    await serve_streams(agent, reader, writer)


def run_stdio(agent: AcpAgent) -> None:
    """Blocking form of [`serve_stdio`][acpkit_core.server.serve_stdio]."""
    asyncio.run(serve_stdio(agent))
