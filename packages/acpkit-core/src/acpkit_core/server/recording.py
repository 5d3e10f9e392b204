"""Writing a turn as it happens: the lease, the prompt at once, streamed updates every few ms.

A [`TurnRecorder`][acpkit_core.server.recording.TurnRecorder] holds the session's turn lease in
the store (so another process cannot run a turn of the same session meanwhile), writes the
user's prompt before the runner starts, appends what the emitter recorded every
`transcript_flush_ms`, renews the lease, and ends with one save of the session, its new history
items and the last updates. A `kill -9` therefore loses at most the last flush interval of a
turn's answer, never its prompt, and the next process reports the turn as interrupted
([`interruption_updates`][acpkit_core.server.recording.interruption_updates]).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from ..runner.emitter import TurnEmitter
from ..runner.types import Session
from ..store import PromptMark, RewindStore, SessionStore
from ..store.base import DEFAULT_LEASE_SECONDS, JsonDict, cap_attachments
from .file_changes import FileLedger

_T = TypeVar("_T")

__all__ = ["INTERRUPTED_TEXT", "TurnRecorder", "interruption_updates", "new_owner"]

logger = logging.getLogger("acpkit_core.server")

INTERRUPTED_TEXT = "(This turn was interrupted: the agent process stopped before it finished.)"
"""What the transcript says after the last update of a turn whose process died."""

_RENEW_EVERY = DEFAULT_LEASE_SECONDS / 3


def new_owner() -> str:
    """A lease owner id for one server (one connection)."""
    return uuid.uuid4().hex


def interruption_updates(transcript: Sequence[JsonDict]) -> list[JsonDict]:
    """Updates that close an interrupted turn: its unfinished tool calls failed, then a note."""
    status: dict[str, str] = {}
    for update in transcript:
        kind = update.get("sessionUpdate")
        if kind in ("tool_call", "tool_call_update"):
            call_id = str(update.get("toolCallId"))
            value = update.get("status")
            if kind == "tool_call" or value is not None:
                status[call_id] = str(value or "pending")
    out: list[JsonDict] = [
        {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "failed"}
        for call_id, value in status.items()
        if value not in ("completed", "failed")
    ]
    out.append(
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": INTERRUPTED_TEXT},
            "messageId": uuid.uuid4().hex,
        }
    )
    return out


class TurnRecorder:
    """Records one turn of one session in the store while it runs."""

    def __init__(
        self,
        store: SessionStore,
        session_id: str,
        owner: str,
        emitter: TurnEmitter,
        *,
        flush_ms: float,
        max_attachment: int | None,
        files: FileLedger | None = None,
    ) -> None:
        self._store = store
        self._files = files if isinstance(store, RewindStore) else None
        self._detached = False
        self._session_id = session_id
        self._owner = owner
        self._emitter = emitter
        self._interval = max(flush_ms, 1.0) / 1000.0
        self._max_attachment = max_attachment
        self._written = 0
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    def _capped(self, updates: Sequence[JsonDict]) -> list[JsonDict]:
        return [cap_attachments(u, self._max_attachment) for u in updates]

    async def flush(self) -> None:
        """Write what the emitter recorded since the last flush (and the files the turn changed meanwhile)."""
        async with self._lock:
            if self._detached:
                return
            recorded = self._emitter.recorded
            if self._written > len(recorded):  # `/clear` emptied the list: the save resets the transcript
                self._written = len(recorded)
            new = recorded[self._written :]
            if new:
                await self._store.append_transcript(self._session_id, self._capped(new))
                self._written += len(new)
            await self._write_files(new)

    async def flush_prompt(self, mark: PromptMark) -> None:
        """Write the prompt's user message and its mark, in one transaction (the turn's first write)."""
        async with self._lock:
            assert isinstance(self._store, RewindStore)
            new = self._emitter.recorded[self._written :]
            await self._store.add_prompt(self._session_id, mark, transcript=self._capped(new))
            self._written += len(new)

    async def _write_files(self, new: Sequence[JsonDict]) -> None:
        files = self._files
        if files is None:
            return
        files.observe(new)
        changes = files.unwritten()
        if changes:
            assert isinstance(self._store, RewindStore)
            await self._store.add_file_changes(self._session_id, changes)
            files.written(changes)  # not before: a flush cancelled here leaves them to the final save

    async def detach(self, work: Callable[[], Awaitable[_T]]) -> _T:
        """Run `work` (a rewind, which rewrites the transcript) between two flushes, and record nothing
        more of this turn: what the turn says afterwards is shown, not kept."""
        async with self._lock:
            self._detached = True
            return await work()

    def start(self) -> None:
        """Flush every interval and renew the lease until the turn ends."""
        self._task = asyncio.ensure_future(self._loop())

    async def _loop(self) -> None:
        since_renew = 0.0
        while True:
            await asyncio.sleep(self._interval)
            try:
                await self.flush()
                since_renew += self._interval
                if since_renew >= _RENEW_EVERY:
                    since_renew = 0.0
                    await self._store.renew_turn(self._session_id, self._owner)
            except Exception:
                # The final save reports a store that stopped working; keep the turn running.
                logger.exception("session %s: could not record the running turn", self._session_id)

    async def stop(self) -> None:
        """Stop the periodic flushes (the final save writes the rest).

        A flush in progress ends first: cancelled halfway, its write could still be committed (by the
        store's worker) without being counted, and the final save would write those updates again.
        """
        task, self._task = self._task, None
        if task is not None:
            async with self._lock:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def finish(self, session: Session, server: JsonDict, *, reset_transcript: bool) -> int:
        """Save the session, its new history and the updates not written yet; release the lease."""
        await self.stop()
        async with self._lock:
            recorded = self._emitter.recorded
            rest = recorded if reset_transcript else recorded[min(self._written, len(recorded)) :]
            if self._detached:
                rest = []
            else:
                await self._write_files(rest)
            version = await self._store.save(
                session,
                server=server,
                append=self._capped(rest),
                reset_transcript=reset_transcript,
                release=self._owner,
            )
            self._written = len(recorded)
            return version

    async def abandon(self) -> None:
        """Release the lease without saving (the save failed); never raises."""
        await self.stop()
        try:
            await self._store.end_turn(self._session_id, self._owner)
        except Exception:
            logger.exception("session %s: could not release the turn lease", self._session_id)
