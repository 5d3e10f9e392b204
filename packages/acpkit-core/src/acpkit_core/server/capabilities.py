"""What a runner tells the server it can take: prompt content kinds and MCP transports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["CapabilityProvider", "RunnerCapabilities"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerCapabilities:
    """Advertised in `initialize`; only what the runner really handles."""

    image: bool = False
    """The runner passes images to its model (`promptCapabilities.image`)."""
    audio: bool = False
    """The runner passes audio to its model (`promptCapabilities.audio`)."""
    embedded_context: bool = True
    """Embedded `resource` blocks (`promptCapabilities.embeddedContext`); the IR renders them as text."""
    mcp_http: bool = False
    """The runner connects to MCP servers over streamable HTTP (`mcpCapabilities.http`)."""
    mcp_sse: bool = False
    """The runner connects to MCP servers over SSE (`mcpCapabilities.sse`)."""


@runtime_checkable
class CapabilityProvider(Protocol):
    """Optional on a runner: declare [`RunnerCapabilities`][acpkit_core.server.capabilities.RunnerCapabilities]."""

    @property
    def capabilities(self) -> RunnerCapabilities:
        """What this runner handles."""
        ...
