"""An in-memory session store, for tests and throwaway agents."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SessionNotFoundError
from ..runner import Session
from .base import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_PAGE_SIZE,
    JsonDict,
    SessionPage,
    StoredSession,
    TurnBusyError,
    TurnStart,
    decode_cursor,
    dumps_updates,
    encode_cursor,
    session_from_json,
    session_to_json,
)

__all__ = ["MemoryStore"]


@dataclass
class _Row:
    data: str
    server: str
    version: int = 0
    history: list[str] = field(default_factory=list[str])
    transcript: list[str] = field(default_factory=list[str])
    lease: tuple[str, float] | None = None


class MemoryStore:
    """Keeps sessions in this process only. Values are copied in and out, like a real database.

    Leases work as in [`SqliteStore`][acpkit_core.store.SqliteStore] between connections of this
    process (a lease only dies by expiring: the process holding it is this one).
    """

    def __init__(self) -> None:
        self._rows: dict[str, _Row] = {}

    @property
    def path(self) -> Path | None:
        """Always `None`: nothing is written to disk."""
        return None

    def _row(self, session_id: str) -> _Row:
        row = self._rows.get(session_id)
        if row is None:
            raise SessionNotFoundError(session_id)
        return row

    async def create(
        self, session: Session, *, server: JsonDict | None = None, transcript: Sequence[JsonDict] = ()
    ) -> None:
        """Store a new session."""
        items = [dumps_updates(item) for item in session.history.pending]
        self._rows[session.id] = _Row(
            data=json.dumps(session_to_json(session)),
            server=json.dumps(server or {}),
            history=items,
            transcript=[dumps_updates(u) for u in transcript],
        )
        session.history.saved(len(items))

    async def get(self, session_id: str) -> StoredSession:
        """Read a session."""
        row = self._row(session_id)
        history = [json.loads(item) for item in row.history]
        return StoredSession(
            session=session_from_json(json.loads(row.data), history), server=json.loads(row.server), version=row.version
        )

    async def save(
        self,
        session: Session,
        *,
        server: JsonDict | None = None,
        append: Sequence[JsonDict] = (),
        reset_transcript: bool = False,
        release: str | None = None,
    ) -> int:
        """Write the session, its new history items, and append to its transcript."""
        encoded = [dumps_updates(u) for u in append]  # encode first: a failure leaves nothing half-written
        log = session.history
        items = [dumps_updates(item) for item in log.pending]
        data = json.dumps(session_to_json(session))
        row = self._rows.get(session.id)
        if row is None:
            row = self._rows[session.id] = _Row(data=data, server="{}")
        row.data = data
        if server is not None:
            row.server = json.dumps(server)
        row.version += 1
        if reset_transcript:
            row.transcript = []
        row.transcript.extend(encoded)
        if log.reset:
            row.history = []
        row.history.extend(items)
        if release is not None and row.lease is not None and row.lease[0] == release:
            row.lease = None
        log.saved(len(items))
        return row.version

    async def append_transcript(self, session_id: str, updates: Sequence[JsonDict]) -> None:
        """Append updates to the transcript."""
        self._row(session_id).transcript.extend(dumps_updates(u) for u in updates)

    async def begin_turn(
        self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS
    ) -> TurnStart:
        """Take the session's turn lease."""
        row = self._row(session_id)
        interrupted = False
        if row.lease is not None and row.lease[0] != owner:
            if row.lease[1] > time.time():
                raise TurnBusyError(
                    f"session {session_id!r} is running a turn in another window (this process); "
                    "wait for it to finish, or cancel it there"
                )
            interrupted = True
        row.lease = (owner, time.time() + lease_seconds)
        return TurnStart(version=row.version, interrupted=interrupted)

    async def renew_turn(self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> None:
        """Extend the lease."""
        row = self._rows.get(session_id)
        if row is not None and row.lease is not None and row.lease[0] == owner:
            row.lease = (owner, time.time() + lease_seconds)

    async def end_turn(self, session_id: str, owner: str) -> None:
        """Drop the lease."""
        row = self._rows.get(session_id)
        if row is not None and row.lease is not None and row.lease[0] == owner:
            row.lease = None

    async def recover_turn(self, session_id: str) -> bool:
        """Clear an expired lease; True when there was one."""
        row = self._rows.get(session_id)
        if row is None or row.lease is None or row.lease[1] > time.time():
            return False
        row.lease = None
        return True

    async def transcript(self, session_id: str) -> list[JsonDict]:
        """The recorded updates."""
        return [json.loads(u) for u in self._row(session_id).transcript]

    async def list(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        owner: str | None = None,
    ) -> SessionPage:
        """Sessions, most recently updated first; `owner` keeps one principal's."""
        sessions = [session_from_json(json.loads(row.data)) for row in self._rows.values()]
        if cwd is not None:
            sessions = [s for s in sessions if s.cwd == cwd]
        if owner is not None:
            sessions = [s for s in sessions if s.owner == owner]
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
        self._rows.pop(session_id, None)

    async def close(self) -> None:
        """Nothing to release."""
