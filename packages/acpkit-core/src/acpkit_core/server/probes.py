"""A connection's telemetry probe, tied to the agent serving it (`None` when telemetry is off)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..telemetry.lookup import observer_of
from ..telemetry.observer import ConnectionProbe

if TYPE_CHECKING:
    from .agent import AcpAgent

__all__ = ["connection_probe"]


def connection_probe(
    agent: AcpAgent,
    transport: str,
    *,
    principal: str | None = None,
    connection_id: str | None = None,
    peer: str | None = None,
) -> ConnectionProbe | None:
    """A probe for a connection `agent` serves, tied to its turns; `None` when telemetry is off."""
    observer = observer_of(agent.options)
    if observer is None:
        return None
    probe = observer.connection(
        transport, principal=principal, connection_id=connection_id, sessions=agent.sessions, peer=peer
    )
    agent.turns.connection = probe
    return probe
