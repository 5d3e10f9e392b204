"""Unstable ACP surfaces: which ones a client opted into, and how core decides what to send.

ACP's unstable schema (`schema.unstable.json`) carries fields and updates that the stable schema
does not have: `usage` at the root of the prompt answer, `session/fork` in `sessionCapabilities`,
notices, compaction updates, a tool call's `name`, plan operations, MCP over ACP, custom LLM
endpoints. On a plain v1 connection none of them may appear ("no custom field at the root of a
spec type"): an agent sends one only to a client that negotiated it.

**How a client opts in.** Two ways, and either is enough for a surface:

1. The unstable schema's own capability for the surface, where it has one (for example
   `clientCapabilities.plan` for plan operations): a client that sends it speaks that part of the
   unstable schema. [`UnstableSurface.native`][acpkit_core.runner.unstable.UnstableSurface.native] reads it.
2. ACP Kit's opt-in in the client capabilities' `_meta`, for every surface, including those the
   schema gives no capability (notices, tool-call names, the prompt answer's `usage`):

   ```json
   {"clientCapabilities": {"_meta": {"acpkit.unstable": {"promptUsage": {}, "sessionFork": {}}}}}
   ```

   Each key names a surface (`{}` means "yes", as ACP's capability objects do; `null` or absent
   means no); `"acpkit.unstable": true` accepts every surface the agent offers.

**What the agent answers.** `initialize` lists the surfaces it will use on this connection in
`agentCapabilities._meta["acpkit.unstable"]` (the same shape), so the client knows which ones to
expect. A surface the client did not opt into is never sent: core checks
[`ClientInfo.uses`][acpkit_core.runner.types.ClientInfo.uses] before each one, in one place per surface
(the prompt answer in `server/turn_runner.py`, the session capabilities in `server/agent.py`).

**Adding a surface.** Append an [`UnstableSurface`][acpkit_core.runner.unstable.UnstableSurface] to
[`UNSTABLE_SURFACES`][acpkit_core.runner.unstable.UNSTABLE_SURFACES] (with `native` when the schema has a
capability for it), send the surface only where `client.uses(name)` is true, and on a plain
client send nothing or its stable fallback (for the prompt answer's `usage`: under `_meta`). The
generated docs page of methods and updates reads this table, and the schema test validates what a
plain client receives against `schema.json` and what an opted-in one receives against
`schema.unstable.json`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from acp.schema import ClientCapabilities

__all__ = ["UNSTABLE_META_KEY", "UNSTABLE_SURFACES", "UnstableSurface", "negotiate_unstable", "unstable_answer"]

log = logging.getLogger("acpkit_core.server")

UNSTABLE_META_KEY: Final = "acpkit.unstable"
"""The `_meta` key of the opt-in (in `clientCapabilities`) and of the answer (in `agentCapabilities`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnstableSurface:
    """One unstable part of ACP that ACP Kit sends only to clients that opted in."""

    name: str
    """The key a client lists under `_meta["acpkit.unstable"]` (camelCase, like ACP's own fields)."""
    title: str
    """What it is, in a few words (for logs and the docs)."""
    rfd: str
    """The RFD that defines it (`rfds/<rfd>.mdx` in the ACP repository)."""
    native: Callable[[ClientCapabilities], bool] | None = None
    """Reads the unstable schema's own client capability for the surface, where it has one."""


UNSTABLE_SURFACES: tuple[UnstableSurface, ...] = (
    UnstableSurface(
        name="promptUsage",
        title="token usage at the root of the `session/prompt` answer (else under `_meta`)",
        rfd="end-turn-token-usage",
    ),
    UnstableSurface(
        name="sessionFork",
        title="`fork` in `sessionCapabilities` (the method itself is served to every client)",
        rfd="session-fork",
    ),
    UnstableSurface(
        name="mcpOverAcp",
        title="MCP servers the client serves over the ACP connection (`mcpCapabilities.acp`, `mcp/*`)",
        rfd="mcp-over-acp",
    ),
    UnstableSurface(
        name="providers",
        title="the client's own LLM endpoint for the agent's model (`providers/*`)",
        rfd="custom-llm-endpoint",
    ),
    UnstableSurface(
        name="sessionNotices",
        title="`notice` updates (else an agent message of its own, tagged `_meta.acpkit.notice`)",
        rfd="session-notices",
    ),
    UnstableSurface(
        name="sessionCompaction",
        title="`compaction_update` when the history is compacted (else a notice)",
        rfd="session-compaction",
        native=lambda caps: getattr(caps.session, "compaction", None) is not None,
    ),
    UnstableSurface(
        name="toolCallName",
        title="the tool's `name` in `tool_call` (else left out)",
        rfd="tool-call-name",
    ),
    UnstableSurface(
        name="planOperations",
        title="`plan_update` / `plan_removed`, several plans by id (else the stable `plan`)",
        rfd="plan-operations",
        native=lambda caps: caps.plan is not None,
    ),
)
"""Every unstable surface this agent can send, each behind its opt-in."""


def _wanted(meta: Mapping[str, Any] | None) -> tuple[bool, set[str]]:
    """`(every, names)` from the `_meta` opt-in: `true` accepts all, an object lists names."""
    if not meta or UNSTABLE_META_KEY not in meta:
        return False, set()
    value = meta[UNSTABLE_META_KEY]
    if value is True:
        return True, set()
    if isinstance(value, Mapping):
        return False, {str(k) for k, v in value.items() if v is not None and v is not False}  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType]
    log.warning("ignored clientCapabilities._meta[%r]: not true or an object of surfaces: %r", UNSTABLE_META_KEY, value)
    return False, set()


def negotiate_unstable(
    caps: ClientCapabilities, surfaces: tuple[UnstableSurface, ...] = UNSTABLE_SURFACES
) -> frozenset[str]:
    """The names of the `surfaces` the client opted into (natively or through `_meta`)."""
    every, names = _wanted(caps.field_meta)
    known = {s.name for s in surfaces}
    unknown = names - known
    if unknown:
        log.info("the client opted into unstable surfaces this agent does not offer: %s", sorted(unknown))
    agreed = {s.name for s in surfaces if every or s.name in names or (s.native is not None and s.native(caps))}
    return frozenset(agreed)


def unstable_answer(agreed: frozenset[str]) -> dict[str, Any] | None:
    """`agentCapabilities._meta` entries saying which surfaces this connection uses (`None`: none)."""
    if not agreed:
        return None
    return {UNSTABLE_META_KEY: {name: {} for name in sorted(agreed)}}
