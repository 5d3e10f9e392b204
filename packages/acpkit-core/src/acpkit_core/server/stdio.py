"""Serving an [`AcpAgent`][acpkit_core.server.AcpAgent] over stdin/stdout or a pair of streams."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
from typing import cast

import acp

from ..auth import terminal_login
from ..limits import MAX_MESSAGE_BYTES
from ._sdk import wire_transport
from .agent import AcpAgent
from .probes import connection_probe
from .process_io import protect_stdout, stdin_is_terminal, stdio_streams, terminal_notice
from .transport import DirectSender

__all__ = ["PRINCIPAL_ENV", "run_stdio", "serve_stdio", "serve_streams"]

PRINCIPAL_ENV = "ACPKIT_PRINCIPAL"
"""Who the one client of a stdio agent is, when its parent knows: `acpkit serve -- CMD` sets it in
each child's environment to the principal of the connection the child serves (and removes it for an
anonymous connection). A stdio agent started with it keeps its sessions as that principal's: it
lists, loads, resumes, forks and deletes only those, and records new ones as theirs, so children of
different principals sharing one store do not see each other's sessions."""

READ_BUFFER_BYTES = 1 << 20
"""The stdin reader's buffer: lines longer than this are read in pieces (up to the message limit)."""


def _log_to_stderr() -> None:
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)


async def serve_streams(agent: AcpAgent, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Serve `agent` on a byte stream pair until the peer closes it, then close its sessions.

    Every line is read by ACP Kit's [`WireTransport`][acpkit_core.server.transport.WireTransport]:
    a line that is not valid JSON-RPC is answered with the JSON-RPC error and the agent serves on;
    a line over `AgentOptions.max_message_bytes` is refused without being kept in memory.
    Streamed updates are written in batches of `AgentOptions.write_window_ms` (see
    [`DirectSender`][acpkit_core.server.transport.DirectSender]).
    """
    probe = connection_probe(agent, "stdio")  # `None` when telemetry is off
    try:
        limit = MAX_MESSAGE_BYTES.value(agent.options.max_message_bytes)
        window = agent.options.write_window_ms
        sender: DirectSender
        if probe is None:
            sender = DirectSender(writer, window_ms=window)
        else:
            from ..telemetry.wire import MeteredSender

            sender = MeteredSender(writer, probe.counts, window_ms=window)
        # AcpAgent leaves out what it does not serve (so those methods answer -32601): cast, not subclass.
        transport = wire_transport(reader, writer, max_message_bytes=limit, sender=sender)
        if transport is None:  # an SDK without the transport seam: its own reader and sender
            await acp.run_agent(cast(acp.Agent, agent), writer, reader, use_unstable_protocol=True)
        else:
            await acp.run_agent(cast(acp.Agent, agent), transport, use_unstable_protocol=True)
    finally:
        await agent.shutdown()
        if probe is not None:
            probe.close()  # its totals and its log line


async def serve_stdio(agent: AcpAgent) -> None:
    """Serve `agent` over stdin/stdout (logs go to stderr) until the client closes stdin.

    Started by a client for a terminal login (`ACPKIT_TERMINAL_LOGIN` set, see
    [`TerminalMethod`][acpkit_core.auth.TerminalMethod]), it runs that login in the terminal
    instead and exits with its code (`SystemExit`).

    Started by `acpkit serve -- CMD` for a connection with a principal, its sessions are that
    principal's ([`PRINCIPAL_ENV`][acpkit_core.server.stdio.PRINCIPAL_ENV]).

    Stdout carries the protocol alone: a `print()` in the agent's code goes to stderr
    ([`protect_stdout`][acpkit_core.server.process_io.protect_stdout]). Started in a terminal,
    it prints one line saying how to talk to the agent and returns.
    """
    login = await terminal_login(agent.options.auth)
    if login is not None:  # the client started this process to log in from a terminal, not to serve ACP
        raise SystemExit(login)
    if stdin_is_terminal():
        print(terminal_notice(agent.options.title or agent.options.name), file=sys.stderr)
        return
    principal = os.environ.get(PRINCIPAL_ENV)
    if principal:
        agent.sessions.principal = principal
    protocol_fd = protect_stdout()
    _log_to_stderr()
    # Everything allocated so far is start-up (the framework and the user's module, imported):
    # keep it out of the cyclic collector, whose full passes over it otherwise cost a streamed
    # turn (one object per token) up to half its time.
    gc.freeze()
    reader, writer = await stdio_streams(limit=READ_BUFFER_BYTES, stdout_fd=protocol_fd)
    await serve_streams(agent, reader, writer)


def run_stdio(agent: AcpAgent) -> None:
    """Blocking form of [`serve_stdio`][acpkit_core.server.serve_stdio]."""
    asyncio.run(serve_stdio(agent))
