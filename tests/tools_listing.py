"""Shared by the adapters' `/tools` tests: the listing in each mode, next to what the model was then offered."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient

__all__ = ["ModeListing", "listings_per_mode", "usable"]


@dataclass(frozen=True)
class ModeListing:
    """`/tools` in one mode, and the tools the model was offered by the next prompt."""

    text: str
    """The text of `/tools`."""
    offered: list[str]
    """The names of the tools the model saw on the next model call, sorted."""


def usable(listing: str) -> list[str]:
    """The names of the tools `/tools` says the model can call now (at once or after asking), sorted."""
    return sorted(
        line.split("`")[1]
        for line in listing.splitlines()
        if line.startswith("- `") and (" — allowed" in line or " — asks first" in line)
    )


async def listings_per_mode(
    agent: AcpAgent,
    modes: Sequence[str],
    *,
    offered: Callable[[], list[str]],
    model_calls: Callable[[], int],
    mcp_servers: Sequence[Any] = (),
) -> list[ModeListing]:
    """In one session (with `mcp_servers`), for each mode: switch, `/tools`, then a prompt `hi`.

    Asserts that `/tools` ends the turn without calling the model or running a tool.
    """
    found: list[ModeListing] = []
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session(mcp_servers=mcp_servers)
        for mode in modes:
            await c.set_mode(sid, mode)
            before = model_calls()
            listed = await c.prompt("/tools", session_id=sid)
            assert listed.stop_reason == "end_turn" and listed.tool_calls == {} and listed.permission_requests == []
            assert model_calls() == before  # listing the tools never calls the model
            await c.prompt("hi", session_id=sid)
            found.append(ModeListing(listed.text, sorted(offered())))
        await c.close_session(sid)
    return found
