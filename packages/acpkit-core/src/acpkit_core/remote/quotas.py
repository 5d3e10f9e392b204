"""Per-principal quotas: no one token takes every connection, session or turn of a server.

With bearer tokens every connection belongs to a principal.
[`PrincipalQuotas`][acpkit_core.remote.quotas.PrincipalQuotas] counts, per principal, the
connections open, the sessions open on them and the turns running, and refuses one more past its
limit with a message naming the limit:

| quota | refused with |
|---|---|
| `max_connections_per_principal` | HTTP `429` (WebSocket upgrade or `initialize` POST) |
| `max_sessions_per_principal` | JSON-RPC `-32600` on `session/new`, `load`, `resume`, `fork` |
| `max_turns_per_principal` | JSON-RPC `-32600` on `session/prompt` |

Without tokens there are no principals (the server listens on loopback only) and no quotas.
The counts are read from the connections themselves when a check runs, so they cannot drift.
"""

from __future__ import annotations

from collections.abc import Callable

from acp import RequestError

from .connection import RemoteConnection

__all__ = ["PrincipalQuotas"]


class PrincipalQuotas:
    """The connections of each principal, and the checks of its three quotas."""

    def __init__(self, *, connections: int, sessions: int, turns: int) -> None:
        self.max_connections = connections
        """Connections one principal may hold open (`max_connections_per_principal`)."""
        self.max_sessions = sessions
        """Sessions one principal may hold open across its connections (`max_sessions_per_principal`)."""
        self.max_turns = turns
        """Turns one principal may run at once across its connections (`max_turns_per_principal`)."""
        self._by_principal: dict[str, set[RemoteConnection]] = {}
        self.on_refusal: Callable[[str], None] | None = None
        """Told the reason of each session or turn refused (`principal_sessions`, `principal_turns`):
        the server counts them in `acpkit.refusals`."""

    def refused(self, reason: str) -> None:
        """Report one refusal (see `on_refusal`)."""
        if self.on_refusal is not None:
            self.on_refusal(reason)

    def connections_of(self, principal: str) -> set[RemoteConnection]:
        """The open connections of `principal`."""
        return self._by_principal.get(principal, set())

    def connection_refusal(self, principal: str | None) -> str | None:
        """Why `principal` may not open one more connection (`None`: it may)."""
        if principal is None:
            return None
        held = len(self.connections_of(principal))
        if held < self.max_connections:
            return None
        return (
            f"too many connections for principal {principal!r}: it holds {held}, the server's limit per principal "
            f"(max_connections_per_principal={self.max_connections}); close one first"
        )

    def add(self, conn: RemoteConnection) -> None:
        """Count `conn` (and check its sessions and turns against its principal's quotas)."""
        if conn.principal is None:
            return
        self._by_principal.setdefault(conn.principal, set()).add(conn)
        conn.admit(_Admission(self, conn.principal))

    def remove(self, conn: RemoteConnection) -> None:
        """Stop counting `conn`."""
        if conn.principal is None:
            return
        held = self._by_principal.get(conn.principal)
        if held is not None:
            held.discard(conn)
            if not held:
                del self._by_principal[conn.principal]

    def open_sessions(self, principal: str) -> int:
        """Sessions `principal` holds open across its connections."""
        return sum(c.open_sessions for c in self.connections_of(principal))

    def running_turns(self, principal: str) -> int:
        """Turns `principal` runs across its connections."""
        return sum(c.running_turns for c in self.connections_of(principal))


class _Admission:
    """One principal's session and turn quotas, as the core server asks them."""

    __slots__ = ("_principal", "_quotas")

    def __init__(self, quotas: PrincipalQuotas, principal: str) -> None:
        self._quotas = quotas
        self._principal = principal

    def session(self) -> None:
        quotas = self._quotas
        held = quotas.open_sessions(self._principal)
        if held >= quotas.max_sessions:
            quotas.refused("principal_sessions")
            raise RequestError.invalid_request(
                {
                    "details": f"principal {self._principal!r} already has {held} open sessions, the server's limit "
                    f"per principal (max_sessions_per_principal={quotas.max_sessions}): close one with "
                    "session/close first"
                }
            )

    def turn(self) -> None:
        quotas = self._quotas
        running = quotas.running_turns(self._principal)
        if running >= quotas.max_turns:
            quotas.refused("principal_turns")
            raise RequestError.invalid_request(
                {
                    "details": f"principal {self._principal!r} already runs {running} turns, the server's limit per "
                    f"principal (max_turns_per_principal={quotas.max_turns}): wait for one to end, or cancel one"
                }
            )
