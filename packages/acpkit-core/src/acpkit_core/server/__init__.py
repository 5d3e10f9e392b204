"""The ACP server: one [`AcpAgent`][acpkit_core.server.AcpAgent] per connection, over any runner.

Runners and adapters do not import from here: what they may use is the public runner contract
(`acpkit_core.runner.protocols`, `acpkit_core.runner.types`, `acpkit_core.runner.capabilities`,
`acpkit_core.runner.emitter`, `acpkit_core.permissions`, `acpkit_core.errors`, ...), and `AcpAgent` /
`run_stdio` are importable from `acpkit_core` itself.
"""

from __future__ import annotations

from .agent import AcpAgent
from .stdio import PRINCIPAL_ENV, run_stdio, serve_stdio, serve_streams

__all__ = ["PRINCIPAL_ENV", "AcpAgent", "run_stdio", "serve_stdio", "serve_streams"]
