"""Going back to an earlier prompt: what a runner sees of `/rewind`, `/retry` and fork at a prompt.

The server does the rewinding, once, for every runner: it keeps a mark per prompt (the runner's
`session.state` and the length of `session.history` when the prompt arrived), cuts the
transcript, restores the files the agent changed (asking the user first), and records the result
in the store. A runner whose framework keeps its whole conversation in
[`session.history`][acpkit_core.runner.types.Session.history] needs nothing more: the server cuts the
log at the length it had when the prompt arrived.

A runner whose conversation lives elsewhere (a LangGraph checkpointer), or whose history items do
not map one to one onto prompts (a history rewritten by the framework), implements
[`SessionRewinder`][acpkit_core.runner.rewind.SessionRewinder]: the server then restores
`session.state` and leaves `session.history` to it.

```python
class MyRunner:
    async def run_turn(self, turn: Turn) -> StopReason: ...

    async def rewind_session(self, session: Session, point: RewindPoint) -> None:
        if not my_framework.can_go_back(session.id):
            raise RewindError("this framework's memory cannot go back to an earlier prompt")
        session.state["resume_from"] = my_framework.mark_before(session.id, point.prompt_id)
```

Record what the framework must do in `session.state` (the server saves it with the rest of the
rewind, in one transaction) rather than changing the framework's storage at once: a rewind the
user cancels, or that cannot be saved, then leaves nothing half done.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .types import Session

__all__ = ["FORK_META_KEY", "PROMPTS_METHOD", "REWIND_META_KEY", "REWIND_METHOD", "RewindPoint", "SessionRewinder"]

REWIND_META_KEY = "acpkit.rewind"
"""The `agentCapabilities._meta` key advertising the rewind extension (its methods and fork key)."""
PROMPTS_METHOD = "acpkit/session/prompts"
"""The extension method listing a session's prompts (sent as `_acpkit/session/prompts`)."""
REWIND_METHOD = "acpkit/session/rewind"
"""The extension method rewinding a session (sent as `_acpkit/session/rewind`)."""
FORK_META_KEY = "acpkit.fork"
"""The `session/fork` `_meta` key naming the prompt to fork at: `{"prompt": N}` or `{"messageId": id}`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RewindPoint:
    """Where a session goes back to: just before one of its prompts."""

    prompt_id: str
    """The first prompt undone: its id ([`Turn.prompt_id`][acpkit_core.runner.protocols.Turn.prompt_id] when it ran)."""
    number: int
    """Its number in the session, from 1 (what `/rewind N` names)."""
    undone: tuple[str, ...]
    """The ids of every prompt undone, oldest first (`prompt_id` first)."""
    kept: tuple[str, ...]
    """The ids of the prompts kept, oldest first."""
    history_length: int
    """How many items `session.history` held when `prompt_id` arrived."""
    sessions: tuple[str, ...]
    """The ids of the sessions the prompts may have run in: this session's, then the one it was forked
    from, and so on (a fork's earlier prompts ran in the session it was forked from)."""


@runtime_checkable
class SessionRewinder(Protocol):
    """Optional on a runner: take the framework's conversation back to before a prompt."""

    async def rewind_session(self, session: Session, point: RewindPoint) -> None:
        """Make the framework continue, from the next turn on, from the conversation before `point.prompt_id`.

        Called with `session.state` already back as it was when that prompt arrived and
        `session.history` as it is now (cut it here if the runner keeps its messages there). Raise
        [`RewindError`][acpkit_core.errors.RewindError] when the framework cannot go back there;
        nothing is changed then. Also called for a session forked at a prompt: `session` is the new
        session, and the prompts ran in `point.sessions[1]`.
        """
        ...
