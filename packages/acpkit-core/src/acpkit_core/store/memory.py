"""An in-memory session store, for tests and throwaway agents."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SessionNotFoundError
from ..runner.types import HistoryLog, Session
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
from .rewind import FileChange, PromptMark
from .update_log import LogEntry

__all__ = ["MemoryStore"]


@dataclass
class _Row:
    data: str
    server: str
    version: int = 0
    history: list[str] = field(default_factory=list[str])
    transcript: list[str] = field(default_factory=list[str])
    lease: tuple[str, float] | None = None
    prompts: list[str] = field(default_factory=list[str])
    """Prompt marks, as JSON (state included), oldest first."""
    files: list[FileChange] = field(default_factory=list[FileChange])
    """File changes, in the order they were first recorded."""
    log: list[LogEntry] = field(default_factory=list[LogEntry])
    """The update log, in order."""
    answers: dict[str, str] = field(default_factory=dict[str, str])
    """The update log's named values."""


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
            row.prompts = []
            row.files = []
        row.transcript.extend(encoded)
        _write_history(row, log, items)
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

    # --- UpdateLogStore ------------------------------------------------------------------------

    async def log_append(self, session_id: str, entries: Sequence[LogEntry]) -> None:
        """Add entries to the session's update log (entries written again, by a retried flush, replace themselves)."""
        row = self._rows.get(session_id)
        if row is not None and entries:
            while row.log and row.log[-1][0] >= entries[0][0]:
                row.log.pop()
            row.log.extend(entries)

    async def log_read(self, session_id: str, after: int) -> list[LogEntry]:
        """The log's entries numbered above `after`."""
        row = self._rows.get(session_id)
        return [e for e in row.log if e[0] > after] if row is not None else []

    async def log_last(self, session_id: str) -> int:
        """The log's highest number (0 when empty)."""
        row = self._rows.get(session_id)
        return row.log[-1][0] if row is not None and row.log else 0

    async def log_trim(self, session_id: str, before: int) -> None:
        """Drop the entries numbered below `before`, and every answer."""
        row = self._rows.get(session_id)
        if row is not None:
            row.log = [e for e in row.log if e[0] >= before]
            row.answers.clear()

    async def log_answer(self, session_id: str, key: str, value: str) -> None:
        """Set a named value of the session's log."""
        row = self._rows.get(session_id)
        if row is not None:
            row.answers[key] = value

    async def log_answers(self, session_id: str) -> dict[str, str]:
        """The session's named values."""
        row = self._rows.get(session_id)
        return dict(row.answers) if row is not None else {}

    # --- RewindStore ---------------------------------------------------------------------------

    async def add_prompt(self, session_id: str, mark: PromptMark, *, transcript: Sequence[JsonDict] = ()) -> None:
        """Record a prompt (and append `transcript`)."""
        row = self._row(session_id)
        encoded = [dumps_updates(u) for u in transcript]
        row.prompts.append(json.dumps(_mark_json(mark)))
        row.transcript.extend(encoded)

    async def add_file_changes(self, session_id: str, changes: Sequence[FileChange]) -> None:
        """Record file changes (a known `(prompt, path)` keeps its `before`)."""
        row = self._row(session_id)
        for change in changes:
            at = next(
                (i for i, c in enumerate(row.files) if (c.prompt_id, c.path) == (change.prompt_id, change.path)), None
            )
            if at is None:
                row.files.append(change)
            else:
                row.files[at] = FileChange(
                    prompt_id=change.prompt_id, path=change.path, before=row.files[at].before, after=change.after
                )

    async def prompts(self, session_id: str) -> list[PromptMark]:
        """The recorded prompts, oldest first (without state)."""
        return [_mark(json.loads(p), state=False) for p in self._row(session_id).prompts]

    async def prompt(self, session_id: str, prompt_id: str) -> PromptMark | None:
        """One recorded prompt, with its state."""
        for raw in self._row(session_id).prompts:
            data = json.loads(raw)
            if data["id"] == prompt_id:
                return _mark(data, state=True)
        return None

    async def file_changes(self, session_id: str, prompt_ids: Sequence[str]) -> list[FileChange]:
        """The file changes of those prompts."""
        wanted = set(prompt_ids)
        return [c for c in self._row(session_id).files if c.prompt_id in wanted]

    async def rewind(
        self, session: Session, *, prompt_id: str, keep_updates: int, server: JsonDict | None = None
    ) -> int:
        """Take the session back to before `prompt_id`."""
        row = self._row(session.id)
        ids = [json.loads(p)["id"] for p in row.prompts]
        if prompt_id not in ids:
            raise KeyError(f"prompt {prompt_id!r} is not a recorded prompt of session {session.id!r}")
        at = ids.index(prompt_id)
        dropped = set(ids[at:])
        log = session.history
        items = [dumps_updates(item) for item in log.pending]
        del row.transcript[keep_updates:]  # one update per item here
        row.prompts = row.prompts[:at]
        row.files = [c for c in row.files if c.prompt_id not in dropped]
        row.data = json.dumps(session_to_json(session))
        if server is not None:
            row.server = json.dumps(server)
        row.version += 1
        _write_history(row, log, items)
        log.saved(len(items))
        return row.version

    async def copy_prompts(self, source_id: str, target_id: str, *, before: str | None = None) -> None:
        """Copy the source's prompt marks and file changes (those before `before`) to the target."""
        source, target = self._row(source_id), self._row(target_id)
        kept: list[str] = []
        for raw in source.prompts:
            if json.loads(raw)["id"] == before:
                break
            kept.append(raw)
        ids = {json.loads(raw)["id"] for raw in kept}
        target.prompts = list(kept)
        target.files = [c for c in source.files if c.prompt_id in ids]


def _write_history(row: _Row, log: HistoryLog, items: list[str]) -> None:
    if log.reset:
        row.history = []
    elif log.cut is not None:
        del row.history[log.cut :]
    row.history.extend(items)


def _mark_json(mark: PromptMark) -> JsonDict:
    return {
        "id": mark.id,
        "text": mark.text,
        "history_length": mark.history_length,
        "state": mark.state,
        "created_at": mark.created_at,
    }


def _mark(data: JsonDict, *, state: bool) -> PromptMark:
    return PromptMark(
        id=data["id"],
        text=data.get("text", ""),
        history_length=int(data.get("history_length", 0)),
        state=dict(data.get("state") or {}) if state else {},
        created_at=data.get("created_at", ""),
    )
