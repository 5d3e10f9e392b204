"""The sessions of one connection: create, reopen, fork, list, close, delete; modes and options."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import os
import uuid
from collections.abc import AsyncGenerator, Callable
from typing import Protocol, runtime_checkable

from acp import RequestError
from acp.schema import AcpMcpServer, AgentPlanUpdate, ConfigOptionUpdate, CurrentModeUpdate, PlanEntry, SessionInfo

from ..config import AgentOptions
from ..errors import SessionBusyError, SessionNotFoundError
from ..runner.host import ClientHost
from ..runner.host_tools import Workspace, check_host_tools
from ..runner.plan import MAIN_PLAN_ID, PLAN_STATE_KEY, plan_from_json, plan_to_json
from ..runner.protocols import Runner, SessionDeleter, SessionHooks
from ..runner.providers import LlmEndpoint
from ..runner.types import ClientInfo, HistoryLog, McpServer, McpStreams, Session
from ..runner.updates import WireUpdate
from ..runner.warmup import session_opened
from ..store import RewindStore, SessionStore, StoredSession, open_store
from ..store.base import now_iso
from ..telemetry.lookup import store_timer
from ..telemetry.store import timed_store
from .options import SessionOptions
from .outbox import Outbox
from .recording import interruption_updates
from .sessions import LiveSession, WireMcpServer, mcp_servers_from_wire, replay_json
from .turn_log import TurnLogs

__all__ = ["Admission", "SessionManager", "SessionOpenings"]

logger = logging.getLogger("acpkit_core.server")


@runtime_checkable
class Admission(Protocol):
    """Limits beyond one connection, asked before a session opens or a turn starts."""

    def session(self) -> None:
        """Raise a `RequestError` saying why when one more session may not open."""
        ...

    def turn(self) -> None:
        """Raise a `RequestError` saying why when one more turn may not start."""
        ...


class SessionOpenings:
    """Which connections have each session open, for a runner that several connections share.

    A session may be opened again by a new connection before the old one has closed it (a client
    that reconnects and resumes): the runner's `open_session` hook then runs again for it (hooks
    make it idempotent), and its `close_session` hook runs only when the last connection closes it,
    never while another one uses the session's resources. Opens and closes of one session are
    serialised, so a reconnect never races the old connection's clean-up.
    """

    __slots__ = ("_holders", "_locks")

    def __init__(self) -> None:
        self._holders: dict[str, set[int]] = {}
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def lock(self, session_id: str) -> AsyncGenerator[None]:
        """Hold the session's lock (one open or close of it at a time)."""
        lock, users = self._locks.get(session_id) or (asyncio.Lock(), 0)
        self._locks[session_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[session_id]
            if users > 1:
                self._locks[session_id] = (lock, users - 1)
            else:
                del self._locks[session_id]

    def opened(self, session_id: str, holder: object) -> None:
        """`holder` (a connection's session manager) has the session open."""
        self._holders.setdefault(session_id, set()).add(id(holder))

    def closed(self, session_id: str, holder: object) -> bool:
        """`holder` closed the session; `True` when no connection has it open any more."""
        holders = self._holders.get(session_id)
        if holders is None:
            return True
        holders.discard(id(holder))
        if holders:
            return False
        del self._holders[session_id]
        return True

    def count(self, session_id: str) -> int:
        """How many connections have the session open."""
        return len(self._holders.get(session_id, ()))


class SessionManager:
    """Owns the store, the sessions open on this connection and the runner's session hooks."""

    def __init__(self, runner: Runner, options: AgentOptions, session_options: SessionOptions, outbox: Outbox) -> None:
        self.runner = runner
        self.options = options
        self.session_options = session_options
        self.outbox = outbox
        self.client = ClientInfo()
        """What the client advertised in `initialize`."""
        self.principal: str | None = None
        """Who this connection's client is (a remote bearer token's principal), `None` locally.

        With a principal, new sessions are recorded as its own and any other session is "not
        found" (-32002), whatever the request.
        """
        self.max_open_sessions: int | None = None
        """How many sessions this connection may hold open at once (`None`: no limit; `acpkit serve` sets it)."""
        self.admission: Admission | None = None
        """Limits shared with other connections (`acpkit serve`'s per-principal quotas), checked before a
        session opens and before a turn starts; `None`: none."""
        self.openings = SessionOpenings()
        """Which sessions are open, counted across every connection sharing this runner (`acpkit serve`
        shares one): the runner's `close_session` hook runs when the last of them closes a session."""
        self.turn_logs: TurnLogs | None = None
        """Where turns log their updates so a client can re-attach (`acpkit serve` sets it; `None`: no log)."""
        self.mcp_connector: Callable[[str], McpStreams] | None = None
        """Opens a connection to one of the client's MCP-over-ACP servers (by `serverId`); set when the
        client opted into `mcpOverAcp`, else `None` (such servers are refused)."""
        self.llm_endpoint: LlmEndpoint | None = None
        """The model endpoint the client set on this connection (`providers/set`), given to every turn."""
        roots = check_host_tools(options.host_tools, options.allowed_paths)
        self.workspace = Workspace(roots) if roots else None
        """The server's files and terminals, serving the agent's file and terminal tools with
        `host_tools="server"` (`None` otherwise)."""
        self._store: SessionStore | None = None
        self._live: dict[str, LiveSession] = {}

    @property
    def store(self) -> SessionStore:
        """The session store (opened on first use)."""
        if self._store is None:
            self._store = timed_store(open_store(self.options.store), store_timer(self.options))
        return self._store

    async def stored(self, session_id: str) -> StoredSession:
        """The stored session `session_id`; "not found" when it belongs to another principal."""
        stored = await self.store.get(session_id)
        if self.principal is not None and stored.session.owner != self.principal:
            raise SessionNotFoundError(session_id)
        return stored

    # --- open sessions ---------------------------------------------------------------------------

    async def live(self, session_id: str) -> LiveSession:
        """The open session `session_id`, opened from the store if needed (unknown ids raise)."""
        live = self._live.get(session_id)
        if live is None:
            self._check_room(session_id)
            stored = await self.stored(session_id)
            live = LiveSession(session=stored.session, server=stored.server, version=stored.version)
            self._live[session_id] = live
            await self._open_hook(live.session)
        return live

    async def reload_state(self, live: LiveSession) -> None:
        """Take the runner state, history and server JSON as stored (drop what is only in memory)."""
        stored = await self.store.get(live.session.id)
        live.session.state = stored.session.state
        live.session.history = stored.session.history
        live.server = stored.server
        live.version = stored.version
        live.prompts = None  # read again when needed (another process may have added or rewound some)

    def counts(self) -> tuple[int, int]:
        """(open sessions, running turns); safe to call from a metrics reader's thread."""
        lives = list(self._live.values())
        return len(lives), sum(1 for live in lives if live.turn is not None)

    @property
    def open_count(self) -> int:
        """How many sessions are open on this connection."""
        return len(self._live)

    def running(self) -> list[LiveSession]:
        """The open sessions whose turn is running now."""
        return [live for live in self._live.values() if live.turn is not None]

    def _check_room(self, session_id: str | None = None) -> None:
        """A session is being opened: refuse one more past `max_open_sessions` (-32600, saying how to go on).

        The client is busy: the start-up warm-up's throwaway run waits for quiet from now, rather
        than start beside the opening (which then waits for the interpreter lock) and the first prompt.
        """
        session_opened()
        if session_id in self._live:
            return
        limit = self.max_open_sessions
        if limit is None or len(self._live) < limit:
            if self.admission is not None:
                self.admission.session()
            return
        raise RequestError.invalid_request(
            {
                "details": f"this connection already has {len(self._live)} open sessions, the server's limit "
                f"(max_sessions_per_connection={limit}): close one with session/close, or open another connection"
            }
        )

    def host_for(self, session: Session) -> ClientHost:
        """The client's files and terminal for `session` outside a turn (as a turn's `host`)."""
        conn = self.workspace if self.workspace is not None else self.outbox.conn
        return ClientHost.for_session(conn, session, self.client, tuple(self.options.allowed_paths))

    def forget(self, session_id: str) -> None:
        """Drop the open session from memory (read again from the store on next use)."""
        self._live.pop(session_id, None)

    def open_session(self, session_id: str) -> LiveSession | None:
        """The session `session_id` if it is open on this connection."""
        return self._live.get(session_id)

    async def _open_hook(self, session: Session) -> None:
        session_opened()  # a first prompt may follow at once: the warm-up's throwaway run waits
        async with self.openings.lock(session.id):
            self.openings.opened(session.id, self)
            if isinstance(self.runner, SessionHooks):
                await self.runner.open_session(session)

    async def host_plan(self, live: LiveSession) -> AgentPlanUpdate | WireUpdate | None:
        """The host's plan for a session just opened (`AgentOptions.plan_provider`), when it differs from
        the stored one (which it then replaces); `None` without a provider or a change."""
        provider = self.options.plan_provider
        if provider is None:
            return None
        try:
            found = await provider.get_plan(live.session)
        except Exception:
            logger.exception("session %s: the plan provider failed", live.session.id)
            return None
        if found is None or tuple(found) == plan_from_json(live.server.get(PLAN_STATE_KEY)):
            return None
        live.server[PLAN_STATE_KEY] = plan_to_json(found)
        if self.client.uses("planOperations"):  # the session's plan by its id (the unstable plan operations)
            entries = plan_to_json(found)
            return {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": MAIN_PLAN_ID, "entries": entries},
            }
        entries = [PlanEntry(content=i.content, status=i.status, priority=i.priority) for i in found]
        return AgentPlanUpdate(session_update="plan", entries=entries)

    async def _close_hook(self, session: Session) -> None:
        async with self.openings.lock(session.id):
            if not self.openings.closed(session.id, self):
                return  # another connection still has it open: its resources stay
            if isinstance(self.runner, SessionHooks):
                try:
                    await self.runner.close_session(session)
                except Exception:
                    logger.exception("session %s: close_session hook failed", session.id)

    def mcp_servers(self, servers: list[WireMcpServer] | None) -> tuple[McpServer, ...]:
        """The client's `mcpServers` for a session; an ACP-transport one (MCP over ACP) is -32602 unless
        the client opted into `mcpOverAcp` (then `mcp_connector` opens it)."""
        if self.mcp_connector is None:
            for index, server in enumerate(servers or ()):
                if isinstance(server, AcpMcpServer):
                    reason = (
                        f"{server.name!r} has type acp (MCP over ACP): this agent accepts it only from a client "
                        "that opted into the unstable surface mcpOverAcp (it then answers mcpCapabilities.acp: true)"
                    )
                    raise RequestError.invalid_params({f"mcpServers[{index}]": reason})
        return mcp_servers_from_wire(servers, connector=self.mcp_connector)

    def _where(self, cwd: str, directories: list[str] | None) -> tuple[str, list[str] | None]:
        """The session's cwd and additional directories: as sent, or inside the server's workspace."""
        if not os.path.isabs(cwd):
            raise RequestError.invalid_params({"details": f"cwd must be an absolute path, got {cwd!r}"})
        if self.workspace is None:
            return cwd, directories
        return self.workspace.session_cwd(cwd), self.workspace.session_directories(directories)

    # --- lifecycle --------------------------------------------------------------------------------

    async def new(
        self, cwd: str, additional_directories: list[str] | None, mcp_servers: list[WireMcpServer] | None
    ) -> Session:
        """Create, store and open a session."""
        cwd, additional_directories = self._where(cwd, additional_directories)
        self._check_room()
        now = now_iso()
        session = Session(
            id=uuid.uuid4().hex,
            cwd=cwd,
            mcp_servers=self.mcp_servers(mcp_servers),
            additional_directories=tuple(additional_directories or ()),
            created_at=now,
            updated_at=now,
            agent=self.options.name,
            owner=self.principal,
        )
        self.session_options.initialise(session)
        live = LiveSession(session=session)
        await self.store.create(session, server=live.server)
        self._live[session.id] = live
        await self._open_hook(session)
        plan = await self.host_plan(live)
        if plan is not None:
            self.outbox.later(session.id, [plan])
        return session

    async def reopen(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None,
        mcp_servers: list[WireMcpServer] | None,
        *,
        replay: bool,
    ) -> Session:
        """Open a stored session with the client's cwd and MCP servers; replay its transcript if asked."""
        cwd, additional_directories = self._where(cwd, additional_directories)
        self._check_room(session_id)
        stored = await self.stored(session_id)
        live = self._live.get(session_id)
        if live is not None and (live.turn is not None or live.rewinding):
            raise SessionBusyError(f"session {session_id!r} is running a turn; cancel it before loading it again")
        session = stored.session
        session.cwd = cwd
        session.mcp_servers = self.mcp_servers(mcp_servers)
        if additional_directories is not None:
            session.additional_directories = tuple(additional_directories)
        if live is not None:
            await self._close_hook(live.session)
        self._live[session_id] = LiveSession(session=session, server=stored.server, version=stored.version)
        await self._open_hook(session)
        if replay:
            transcript = await self.store.transcript(session_id)
            if await self.store.recover_turn(session_id):
                closing = interruption_updates(transcript)  # a process died mid-turn: say so, once
                await self.store.append_transcript(session_id, closing)
                transcript.extend(closing)
            compaction = "sessionCompaction" in self.client.unstable
            for update in replay_json(transcript, compaction=compaction):
                await self.outbox.send(session_id, update)
        plan = await self.host_plan(self._live[session_id])
        if plan is not None:
            await self.outbox.send(session_id, plan)
        return session

    async def fork(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None,
        mcp_servers: list[WireMcpServer] | None,
    ) -> Session:
        """Copy a stored session (state, transcript, mode, options) into a new one."""
        cwd, additional_directories = self._where(cwd, additional_directories)
        self._check_room()
        stored = await self.stored(session_id)
        transcript = await self.store.transcript(session_id)
        now = now_iso()
        source = stored.session
        session = Session(
            id=uuid.uuid4().hex,
            cwd=cwd,
            mcp_servers=self.mcp_servers(mcp_servers),
            additional_directories=tuple(additional_directories or source.additional_directories),
            mode_id=source.mode_id,
            config=dict(source.config),
            state=source.state,
            history=HistoryLog(),
            title=source.title,
            created_at=now,
            updated_at=now,
            parent_id=source.id,
            agent=source.agent or self.options.name,
            owner=self.principal,
        )
        items = source.history.take_loaded() or []
        session.history.replace(items)
        await self.store.create(session, server=stored.server, transcript=transcript)
        session.history = HistoryLog(items)  # the runner reads them as loaded from the store, as for any session
        if isinstance(self.store, RewindStore):  # the fork can go back to the prompts it was given
            await self.store.copy_prompts(source.id, session.id)
        live = self._live[session.id] = LiveSession(session=session, server=copy.deepcopy(stored.server))
        await self._open_hook(session)
        plan = await self.host_plan(live)
        if plan is not None:
            self.outbox.later(session.id, [plan])
        return session

    async def page(self, cwd: str | None, cursor: str | None) -> tuple[list[SessionInfo], str | None]:
        """Stored sessions, most recent first, optionally for one cwd; and the next page's cursor."""
        page = await self.store.list(cwd=cwd, cursor=cursor, owner=self.principal)
        infos = [
            SessionInfo(
                session_id=s.id,
                cwd=s.cwd,
                title=s.title,
                updated_at=s.updated_at or None,
                additional_directories=list(s.additional_directories) or None,
                field_meta={"acpkit": {"agent": s.agent}} if s.agent else None,
            )
            for s in page.sessions
        ]
        return infos, page.next_cursor

    async def _end(self, live: LiveSession) -> None:
        if live.turn is not None:
            live.turn.cancel()
            await live.idle.wait()
        await self._close_hook(live.session)

    async def close(self, session_id: str) -> None:
        """Cancel the running turn (if any), wait for it to end, and free the session."""
        live = self._live.pop(session_id, None)
        if live is None:
            await self.stored(session_id)  # unknown ids answer -32002
            return
        await self._end(live)

    async def delete(self, session_id: str) -> None:
        """Close the session, let the runner forget its data, then drop it from the store.

        An unknown id (or another principal's session) is already gone: nothing happens, no error
        (`session/delete` SHOULD succeed silently for it).
        """
        live = self._live.pop(session_id, None)
        if live is None:
            try:
                session = (await self.stored(session_id)).session
            except SessionNotFoundError:
                return
        else:
            await self._end(live)
            session = live.session
        if isinstance(self.runner, SessionDeleter):
            await self.runner.delete_session(session)
        await self.store.delete(session_id)

    async def shutdown(self) -> None:
        """Cancel running turns, close every open session (hooks) and the store."""
        for live in list(self._live.values()):
            if live.turn is not None:
                live.turn.cancel()
        for session_id in list(self._live):
            live = self._live.pop(session_id)
            await self._close_hook(live.session)
        if self._store is not None:
            await self._store.close()
            self._store = None
        if self.workspace is not None:
            await self.workspace.close()  # its terminals end with the connection

    # --- modes and config options ---------------------------------------------------------------

    async def apply_mode(self, live: LiveSession, mode_id: str, *, notify_option: bool = True) -> None:
        """Switch mode, persist, and tell the client (mode and, if asked, the option list)."""
        session = live.session
        self.session_options.set_mode(session, mode_id)
        session.updated_at = now_iso()
        await self.store.save(session, server=live.server)
        await self.outbox.send(
            session.id, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id)
        )
        if notify_option:
            await self.send_options(session)

    async def send_options(self, session: Session) -> None:
        """Send the session's config options (if it has any)."""
        options = self.session_options.wire_options(session, self.client)
        if options:
            await self.outbox.send(
                session.id,
                ConfigOptionUpdate(session_update="config_option_update", config_options=options),  # pyright: ignore[reportArgumentType]
            )

    async def set_option(self, session_id: str, config_id: str, value: str | bool) -> Session:
        """Set one config option, persist, and tell the client when it switched the mode."""
        live = await self.live(session_id)
        session = live.session
        old_mode = session.mode_id
        self.session_options.set_option(session, config_id, value, self.client)
        session.updated_at = now_iso()
        await self.store.save(session, server=live.server)
        if session.mode_id != old_mode and session.mode_id is not None:
            await self.outbox.send(
                session_id, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=session.mode_id)
            )
        return session
