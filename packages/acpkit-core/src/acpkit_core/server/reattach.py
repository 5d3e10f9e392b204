"""Re-attaching a client to a session's turn: `session/load` / `session/resume` with a cursor.

With `_meta["acpkit.resume"] = {"after": N}`, the session is opened without replaying its
transcript (the client has it up to update `N`) and a
[`Follower`][acpkit_core.server.turn_log.Follower] sends the client the log after `N`: the
updates (each with its number), a pending permission question asked again, and
`_acpkit/turn_ended` with the turn's answer. See [`turn_log`][acpkit_core.server.turn_log].
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp.schema import PermissionOption, PromptResponse, RequestPermissionResponse, ToolCallUpdate

from ..store import UpdateLogStore
from .session_manager import SessionManager
from .turn_log import SEQ_META, TURN_ENDED, Follower, answer_of_prompt

__all__ = ["REATTACH_CAPABILITY", "answer_resent", "capability", "follow", "seq_meta"]

REATTACH_CAPABILITY = "acpkit.resume"
"""`agentCapabilities._meta` key saying the agent takes the cursor (`{"after": true, "turnEnded": ...}`)."""


def follow(sessions: SessionManager, session_id: str, after: int) -> bool:
    """Start sending the session's log after `after` to this connection's client; `False` without a log."""
    logs = sessions.turn_logs
    store = sessions.store
    if logs is None or not isinstance(store, UpdateLogStore):
        return False
    send, ask, ended = _deliveries(sessions, session_id)
    follower = Follower(logs, store, session_id, after, send=send, ask=ask, ended=ended)
    sessions.outbox.follow(asyncio.ensure_future(follower.run()))
    return True


async def answer_resent(sessions: SessionManager, session_id: str, key: str, *, wait: float) -> PromptResponse | None:
    """A prompt sent again after a reconnect: the answer of the turn its first sending started (the turn's
    log sent to this client meanwhile), `None` when it started none (see `answer_of_prompt`)."""
    logs = sessions.turn_logs
    store = sessions.store
    if logs is None or not isinstance(store, UpdateLogStore):
        return None
    send, ask, _ = _deliveries(sessions, session_id)
    return await answer_of_prompt(logs, store, session_id, key, send=send, ask=ask, wait=wait)


def _deliveries(sessions: SessionManager, session_id: str) -> tuple[Any, Any, Any]:
    """How a follower reaches this connection's client: updates, permission questions, the turn's end."""
    outbox = sessions.outbox

    async def send(seq: int, wire: dict[str, Any]) -> None:
        await outbox.send_numbered(session_id, wire, seq)

    async def ask(params: dict[str, Any]) -> RequestPermissionResponse:
        assert outbox.conn is not None
        return await outbox.conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate.model_validate(params["toolCall"]),
            options=[PermissionOption.model_validate(o) for o in params["options"]],
        )

    async def ended(message: dict[str, Any]) -> None:
        await outbox.notify(TURN_ENDED, message)

    return send, ask, ended


async def seq_meta(sessions: SessionManager, session_id: str) -> dict[str, Any] | None:
    """`_meta` of a `session/load` / `session/resume` answer: the number of the session's last log entry."""
    store = sessions.store
    if sessions.turn_logs is None or not isinstance(store, UpdateLogStore):
        return None
    return {SEQ_META: await store.log_last(session_id)}


def capability() -> dict[str, Any]:
    """The capability advertised under `agentCapabilities._meta` by an agent that keeps turn logs."""
    return {REATTACH_CAPABILITY: {"after": True, "turnEnded": TURN_ENDED, "seq": SEQ_META}}
