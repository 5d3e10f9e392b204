"""A session store that times its calls (`acpkit.store.duration{operation=...}`), used when metrics are on."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..runner.types import Session
from ..store import SessionPage, SessionStore, StoredSession, TurnStart
from ..store.base import DEFAULT_LEASE_SECONDS, DEFAULT_PAGE_SIZE, JsonDict

__all__ = ["TimedStore", "timed_store"]

Record = Callable[[str, float], None]


def timed_store(store: SessionStore, record: Record | None) -> SessionStore:
    """`store`, timed by `record(operation, seconds)` when given (else `store` itself)."""
    return store if record is None else TimedStore(store, record)


class TimedStore:
    """Every call of the [`SessionStore`][acpkit_core.store.SessionStore] contract, timed; the rest passed on."""

    def __init__(self, inner: SessionStore, record: Record) -> None:
        self.inner = inner
        """The real store."""
        self._record = record

    @property
    def path(self) -> Path | None:
        """The inner store's file."""
        return self.inner.path

    async def create(
        self, session: Session, *, server: JsonDict | None = None, transcript: Sequence[JsonDict] = ()
    ) -> None:
        """See [`SessionStore.create`][acpkit_core.store.SessionStore.create]."""
        start = time.perf_counter()
        try:
            await self.inner.create(session, server=server, transcript=transcript)
        finally:
            self._record("create", time.perf_counter() - start)

    async def get(self, session_id: str) -> StoredSession:
        """See [`SessionStore.get`][acpkit_core.store.SessionStore.get]."""
        start = time.perf_counter()
        try:
            return await self.inner.get(session_id)
        finally:
            self._record("get", time.perf_counter() - start)

    async def save(
        self,
        session: Session,
        *,
        server: JsonDict | None = None,
        append: Sequence[JsonDict] = (),
        reset_transcript: bool = False,
        release: str | None = None,
    ) -> int:
        """See [`SessionStore.save`][acpkit_core.store.SessionStore.save]."""
        start = time.perf_counter()
        try:
            return await self.inner.save(
                session, server=server, append=append, reset_transcript=reset_transcript, release=release
            )
        finally:
            self._record("save", time.perf_counter() - start)

    async def append_transcript(self, session_id: str, updates: Sequence[JsonDict]) -> None:
        """See [`SessionStore.append_transcript`][acpkit_core.store.SessionStore.append_transcript]."""
        start = time.perf_counter()
        try:
            await self.inner.append_transcript(session_id, updates)
        finally:
            self._record("append_transcript", time.perf_counter() - start)

    async def begin_turn(
        self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS
    ) -> TurnStart:
        """See [`SessionStore.begin_turn`][acpkit_core.store.SessionStore.begin_turn]."""
        start = time.perf_counter()
        try:
            return await self.inner.begin_turn(session_id, owner, lease_seconds=lease_seconds)
        finally:
            self._record("begin_turn", time.perf_counter() - start)

    async def renew_turn(self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> None:
        """See [`SessionStore.renew_turn`][acpkit_core.store.SessionStore.renew_turn]."""
        start = time.perf_counter()
        try:
            await self.inner.renew_turn(session_id, owner, lease_seconds=lease_seconds)
        finally:
            self._record("renew_turn", time.perf_counter() - start)

    async def end_turn(self, session_id: str, owner: str) -> None:
        """See [`SessionStore.end_turn`][acpkit_core.store.SessionStore.end_turn]."""
        start = time.perf_counter()
        try:
            await self.inner.end_turn(session_id, owner)
        finally:
            self._record("end_turn", time.perf_counter() - start)

    async def recover_turn(self, session_id: str) -> bool:
        """See [`SessionStore.recover_turn`][acpkit_core.store.SessionStore.recover_turn]."""
        start = time.perf_counter()
        try:
            return await self.inner.recover_turn(session_id)
        finally:
            self._record("recover_turn", time.perf_counter() - start)

    async def transcript(self, session_id: str) -> list[JsonDict]:
        """See [`SessionStore.transcript`][acpkit_core.store.SessionStore.transcript]."""
        start = time.perf_counter()
        try:
            return await self.inner.transcript(session_id)
        finally:
            self._record("transcript", time.perf_counter() - start)

    async def list(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        owner: str | None = None,
    ) -> SessionPage:
        """See [`SessionStore.list`][acpkit_core.store.SessionStore.list]."""
        start = time.perf_counter()
        try:
            return await self.inner.list(cwd=cwd, cursor=cursor, limit=limit, owner=owner)
        finally:
            self._record("list", time.perf_counter() - start)

    async def delete(self, session_id: str) -> None:
        """See [`SessionStore.delete`][acpkit_core.store.SessionStore.delete]."""
        start = time.perf_counter()
        try:
            await self.inner.delete(session_id)
        finally:
            self._record("delete", time.perf_counter() - start)

    async def close(self) -> None:
        """Close the inner store."""
        await self.inner.close()

    def __getattr__(self, name: str) -> Any:
        """Anything else a store offers (a database store's extras) is the inner store's, untimed."""
        return getattr(self.inner, name)
