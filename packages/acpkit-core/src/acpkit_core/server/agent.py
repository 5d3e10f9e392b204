"""`AcpAgent`: the ACP agent methods, sessions and their lifecycle, over any runner."""

from __future__ import annotations

import asyncio
import copy
import functools
import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.connection import Connection
from acp.meta import AGENT_METHODS
from acp.router import MessageRouter
from acp.schema import (
    AgentCapabilities,
    AudioContentBlock,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CloseSessionResponse,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    DeleteSessionRequest,
    DeleteSessionResponse,
    EmbeddedResourceContentBlock,
    ForkSessionResponse,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    ResumeSessionResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionForkCapabilities,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TextContentBlock,
)
from acp.utils import normalize_result

from ..config import AgentOptions
from ..errors import SessionBusyError
from ..runner import ClientInfo, Runner, Session, SessionDeleter, SessionHooks, StopReason
from ..store import SessionStore, open_store
from ..store.base import now_iso
from ._boundary import boundary
from ._prompt import parse_prompt, prompt_title
from .builtins import BuiltinCommands
from .capabilities import CapabilityProvider, RunnerCapabilities
from .commands import available_commands, collect_commands, match_command
from .emitter import SessionUpdate, TurnEmitter, WireUpdate, update_from_json, update_to_json
from .options import SessionOptions
from .sessions import LiveSession, WireMcpServer, mcp_servers_from_wire, replay_updates
from .turn import ServerTurn

__all__ = ["AcpAgent"]

logger = logging.getLogger("acpkit_core.server")

SUPPORTED_PROTOCOL_VERSIONS = frozenset({PROTOCOL_VERSION})
CANCEL_GRACE_S = 0.05
"""How long a cancelled runner may take to return on its own before its task is cancelled."""

PromptBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)


class AcpAgent(BuiltinCommands):
    """An ACP agent serving one [`Runner`][acpkit_core.runner.Runner], one instance per connection.

    A plain class (not a subclass of `acp.Agent`), so a method it does not serve answers
    -32601. Serve it with [`serve_stdio`][acpkit_core.server.serve_stdio] or `acp.run_agent(agent,
    use_unstable_protocol=True)`.
    """

    def __init__(self, runner: Runner, options: AgentOptions | None = None) -> None:
        self.runner = runner
        """The framework runner."""
        self.options = options or AgentOptions()
        """The developer's options."""
        self.session_options = SessionOptions(self.options)
        """Modes, models and config options."""
        self.client: ClientInfo = ClientInfo()
        """What the client advertised in `initialize`."""
        self.conn: Client | None = None
        """The connection to the client, once connected."""
        self._notify: Callable[[str, Any], Awaitable[None]] | None = None
        self._serves_delete = False
        self._store: SessionStore | None = None
        self._live: dict[str, LiveSession] = {}
        self._commands = collect_commands(runner, self.options.commands, self)
        self._background: set[asyncio.Task[None]] = set()

    # --- plumbing --------------------------------------------------------------------------------

    def on_connect(self, conn: Client) -> None:
        """Called by the SDK with the connection to the client."""
        self.conn = conn
        # The SDK's JSON-RPC connection under it, to send updates already in wire form (one per
        # token) without rebuilding and re-dumping a notification model; absent, the typed path.
        raw: object = getattr(conn, "_conn", None)
        self._notify = raw.send_notification if isinstance(raw, Connection) else None
        # The SDK does not route `session/delete`: add the route to its router when we can reach it
        # (and advertise `sessionCapabilities.delete` only then).
        router: object = getattr(raw, "_handler", None)
        if isinstance(router, MessageRouter):
            method = AGENT_METHODS["session_delete"]
            router.route_request(method, DeleteSessionRequest, self, "delete_session", adapt_result=normalize_result)
            self._serves_delete = True

    @property
    def store(self) -> SessionStore:
        """The session store (opened on first use)."""
        if self._store is None:
            self._store = open_store(self.options.store)
        return self._store

    @property
    def capabilities(self) -> RunnerCapabilities:
        """What the runner declared (defaults when it declares nothing)."""
        if isinstance(self.runner, CapabilityProvider):
            return self.runner.capabilities
        return RunnerCapabilities()

    @property
    def has_modes(self) -> bool:
        """True when the agent offers modes."""
        return bool(self.session_options.modes)

    @property
    def has_models(self) -> bool:
        """True when the agent offers models."""
        return bool(self.session_options.models)

    async def _send(self, session_id: str, update: SessionUpdate | WireUpdate) -> None:
        if self.conn is None:
            return
        if self._notify is not None:
            wire = update if isinstance(update, dict) else update_to_json(update)
            await self._notify("session/update", {"sessionId": session_id, "update": wire})
            return
        model = update_from_json(update) if isinstance(update, dict) else update
        await self.conn.session_update(session_id=session_id, update=model)

    def _later(self, session_id: str, updates: Sequence[SessionUpdate]) -> None:
        """Send updates after the current response (used after `session/new` and `session/fork`)."""

        async def send() -> None:
            for update in updates:
                await self._send(session_id, update)

        task = asyncio.ensure_future(send())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _commands_update(self) -> AvailableCommandsUpdate:
        return AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=available_commands(self._commands)
        )

    async def _live_session(self, session_id: str) -> LiveSession:
        live = self._live.get(session_id)
        if live is None:
            stored = await self.store.get(session_id)
            live = self._live[session_id] = LiveSession(session=stored.session, server=stored.server)
            await self._open_hook(live.session)
        return live

    async def _open_hook(self, session: Session) -> None:
        if isinstance(self.runner, SessionHooks):
            await self.runner.open_session(session)

    async def _close_hook(self, session: Session) -> None:
        if isinstance(self.runner, SessionHooks):
            try:
                await self.runner.close_session(session)
            except Exception:
                logger.exception("session %s: close_session hook failed", session.id)

    def _check_cwd(self, cwd: str) -> None:
        if not os.path.isabs(cwd):
            raise RequestError.invalid_params({"details": f"cwd must be an absolute path, got {cwd!r}"})

    # --- initialize ----------------------------------------------------------------------------

    @boundary
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Negotiate the version, remember the client's capabilities, and advertise ours."""
        caps = client_capabilities or ClientCapabilities()
        fs = caps.fs
        boolean = caps.session is not None and caps.session.config_options is not None
        boolean = boolean and caps.session.config_options.boolean is not None  # pyright: ignore[reportOptionalMemberAccess]
        self.client = ClientInfo(
            name=client_info.name if client_info else None,
            read_text_file=bool(fs and fs.read_text_file),
            write_text_file=bool(fs and fs.write_text_file),
            terminal=bool(caps.terminal),
            boolean_config_options=boolean,
        )
        rc = self.capabilities
        version = protocol_version if protocol_version in SUPPORTED_PROTOCOL_VERSIONS else PROTOCOL_VERSION
        return InitializeResponse(
            protocol_version=version,
            agent_info=Implementation(name=self.options.name, title=self.options.title, version=self.options.version),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=rc.image, audio=rc.audio, embedded_context=rc.embedded_context
                ),
                mcp_capabilities=McpCapabilities(http=rc.mcp_http, sse=rc.mcp_sse),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    delete=SessionDeleteCapabilities() if self._serves_delete else None,
                    fork=SessionForkCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities(),
                ),
            ),
            auth_methods=[],
        )

    # --- sessions ----------------------------------------------------------------------------------

    @boundary
    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[WireMcpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """Create, store and open a session."""
        self._check_cwd(cwd)
        now = now_iso()
        session = Session(
            id=uuid.uuid4().hex,
            cwd=cwd,
            mcp_servers=mcp_servers_from_wire(mcp_servers),
            additional_directories=tuple(additional_directories or ()),
            created_at=now,
            updated_at=now,
        )
        self.session_options.initialise(session)
        live = LiveSession(session=session)
        await self.store.create(session, server=live.server)
        self._live[session.id] = live
        await self._open_hook(session)
        self._later(session.id, [self._commands_update()])
        return NewSessionResponse(
            session_id=session.id,
            modes=self.session_options.mode_state(session),
            config_options=self.session_options.wire_options(session, self.client),  # pyright: ignore[reportArgumentType]
        )

    async def _reopen(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None,
        mcp_servers: list[WireMcpServer] | None,
    ) -> LiveSession:
        self._check_cwd(cwd)
        stored = await self.store.get(session_id)
        live = self._live.get(session_id)
        if live is not None and live.turn is not None:
            raise SessionBusyError(f"session {session_id!r} is running a turn; cancel it before loading it again")
        session = stored.session
        session.cwd = cwd
        session.mcp_servers = mcp_servers_from_wire(mcp_servers)
        if additional_directories is not None:
            session.additional_directories = tuple(additional_directories)
        if live is not None:
            await self._close_hook(live.session)
        live = self._live[session_id] = LiveSession(session=session, server=stored.server)
        await self._open_hook(session)
        return live

    @boundary
    async def load_session(
        self,
        cwd: str,
        session_id: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[WireMcpServer] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        """Open a stored session and replay its conversation before answering."""
        live = await self._reopen(session_id, cwd, additional_directories, mcp_servers)
        session = live.session
        for update in replay_updates(session_id, await self.store.transcript(session_id)):
            await self._send(session_id, update)
        await self._send(session_id, self._commands_update())
        return LoadSessionResponse(
            modes=self.session_options.mode_state(session),
            config_options=self.session_options.wire_options(session, self.client),  # pyright: ignore[reportArgumentType]
        )

    @boundary
    async def resume_session(
        self,
        cwd: str,
        session_id: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[WireMcpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """Open a stored session without replaying it."""
        live = await self._reopen(session_id, cwd, additional_directories, mcp_servers)
        await self._send(session_id, self._commands_update())
        return ResumeSessionResponse(
            modes=self.session_options.mode_state(live.session),
            config_options=self.session_options.wire_options(live.session, self.client),  # pyright: ignore[reportArgumentType]
        )

    @boundary
    async def fork_session(
        self,
        cwd: str,
        session_id: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[WireMcpServer] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        """Copy a stored session (state, transcript, mode, options) into a new one."""
        self._check_cwd(cwd)
        stored = await self.store.get(session_id)
        transcript = await self.store.transcript(session_id)
        now = now_iso()
        source = stored.session
        session = Session(
            id=uuid.uuid4().hex,
            cwd=cwd,
            mcp_servers=mcp_servers_from_wire(mcp_servers),
            additional_directories=tuple(additional_directories or source.additional_directories),
            mode_id=source.mode_id,
            config=dict(source.config),
            state=copy.deepcopy(source.state),
            title=source.title,
            created_at=now,
            updated_at=now,
            parent_id=source.id,
        )
        await self.store.create(session, server=stored.server, transcript=transcript)
        live = self._live[session.id] = LiveSession(session=session, server=copy.deepcopy(stored.server))
        await self._open_hook(live.session)
        self._later(session.id, [self._commands_update()])
        return ForkSessionResponse(
            session_id=session.id,
            modes=self.session_options.mode_state(session),
            config_options=self.session_options.wire_options(session, self.client),  # pyright: ignore[reportArgumentType]
        )

    @boundary
    async def list_sessions(
        self, cursor: str | None = None, cwd: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """Stored sessions, most recent first, optionally for one cwd; paged by cursor."""
        page = await self.store.list(cwd=cwd, cursor=cursor)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=s.id,
                    cwd=s.cwd,
                    title=s.title,
                    updated_at=s.updated_at or None,
                    additional_directories=list(s.additional_directories) or None,
                )
                for s in page.sessions
            ],
            next_cursor=page.next_cursor,
        )

    @boundary
    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Cancel the running turn (if any), wait for it to end, and free the session."""
        live = self._live.pop(session_id, None)
        if live is None:
            await self.store.get(session_id)  # unknown ids answer -32002
            return CloseSessionResponse()
        if live.turn is not None:
            live.turn.cancel()
            await live.idle.wait()
        await self._close_hook(live.session)
        return CloseSessionResponse()

    @boundary
    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """Cancel the running turn, close the session, and delete everything kept about it.

        The runner forgets its own data first ([`SessionDeleter`][acpkit_core.runner.SessionDeleter]:
        checkpoints), then the store drops the session, its state and its transcript. Unknown ids
        answer -32002.
        """
        live = self._live.pop(session_id, None)
        if live is None:
            session = (await self.store.get(session_id)).session
        else:
            if live.turn is not None:
                live.turn.cancel()
                await live.idle.wait()
            await self._close_hook(live.session)
            session = live.session
        if isinstance(self.runner, SessionDeleter):
            await self.runner.delete_session(session)
        await self.store.delete(session_id)
        return DeleteSessionResponse()

    async def shutdown(self) -> None:
        """Close every open session (hooks) and the store; called when the connection ends."""
        for live in list(self._live.values()):
            if live.turn is not None:
                live.turn.cancel()
        for session_id in list(self._live):
            live = self._live.pop(session_id)
            await self._close_hook(live.session)
        for task in list(self._background):
            task.cancel()
        if self._store is not None:
            await self._store.close()
            self._store = None

    # --- modes and config options ---------------------------------------------------------------

    async def apply_mode(self, live: LiveSession, mode_id: str, *, notify_option: bool = True) -> None:
        """Switch mode, persist, and tell the client (mode and, if asked, the option list)."""
        session = live.session
        self.session_options.set_mode(session, mode_id)
        session.updated_at = now_iso()
        await self.store.save(session, server=live.server)
        await self._send(session.id, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id))
        if notify_option:
            await self._send_options(session)

    async def _send_options(self, session: Session) -> None:
        options = self.session_options.wire_options(session, self.client)
        if options:
            await self._send(
                session.id,
                ConfigOptionUpdate(session_update="config_option_update", config_options=options),  # pyright: ignore[reportArgumentType]
            )

    @boundary
    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """`session/set_mode`: also updates the `mode` config option."""
        live = await self._live_session(session_id)
        await self.apply_mode(live, mode_id)
        return SetSessionModeResponse()

    @boundary
    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """`session/set_config_option`: answers with the complete option list."""
        live = await self._live_session(session_id)
        session = live.session
        old_mode = session.mode_id
        self.session_options.set_option(session, config_id, value, self.client)
        session.updated_at = now_iso()
        await self.store.save(session, server=live.server)
        if session.mode_id != old_mode and session.mode_id is not None:
            await self._send(
                session_id, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=session.mode_id)
            )
        return SetSessionConfigOptionResponse(
            config_options=self.session_options.wire_options(session, self.client) or []  # pyright: ignore[reportArgumentType]
        )

    # --- prompt turns -----------------------------------------------------------------------------

    @boundary
    async def prompt(self, prompt: list[PromptBlock], session_id: str, **kwargs: Any) -> PromptResponse:
        """Run one turn. Refuses a second prompt while a turn runs (`SessionBusyError`, -32600)."""
        live = await self._live_session(session_id)
        if live.turn is not None:
            raise SessionBusyError(
                f"session {session_id!r} is still running a turn; wait for its response or send session/cancel"
            )
        parsed = parse_prompt(prompt)
        session = live.session
        emitter = TurnEmitter(
            functools.partial(self._send, session_id),
            coalesce_ms=self.options.coalesce_ms,
            context_window=self.session_options.context_window(session),
        )
        turn = ServerTurn(
            session=session,
            prompt=parsed,
            emitter=emitter,
            client=self.client,
            conn=self.conn,
            mode=self.session_options.mode(session),
            policy=self.options.permission_policy,
            remembered=live.remembered,
            tool_kinds=self.options.tool_kinds,
            allowed_paths=tuple(self.options.allowed_paths),
        )
        live.turn = turn
        live.idle.clear()
        try:
            return await self._run_turn(live, turn, prompt)
        finally:
            live.turn = None
            live.reset_transcript = False
            live.idle.set()

    async def _run_turn(self, live: LiveSession, turn: ServerTurn, blocks: list[PromptBlock]) -> PromptResponse:
        session = live.session
        emitter = turn.emit
        state_before = copy.deepcopy(session.state)
        await emitter.user_message(blocks)
        if session.title is None:
            title = prompt_title(turn.prompt)
            if title:
                session.title = title
                await emitter.send_unrecorded(
                    SessionInfoUpdate(session_update="session_info_update", title=title, updated_at=now_iso())
                )
        command = match_command(turn.prompt, self._commands)
        work = command[0].handler(turn, command[1]) if command else self.runner.run_turn(turn)
        stop = await self._race(live, turn, work, state_before)
        await emitter.flush()
        if emitter.open_tool_calls:
            reason = "cancelled" if stop == "cancelled" else "the agent ended the turn without finishing this tool call"
            await emitter.close_open_tool_calls(reason)
        live.server["permissions"] = turn.remembered.to_json()
        if emitter.turn_usage is not None:
            totals = live.server.setdefault("usage", {})
            for key, value in emitter.turn_usage.model_dump(exclude_none=True).items():
                if isinstance(value, int):
                    totals[key] = totals.get(key, 0) + value
        session.updated_at = now_iso()
        await self.store.save(
            session,
            server=live.server,
            append=emitter.recorded,
            reset_transcript=live.reset_transcript,
        )
        return PromptResponse(stop_reason=stop, usage=emitter.turn_usage)

    async def _race(self, live: LiveSession, turn: ServerTurn, work: Any, state_before: dict[str, Any]) -> StopReason:
        task: asyncio.Future[StopReason | None] = asyncio.ensure_future(work)
        cancelled = asyncio.ensure_future(turn.wait_cancelled())
        try:
            await asyncio.wait({task, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            cancelled.cancel()
        if not task.done():
            done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
            if not done:
                task.cancel()
                await asyncio.wait({task}, timeout=1.0)
        if not task.done() or task.cancelled():
            return "cancelled"
        exc = task.exception()
        if exc is not None:
            if turn.cancelled:
                return "cancelled"
            await self._runner_failed(live, turn, exc, state_before)
            return "end_turn"
        result = task.result()
        if turn.cancelled:
            return "cancelled"
        return result or "end_turn"

    async def _runner_failed(
        self, live: LiveSession, turn: ServerTurn, exc: BaseException, state_before: dict[str, Any]
    ) -> None:
        logger.error("session %s: the runner raised %s", live.session.id, type(exc).__name__, exc_info=exc)
        live.session.state = state_before
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        message = f"The agent failed: {type(exc).__name__}" + (f": {detail}" if detail else "") + "."
        try:
            await turn.emit.agent_message(message)
        except Exception:
            logger.exception("session %s: could not report the failure to the client", live.session.id)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """`session/cancel`: end the running turn with `cancelled` (a notification; never an error)."""
        live = self._live.get(session_id)
        if live is not None and live.turn is not None:
            live.turn.cancel()
