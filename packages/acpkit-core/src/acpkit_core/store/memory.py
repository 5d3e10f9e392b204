"""An in-memory session store, for tests and throwaway agents."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path

from ..errors import SessionNotFoundError
from ..runner import Session
from .base import (
    DEFAULT_PAGE_SIZE,
    JsonDict,
    SessionPage,
    StoredSession,
    decode_cursor,
    dumps_updates,
    encode_cursor,
    session_from_json,
    session_to_json,
)

__all__ = ["MemoryStore"]


class MemoryStore:
    """Keeps sessions in this process only. Values are copied in and out, like a real database."""

    def __init__(self) -> None:
        self._sessions: dict[str, tuple[str, str]] = {}
        self._transcripts: dict[str, list[str]] = {}

    @property
    def path(self) -> Path | None:
        """Always `None`: nothing is written to disk."""
        return None

    async def create(
        self, session: Session, *, server: JsonDict | None = None, transcript: Sequence[JsonDict] = ()
    ) -> None:
        """Store a new session."""
        self._sessions[session.id] = (json.dumps(session_to_json(session)), json.dumps(server or {}))
        self._transcripts[session.id] = [dumps_updates(u) for u in transcript]

    async def get(self, session_id: str) -> StoredSession:
        """Read a session."""
        row = self._sessions.get(session_id)
        if row is None:
            raise SessionNotFoundError(session_id)
        return StoredSession(session=session_from_json(json.loads(row[0])), server=json.loads(row[1]))

    async def save(
        self,
        session: Session,
        *,
        server: JsonDict | None = None,
        append: Sequence[JsonDict] = (),
        reset_transcript: bool = False,
    ) -> None:
        """Write the session and append to its transcript."""
        encoded = [dumps_updates(u) for u in append]  # encode first: a failure leaves nothing half-written
        previous = self._sessions.get(session.id)
        server_json = json.dumps(server) if server is not None else (previous[1] if previous else "{}")
        self._sessions[session.id] = (json.dumps(session_to_json(session)), server_json)
        lines = [] if reset_transcript else self._transcripts.get(session.id, [])
        self._transcripts[session.id] = [*lines, *encoded]

    async def transcript(self, session_id: str) -> list[JsonDict]:
        """The recorded updates."""
        if session_id not in self._sessions:
            raise SessionNotFoundError(session_id)
        return [json.loads(u) for u in self._transcripts.get(session_id, [])]

    async def list(
        self, *, cwd: str | None = None, cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
    ) -> SessionPage:
        """Sessions, most recently updated first."""
        sessions = [session_from_json(json.loads(row[0])) for row in self._sessions.values()]
        if cwd is not None:
            sessions = [s for s in sessions if s.cwd == cwd]
        sessions.sort(key=lambda s: s.id)
        sessions.sort(key=lambda s: s.updated_at, reverse=True)
        if cursor is not None:
            after_time, after_id = decode_cursor(cursor)
            sessions = [
                s for s in sessions if s.updated_at < after_time or (s.updated_at == after_time and s.id > after_id)
            ]
        page = sessions[:limit]
        more = len(sessions) > limit
        next_cursor = encode_cursor(page[-1].updated_at, page[-1].id) if more and page else None
        return SessionPage(sessions=[copy.deepcopy(s) for s in page], next_cursor=next_cursor)

    async def delete(self, session_id: str) -> None:
        """Forget a session."""
        self._sessions.pop(session_id, None)
        self._transcripts.pop(session_id, None)

    async def close(self) -> None:
        """Nothing to release."""
