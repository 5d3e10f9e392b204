"""The session store contract and the JSON codec shared by the built-in stores.

A store keeps, per session: the [`Session`][acpkit_core.runner.Session] itself (including the
runner's `state`), a small server-owned JSON object (remembered permission answers, usage
totals), and the transcript (every update the client saw, as wire JSON), which the server
replays on `session/load`.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeAlias, runtime_checkable

import pydantic_core

from ..errors import AcpKitError
from ..runner import HttpMcpServer, McpServer, Session, SseMcpServer, StdioMcpServer

__all__ = [
    "InvalidCursorError",
    "JsonDict",
    "SessionPage",
    "SessionStore",
    "StoredSession",
    "decode_cursor",
    "default_store_path",
    "dumps_updates",
    "encode_cursor",
    "now_iso",
    "session_from_json",
    "session_to_json",
]

JsonDict: TypeAlias = dict[str, Any]
"""A JSON object."""

DEFAULT_PAGE_SIZE = 50


class InvalidCursorError(AcpKitError, ValueError):
    """A `session/list` cursor that this store did not issue."""


@dataclass(kw_only=True)
class StoredSession:
    """A session as read back from a store."""

    session: Session
    """The session, including the runner's state."""
    server: JsonDict = field(default_factory=dict[str, Any])
    """Server-owned JSON (remembered permission answers, usage totals)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionPage:
    """One page of `session/list`."""

    sessions: Sequence[Session]
    """Sessions, most recently updated first."""
    next_cursor: str | None = None
    """Opaque cursor of the next page, `None` on the last page."""


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions and their transcripts live. Implement it to use a shared database.

    Every write is atomic: a reader never sees a session without the transcript of its last turn.
    """

    @property
    def path(self) -> Path | None:
        """The SQLite file, or `None` for stores that are not a local file."""
        ...

    async def create(
        self, session: Session, *, server: JsonDict | None = None, transcript: Sequence[JsonDict] = ()
    ) -> None:
        """Store a new session (and, for a fork, the transcript it starts with)."""
        ...

    async def get(self, session_id: str) -> StoredSession:
        """Read a session; raises `SessionNotFoundError` when there is none."""
        ...

    async def save(
        self,
        session: Session,
        *,
        server: JsonDict | None = None,
        append: Sequence[JsonDict] = (),
        reset_transcript: bool = False,
    ) -> None:
        """Write the session and append `append` to its transcript, in one transaction.

        `reset_transcript` drops the stored transcript first (`/clear`).
        """
        ...

    async def transcript(self, session_id: str) -> list[JsonDict]:
        """Every recorded update of a session, oldest first."""
        ...

    async def list(
        self, *, cwd: str | None = None, cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
    ) -> SessionPage:
        """Sessions, most recently updated first, optionally only those whose cwd is `cwd`."""
        ...

    async def delete(self, session_id: str) -> None:
        """Remove a session and its transcript (no error if absent)."""
        ...

    async def close(self) -> None:
        """Release resources."""
        ...


def default_store_path() -> Path:
    """`$ACPKIT_STATE_DIR/sessions.sqlite3`, else `$XDG_STATE_HOME/acpkit/...`, else `~/.local/state/acpkit/...`."""
    explicit = os.environ.get("ACPKIT_STATE_DIR")
    if explicit:
        return Path(explicit) / "sessions.sqlite3"
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return base / "acpkit" / "sessions.sqlite3"


def now_iso() -> str:
    """The current UTC time as ISO 8601 with microseconds (sorts as text)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def dumps_updates(value: Sequence[JsonDict] | JsonDict) -> str:
    """Transcript updates (wire JSON, as the server records them), or one of them, as JSON text.

    pydantic-core's encoder is several times faster than `json.dumps` on the thousands of chunks
    of a long turn; what it cannot encode (a lone surrogate, an object that is not JSON) goes
    through `json.dumps`, which escapes the one and raises `TypeError` for the other.
    """
    data: Any = value if isinstance(value, Mapping) else list(value)
    try:
        return pydantic_core.to_json(data).decode("utf-8")
    except pydantic_core.PydanticSerializationError:
        return json.dumps(data)


def encode_cursor(updated_at: str, session_id: str) -> str:
    """An opaque cursor pointing after `(updated_at, session_id)`."""
    raw = json.dumps([updated_at, session_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    """Read a cursor made by [`encode_cursor`][acpkit_core.store.base.encode_cursor]."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value: Any = json.loads(raw)
    except (binascii.Error, ValueError) as exc:
        raise InvalidCursorError(f"invalid session/list cursor {cursor!r}") from exc
    if (
        not isinstance(value, list)
        or len(value) != 2  # pyright: ignore[reportUnknownArgumentType]
        or not all(isinstance(v, str) for v in value)  # pyright: ignore[reportUnknownVariableType]
    ):
        raise InvalidCursorError(f"invalid session/list cursor {cursor!r}")
    return str(value[0]), str(value[1])  # pyright: ignore[reportUnknownArgumentType]


def _mcp_to_json(server: McpServer) -> JsonDict:
    if isinstance(server, StdioMcpServer):
        return {
            "transport": "stdio",
            "name": server.name,
            "command": server.command,
            "args": list(server.args),
            "env": dict(server.env),
        }
    return {"transport": server.transport, "name": server.name, "url": server.url, "headers": dict(server.headers)}


def _mcp_from_json(data: Mapping[str, Any]) -> McpServer:
    transport = data.get("transport")
    if transport == "stdio":
        return StdioMcpServer(
            name=data["name"], command=data["command"], args=tuple(data.get("args", ())), env=dict(data.get("env", {}))
        )
    if transport == "http":
        return HttpMcpServer(name=data["name"], url=data["url"], headers=dict(data.get("headers", {})))
    return SseMcpServer(name=data["name"], url=data["url"], headers=dict(data.get("headers", {})))


def session_to_json(session: Session) -> JsonDict:
    """The session as a JSON object (what the stores write)."""
    return {
        "id": session.id,
        "cwd": session.cwd,
        "mcp_servers": [_mcp_to_json(s) for s in session.mcp_servers],
        "additional_directories": list(session.additional_directories),
        "mode_id": session.mode_id,
        "config": dict(session.config),
        "state": session.state,
        "title": session.title,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "parent_id": session.parent_id,
        "agent": session.agent,
    }


def session_from_json(data: Mapping[str, Any]) -> Session:
    """Rebuild a session written by [`session_to_json`][acpkit_core.store.base.session_to_json]."""
    return Session(
        id=data["id"],
        cwd=data["cwd"],
        mcp_servers=tuple(_mcp_from_json(s) for s in data.get("mcp_servers", ())),
        additional_directories=tuple(data.get("additional_directories", ())),
        mode_id=data.get("mode_id"),
        config=dict(data.get("config", {})),
        state=dict(data.get("state", {})),
        title=data.get("title"),
        created_at=data.get("created_at", ""),
        updated_at=data.get("updated_at", ""),
        parent_id=data.get("parent_id"),
        agent=data.get("agent"),
    )
