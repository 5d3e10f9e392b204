"""The session store contract and the JSON codec shared by the built-in stores.

A store keeps, per session:

- the [`Session`][acpkit_core.runner.types.Session] row: ids, cwd, mode, options, title and the
  runner's small `state`, rewritten whole by each save, with a `version` counting the saves;
- the framework history ([`Session.history`][acpkit_core.runner.types.HistoryLog]): append-only rows,
  one per message, a save writes only the new ones;
- a small server-owned JSON object (remembered permission answers, usage totals);
- the transcript (every update the client saw, as wire JSON): append-only rows, written while a
  turn runs, replayed on `session/load`;
- at most one turn lease: which process runs a turn of the session now. A lease whose process
  died marks a turn that was interrupted.

Secret values (MCP server `env` values and HTTP `headers` values) are never written: the
client sends its MCP servers again on `session/load`.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeAlias, TypeVar, cast, runtime_checkable

from ..errors import InvalidCursorError, SessionBusyError, UserError
from ..json_text import json_text
from ..runner.types import ClientMcpServer, HistoryLog, HttpMcpServer, McpServer, Session, SseMcpServer, StdioMcpServer

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "InvalidCursorError",
    "JsonDict",
    "SchemaTooNewError",
    "SessionPage",
    "SessionStore",
    "StoredSession",
    "TurnBusyError",
    "TurnStart",
    "decode_cursor",
    "default_store_path",
    "dumps_updates",
    "encode_cursor",
    "now_iso",
    "pending_steps",
    "private_file",
    "session_from_json",
    "session_to_json",
]

JsonDict: TypeAlias = dict[str, Any]
"""A JSON object."""

DEFAULT_PAGE_SIZE = 50
DEFAULT_LEASE_SECONDS = 30.0
"""How long a turn lease lasts without renewal (the server renews it while the turn runs)."""


@dataclass(kw_only=True)
class StoredSession:
    """A session as read back from a store."""

    session: Session
    """The session, including the runner's state."""
    server: JsonDict = field(default_factory=dict[str, Any])
    """Server-owned JSON (remembered permission answers, usage totals)."""
    version: int = 0
    """How many times the session was saved (a process compares it to spot another's turns)."""


class SchemaTooNewError(UserError):
    """The store was migrated by a newer ACP Kit: this one does not know its schema, and neither reads
    nor writes it (SQLite and Postgres alike)."""


_Step = TypeVar("_Step")


def pending_steps(
    current: int, migrations: Sequence[tuple[int, _Step]], *, package: str, where: str, upgrade: str
) -> list[tuple[int, _Step]]:
    """The steps of `migrations` (numbered, in order) a schema at version `current` has not had yet.

    A schema newer than the last step raises [`SchemaTooNewError`][acpkit_core.store.SchemaTooNewError]:
    this version does not know its tables, and must neither read nor write them. The message reads
    "`where` `package` tables are at schema version N, newer than this `package`'s (M): `upgrade`".
    The rule every versioned schema of ACP Kit follows (the Postgres store's, and `langchain-acp`'s
    message table on SQLite and Postgres); each keeps its own numbering.
    """
    latest = migrations[-1][0] if migrations else 0
    if current > latest:
        raise SchemaTooNewError(
            f"{where} {package} tables are at schema version {current}, newer than this {package}'s ({latest}): "
            f"{upgrade}"
        )
    return [(version, step) for version, step in migrations if version > current]


class TurnBusyError(SessionBusyError):
    """Another process (or connection) holds the session's turn lease: it is running a turn."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStart:
    """What [`SessionStore.begin_turn`][acpkit_core.store.SessionStore.begin_turn] found."""

    version: int
    """The stored session's version: when it differs from the one in memory, reload."""
    interrupted: bool = False
    """A turn of this session was left unfinished by a process that died."""


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
    No write rewrites what an earlier turn stored (except `reset_transcript` and a history
    `replace`), so a save costs what the turn added. A turn runs under a lease
    (`begin_turn` ... `save(release=owner)`), so two processes never run turns of one session at
    the same time; a lease held by a process that died is taken over and reported as an
    interrupted turn. The server calls, per turn: `begin_turn`, `append_transcript` (the prompt,
    then the streamed updates every `transcript_flush_ms`), `renew_turn`, and `save`.
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
        """Read a session with its whole history; raises `SessionNotFoundError` when there is none."""
        ...

    async def save(
        self,
        session: Session,
        *,
        server: JsonDict | None = None,
        append: Sequence[JsonDict] = (),
        reset_transcript: bool = False,
        release: str | None = None,
    ) -> int:
        """Write the session row, its new history items and `append`, in one transaction.

        Only `session.history.pending` is written (after dropping the stored items when the log
        was replaced, or those from `session.history.cut` on when it was truncated), then
        `session.history.saved(...)` is called. `reset_transcript` drops the
        stored transcript first (`/clear`). `release` ends the turn lease of that owner. Returns
        the session's new version.
        """
        ...

    async def append_transcript(self, session_id: str, updates: Sequence[JsonDict]) -> None:
        """Append updates to the transcript now (while a turn runs), without touching the session."""
        ...

    async def begin_turn(
        self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS
    ) -> TurnStart:
        """Take the session's turn lease for `owner`; raises `TurnBusyError` while another holds it.

        A lease whose holder died (its process is gone, or it expired) is taken over and reported
        as `interrupted`.
        """
        ...

    async def renew_turn(self, session_id: str, owner: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> None:
        """Extend `owner`'s lease (the server does it while a turn runs)."""
        ...

    async def end_turn(self, session_id: str, owner: str) -> None:
        """Drop `owner`'s lease without saving (a turn that could not be saved)."""
        ...

    async def recover_turn(self, session_id: str) -> bool:
        """True (once) when a turn of the session was left unfinished by a process that died."""
        ...

    async def transcript(self, session_id: str) -> list[JsonDict]:
        """Every recorded update of a session, oldest first."""
        ...

    async def list(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        owner: str | None = None,
    ) -> SessionPage:
        """Sessions, most recently updated first, optionally only those whose cwd is `cwd`.

        With `owner`, only the sessions whose `Session.owner` is `owner` (a remote principal's own).
        """
        ...

    async def delete(self, session_id: str) -> None:
        """Remove a session, its history and transcript (no error if absent); reclaim the space."""
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
    """Transcript updates (wire JSON, as the server records them), or one of them, as JSON text
    ([`json_text`][acpkit_core.json_text.json_text]: a lone surrogate is escaped, an object that is
    not JSON raises `TypeError`)."""
    return json_text(value if isinstance(value, Mapping) else list(value))


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
    # Names only: env values and header values are secrets (API keys, bearer tokens), and the
    # client sends its MCP servers again on session/load.
    if isinstance(server, StdioMcpServer):
        return {
            "transport": "stdio",
            "name": server.name,
            "command": server.command,
            "args": list(server.args),
            "env_names": sorted(server.env),
        }
    if isinstance(server, ClientMcpServer):  # reachable only through the connection that gave it
        return {"transport": "acp", "name": server.name, "server_id": server.server_id}
    return {
        "transport": server.transport,
        "name": server.name,
        "url": server.url,
        "header_names": sorted(server.headers),
    }


def _mcp_from_json(data: Mapping[str, Any]) -> McpServer:
    # Older files stored values: they are not read back (the client sends them again on load).
    transport = data.get("transport")
    if transport == "stdio":
        return StdioMcpServer(name=data["name"], command=data["command"], args=tuple(data.get("args", ())))
    if transport == "http":
        return HttpMcpServer(name=data["name"], url=data["url"])
    if transport == "acp":
        return ClientMcpServer(name=data["name"], server_id=data["server_id"])
    return SseMcpServer(name=data["name"], url=data["url"])


def session_to_json(session: Session) -> JsonDict:
    """The session row as a JSON object (what the stores write; the history is stored apart)."""
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
        "owner": session.owner,
    }


def session_from_json(data: Mapping[str, Any], history: Sequence[Any] = ()) -> Session:
    """Rebuild a session written by [`session_to_json`][acpkit_core.store.base.session_to_json]."""
    return Session(
        history=HistoryLog(history),
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
        owner=data.get("owner"),
    )


def lease_alive(host: str, pid: int, expires: float, *, now: float, this_host: str) -> bool:
    """True while a turn lease still holds: not expired, and (on this machine) its process lives."""
    if expires <= now:
        return False
    if host != this_host:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


DEFAULT_MAX_STORED_ATTACHMENT = 1_000_000
"""Default cap, in characters of the wire JSON (base64 for binaries), of one stored prompt attachment."""


def cap_attachments(update: JsonDict, limit: int | None) -> JsonDict:
    """A `user_message_chunk` whose attachment (image, audio, resource) is over `limit`, with a note in its place.

    The client saw the attachment and the model got it; only the stored copy (replayed by
    `session/load`) is replaced by a text saying what it was. `None` stores everything.
    """
    raw: Any = update.get("content")
    if limit is None or update.get("sessionUpdate") != "user_message_chunk" or not isinstance(raw, dict):
        return update
    content = cast(JsonDict, raw)
    kind = content.get("type")
    size = 0
    label = str(kind)
    if kind in ("image", "audio"):
        size = len(str(content.get("data") or ""))
        label = f"{kind} ({content.get('mimeType') or 'unknown type'})"
    elif kind == "resource":
        inner: Any = content.get("resource")
        resource = cast(JsonDict, inner) if isinstance(inner, dict) else {}
        size = len(str(resource.get("blob") or resource.get("text") or ""))
        label = f"resource {resource.get('uri', '')}"
    if size <= limit:
        return update
    note = (
        f"[{label} of {size:,} characters not stored: larger than the {limit:,}-character limit "
        "for stored attachments (max_stored_attachment)]"
    )
    return {**update, "content": {"type": "text", "text": note}}


def private_file(path: Path) -> None:
    """Create the file `path` with mode 0600, or narrow an existing file of ours that others may read.

    For database files: SQLite gives their `-wal`, `-shm` and journal files the same mode.
    """
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        info = path.stat()
        if info.st_mode & 0o077 and info.st_uid == os.getuid() and stat.S_ISREG(info.st_mode):
            path.chmod(0o600)
        return
    os.close(fd)
