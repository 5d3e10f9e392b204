"""The server-wide budget of bytes in flight: messages from clients received and not yet answered.

Every JSON-RPC message a client sends is held in memory from its first byte until it is handled
(a request until its answer is sent): a frame being received, the decoded text, the parsed
message, a prompt during its turn. [`InflightBudget`][acpkit_core.remote.budget.InflightBudget]
counts those bytes across every connection of one `acpkit serve` process and refuses a message
that would take the total past `max_inflight_bytes`, before it is read into memory (its size is
known from the WebSocket frame header or the POST's `Content-Length`): the client gets a JSON-RPC
error naming the budget, or an HTTP `503`, and may retry.

Each connection holds an [`Account`][acpkit_core.remote.budget.Account]: what it reserved, given
back as its messages are handled, and all of it when the connection ends.
"""

from __future__ import annotations

from typing import Final

from ..limits import format_size

__all__ = ["Account", "InflightBudget"]

BUDGET_OPTION: Final = "max_inflight_bytes"


class InflightBudget:
    """Bytes of client messages held by the server, against a fixed total."""

    __slots__ = ("limit", "peak", "refused", "used")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """The most bytes in flight at once (`max_inflight_bytes`)."""
        self.used = 0
        """Bytes in flight now."""
        self.peak = 0
        """The most bytes that were in flight at once since the server started."""
        self.refused = 0
        """Messages refused because the budget was spent."""

    def reserve(self, size: int) -> bool:
        """Take `size` bytes if they fit; `False` (and nothing taken) when they do not."""
        if self.used + size > self.limit:
            self.refused += 1
            return False
        self.used += size
        self.peak = max(self.peak, self.used)
        return True

    def release(self, size: int) -> None:
        """Give `size` bytes back."""
        self.used = max(0, self.used - size)

    def refusal(self, size: int) -> str:
        """What a client is told when a message of `size` bytes does not fit."""
        return (
            f"the server is busy: a message of {format_size(size)} does not fit in its budget for messages in flight "
            f"({format_size(self.used)} of {format_size(self.limit)} in use across all connections, "
            f"{BUDGET_OPTION}); it was not read: send it again later"
        )

    def refusal_data(self, size: int) -> dict[str, object]:
        """The JSON-RPC error's `data` for a refusal (machine-readable)."""
        return {"limit": BUDGET_OPTION, "max": self.limit, "inUse": self.used, "size": size, "retry": True}


class Account:
    """One connection's share of the budget: what it reserved and has not given back."""

    __slots__ = ("budget", "held")

    def __init__(self, budget: InflightBudget) -> None:
        self.budget = budget
        self.held = 0
        """Bytes this connection holds now."""

    def reserve(self, size: int) -> bool:
        """Take `size` bytes from the budget for this connection (`False` when they do not fit)."""
        if not self.budget.reserve(size):
            return False
        self.held += size
        return True

    def release(self, size: int) -> None:
        """Give back `size` bytes of what this connection holds."""
        size = min(size, self.held)
        self.held -= size
        self.budget.release(size)

    def close(self) -> None:
        """The connection ended: give back everything it holds."""
        self.release(self.held)
