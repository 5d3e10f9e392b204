"""What one remote endpoint allows: its connections, sessions, message sizes and buffers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["Limits"]


MiB: Final = 1 << 20


CONNECTION_BYTES: Final = 48 * 1024
"""Memory of one connection with one session, beyond its buffers (measured: 46 KiB with the core server)."""


SESSION_BYTES: Final = 4 * 1024
"""Memory of one more open session in the core server (measured: 3.3 KiB), the framework's aside."""


WRITE_PASS_BYTES: Final = 128 * 1024
"""What may wait for the client beyond the outbound buffer: a WebSocket's frames of one loop pass (up to
64 KiB), what each SSE stream has handed to its socket (64 KiB)."""


RECORD_FACTOR: Final = 3
"""Memory per byte a running turn has sent and keeps until it ends (to record it), at most (measured: 2.2
for chunks of one character, whose kept form costs more than their frame; about 1 for big chunks)."""


INFLIGHT_FACTOR: Final = 4
"""Memory per byte of a client message in flight, at most (measured: 3.3 over WebSocket at its peak:
the frame, its text, the parsed message; less over Streamable HTTP)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """What one `acpkit serve` process allows (see "Operating it" in the remote docs for the memory they bound)."""

    max_message_bytes: int
    """One JSON-RPC message (a WebSocket frame or a POST body)."""
    max_connections: int = 1000
    """Connections open at once (WebSocket and Streamable HTTP together)."""
    max_sessions_per_connection: int = 32
    """Sessions one connection may hold open."""
    idle_seconds: float = 600.0
    """A connection with no traffic and no running turn for this long is closed; so is one whose client has
    taken nothing for this long while its outbound buffer was full (its turns are cancelled and recorded)."""
    max_pending_connections: int = 1024
    """TCP connections waiting for a complete request head (not yet authenticated): past it, those waiting
    for 2 s or more are closed, the oldest first."""
    handshake_seconds: float = 10.0
    """A TCP connection must complete its request head, and a WebSocket its upgrade, within this."""
    max_inflight_bytes: int = 128 * MiB
    """Bytes of client messages received and not yet handled, across all connections."""
    outbound_buffer_bytes: int = 64 * 1024
    """Bytes waiting for one client past which the agent waits (one message always fits)."""
    max_connections_per_principal: int = 100
    """Connections one principal (token) may hold open."""
    max_sessions_per_principal: int = 200
    """Sessions one principal may hold open across its connections."""
    max_turns_per_principal: int = 20
    """Turns one principal may run at once across its connections."""

    def memory_bound(self, idle_bytes: int, *, largest_message: int = 64 * 1024) -> int:
        """The most memory a replica serving with these limits holds, in bytes (the formula of "Operating it").

        `idle_bytes`: its resident size with no connection; `largest_message`: the largest message the
        agent sends (a streamed chunk is tens of bytes, a tool result can be more). What the agent's
        framework keeps per session, and the output of turns whose clients read it, come on top.
        """
        waiting = 2 * self.outbound_buffer_bytes + WRITE_PASS_BYTES + 2 * largest_message
        sent = waiting + 2 * self.outbound_buffer_bytes  # and the kernel's send buffer: twice SO_SNDBUF
        per_connection = (
            CONNECTION_BYTES + self.max_sessions_per_connection * SESSION_BYTES + waiting + RECORD_FACTOR * sent
        )
        return idle_bytes + self.max_connections * per_connection + INFLIGHT_FACTOR * self.max_inflight_bytes
