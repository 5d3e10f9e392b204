"""Which remote session continues which conversation.

A framework hands its model the whole conversation on every call, while an ACP agent keeps the
conversation itself, in a session. The adapters reconcile the two the same way:

1. the conversation the model is given is split into what came before (`earlier`, up to the
   model's last answer) and what is new (the user's messages after it);
2. if `earlier` is exactly a conversation this model already had with the remote agent (same
   turns, compared through a [`conversation_key`][acpkit_core.delegate.conversation_key]), only the
   new messages are sent, in that session;
3. otherwise (a first call, an edited or foreign history) a new session is opened and the earlier
   turns are sent once, as a transcript, before the new messages.

So one model instance can serve several conversations at once, each in its own remote session.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from .remote import RemoteAgent, RemoteSession

__all__ = ["ConversationSessions", "Turn", "conversation_key", "prompt_text", "transcript"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One message of a conversation, reduced to what the remote agent saw or said."""

    role: str
    """`user`, `assistant` or `system`."""
    text: str
    """The message's text."""


def conversation_key(turns: Sequence[Turn]) -> str:
    """A stable digest of a conversation: equal conversations give equal keys."""
    payload = json.dumps([[t.role, t.text] for t in turns], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


def transcript(turns: Sequence[Turn]) -> str:
    """The earlier turns of a conversation as text, for a remote session that did not see them."""
    lines = ["The conversation so far:"]
    for turn in turns:
        lines.append(f"<{turn.role}>\n{turn.text}\n</{turn.role}>")
    return "\n".join(lines)


def prompt_text(new: Sequence[Turn], *, earlier: Sequence[Turn] = (), instructions: str | None = None) -> str:
    """The text sent to the remote agent: instructions and the earlier turns (for a new session), then the new turns.

    New user turns are sent as they are; other new turns (a system message) are wrapped in their role's tag.
    """
    pieces: list[str] = []
    if instructions:
        pieces.append(f"<instructions>\n{instructions}\n</instructions>")
    if earlier:
        pieces.append(transcript(earlier))
    pieces.extend(t.text if t.role == "user" else f"<{t.role}>\n{t.text}\n</{t.role}>" for t in new)
    return "\n\n".join(pieces)


class ConversationSessions:
    """Remote sessions keyed by the conversation they hold (least recently used dropped past `limit`)."""

    def __init__(self, agent: RemoteAgent, *, limit: int = 64) -> None:
        self.agent = agent
        """The agent sessions are opened on."""
        self.limit = limit
        """How many conversations are remembered."""
        self._by_key: OrderedDict[str, RemoteSession] = OrderedDict()

    async def session_for(self, earlier: Sequence[Turn]) -> tuple[RemoteSession, bool]:
        """The session holding exactly `earlier` (taken out of the pool), or a new one; the flag says it is new."""
        key = conversation_key(earlier)
        session = self._by_key.pop(key, None)
        if session is not None and session.session_id in self.agent.sessions:
            return session, False
        return await self.agent.new_session(), True

    def remember(self, turns: Sequence[Turn], session: RemoteSession) -> None:
        """Record that `session` now holds the conversation `turns`."""
        self._by_key[conversation_key(turns)] = session
        self._by_key.move_to_end(conversation_key(turns))
        while len(self._by_key) > self.limit:
            self._by_key.popitem(last=False)

    def clear(self) -> None:
        """Forget every conversation (after the agent was closed)."""
        self._by_key.clear()
