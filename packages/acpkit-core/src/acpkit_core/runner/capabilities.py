"""What a runner declares besides `run_turn`: the content and MCP transports it takes, its commands.

Both are optional protocols the server checks with `isinstance`; a runner that declares nothing
gets the defaults of [`RunnerCapabilities`][acpkit_core.runner.capabilities.RunnerCapabilities] and only
the built-in commands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..config import Command

__all__ = ["CapabilityProvider", "CommandSource", "RunnerCapabilities"]


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
    """Optional on a runner: declare [`RunnerCapabilities`][acpkit_core.runner.capabilities.RunnerCapabilities]."""

    @property
    def capabilities(self) -> RunnerCapabilities:
        """What this runner handles."""
        ...


@runtime_checkable
class CommandSource(Protocol):
    """Optional on a runner: slash commands it contributes (after the built-ins, before the developer's)."""

    def commands(self) -> Sequence[Command]:
        """The runner's commands."""
        ...
