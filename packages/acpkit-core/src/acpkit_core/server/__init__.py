"""The ACP server: one [`AcpAgent`][acpkit_core.server.AcpAgent] per connection, over any runner."""

from __future__ import annotations

from ._boundary import to_request_error
from .agent import AcpAgent
from .capabilities import CapabilityProvider, RunnerCapabilities
from .commands import CommandSource
from .stdio import run_stdio, serve_stdio, serve_streams

__all__ = [
    "AcpAgent",
    "CapabilityProvider",
    "CommandSource",
    "RunnerCapabilities",
    "run_stdio",
    "serve_stdio",
    "serve_streams",
    "to_request_error",
]
