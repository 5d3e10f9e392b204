"""`AcpAgent`: the ACP methods, a thin facade over the sessions and the turns of one connection.

Each method checks nothing and decides nothing itself: `SessionManager` (`server/session_manager.py`)
owns the sessions and their options, `TurnRunner` (`server/turn_runner.py`) runs `session/prompt`,
`Outbox` (`server/outbox.py`) sends updates, and every reach into the SDK's private
internals is in `server/_sdk.py`.
"""

from __future__ import annotations

from typing import Any

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CloseSessionResponse,
    DeleteSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionForkCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from .._sdk_schema import warm_sdk_models
from ..auth import ConnectionAuth
from ..capabilities import CapabilityProvider, RunnerCapabilities
from ..config import AgentOptions
from ..runner import ClientInfo, Runner
from ..store import SessionStore
from ._boundary import boundary
from ._sdk import route_session_delete, route_wire_prompt
from .builtins import BuiltinCommands
from .commands import available_commands, collect_commands
from .memory import limit_retained_memory
from .options import SessionOptions
from .outbox import Outbox
from .session_manager import SessionManager
from .sessions import WireMcpServer
from .turn_runner import PromptBlock, TurnRunner

__all__ = ["AcpAgent"]

SUPPORTED_PROTOCOL_VERSIONS = frozenset({PROTOCOL_VERSION})


class AcpAgent:
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
        self.outbox = Outbox()
        """Sends session updates to the client."""
        self.sessions = SessionManager(runner, self.options, self.session_options, self.outbox)
        """The sessions of this connection."""
        builtins = BuiltinCommands(runner, self.sessions)
        self.turns = TurnRunner(
            runner, self.options, self.sessions, collect_commands(runner, self.options.commands, builtins)
        )
        """Runs prompt turns."""
        self._serves_delete = False
        self.auth = ConnectionAuth(self.options.auth)
        """This connection's authentication state (`AgentOptions.auth`); a transport that authenticated
        the connection itself calls `auth.grant(...)`."""
        limit_retained_memory()  # big blocks go back to the system when freed (glibc)

    def on_connect(self, conn: Client) -> None:
        """Called by the SDK with the connection to the client."""
        self.outbox.connect(conn)
        # The SDK does not route `session/delete`: advertise it only when the route could be added.
        self._serves_delete = route_session_delete(conn, self)
        # Prompt blocks reach our own parser as sent, for its precise errors (see `route_wire_prompt`).
        route_wire_prompt(conn, self)

    @property
    def conn(self) -> Client | None:
        """The connection to the client, once connected."""
        return self.outbox.conn

    @property
    def client(self) -> ClientInfo:
        """What the client advertised in `initialize`."""
        return self.sessions.client

    @property
    def store(self) -> SessionStore:
        """The session store (opened on first use)."""
        return self.sessions.store

    @property
    def capabilities(self) -> RunnerCapabilities:
        """What the runner declared (defaults when it declares nothing)."""
        if isinstance(self.runner, CapabilityProvider):
            return self.runner.capabilities
        return RunnerCapabilities()

    def _commands_update(self) -> AvailableCommandsUpdate:
        return AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=available_commands(self.turns.commands)
        )

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
        self.sessions.client = ClientInfo(
            name=client_info.name if client_info else None,
            read_text_file=bool(fs and fs.read_text_file),
            write_text_file=bool(fs and fs.write_text_file),
            terminal=bool(caps.terminal),
            boolean_config_options=boolean,
            elicitation_form=bool(caps.elicitation and caps.elicitation.form is not None),
        )
        self.auth.client = client_info.name if client_info else None
        warm_sdk_models()  # the SDK models a session uses, built in the background (once per process)
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
                field_meta=self.options.extensions.capabilities() if self.options.extensions else None,
            ),
            auth_methods=self.auth.wire_methods(),  # pyright: ignore[reportArgumentType]
        )

    @boundary
    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        """Run the authentication method the client chose (`AgentOptions.auth`).

        An unknown method answers -32602 listing the methods; one that does not succeed answers
        -32000 with the reason (a variable not set, a key refused).
        """
        try:
            await self.auth.authenticate(method_id, kwargs)
        except KeyError as exc:
            raise RequestError.invalid_params({"methodId": method_id, "reason": exc.args[0]}) from None
        return AuthenticateResponse()

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
        await self.auth.require("session/new")
        session = await self.sessions.new(cwd, additional_directories, mcp_servers)
        self.outbox.later(session.id, [self._commands_update()])
        return NewSessionResponse(
            session_id=session.id,
            modes=self.session_options.mode_state(session),
            config_options=self.session_options.wire_options(session, self.client),  # pyright: ignore[reportArgumentType]
        )

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
        await self.auth.require("session/load")
        session = await self.sessions.reopen(session_id, cwd, additional_directories, mcp_servers, replay=True)
        await self.outbox.send(session_id, self._commands_update())
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
        await self.auth.require("session/resume")
        session = await self.sessions.reopen(session_id, cwd, additional_directories, mcp_servers, replay=False)
        await self.outbox.send(session_id, self._commands_update())
        return ResumeSessionResponse(
            modes=self.session_options.mode_state(session),
            config_options=self.session_options.wire_options(session, self.client),  # pyright: ignore[reportArgumentType]
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
        await self.auth.require("session/fork")
        session = await self.sessions.fork(session_id, cwd, additional_directories, mcp_servers)
        self.outbox.later(session.id, [self._commands_update()])
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
        await self.auth.require("session/list")
        sessions, next_cursor = await self.sessions.page(cwd, cursor)
        return ListSessionsResponse(sessions=sessions, next_cursor=next_cursor)

    @boundary
    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Cancel the running turn (if any), wait for it to end, and free the session."""
        await self.auth.require("session/close")
        await self.sessions.close(session_id)
        return CloseSessionResponse()

    @boundary
    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """Cancel the running turn, close the session, and delete everything kept about it.

        The runner forgets its own data first ([`SessionDeleter`][acpkit_core.runner.SessionDeleter]:
        checkpoints), then the store drops the session, its state and its transcript. Unknown ids
        answer -32002.
        """
        await self.auth.require("session/delete")
        await self.sessions.delete(session_id)
        return DeleteSessionResponse()

    async def shutdown(self) -> None:
        """Close every open session (hooks) and the store; called when the connection ends."""
        await self.sessions.shutdown()
        self.outbox.close()

    # --- modes and config options ---------------------------------------------------------------

    @boundary
    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """`session/set_mode`: also updates the `mode` config option."""
        await self.auth.require("session/set_mode")
        await self.sessions.apply_mode(await self.sessions.live(session_id), mode_id)
        return SetSessionModeResponse()

    @boundary
    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """`session/set_config_option`: answers with the complete option list."""
        await self.auth.require("session/set_config_option")
        session = await self.sessions.set_option(session_id, config_id, value)
        options = self.session_options.wire_options(session, self.client) or []
        return SetSessionConfigOptionResponse(config_options=options)  # pyright: ignore[reportArgumentType]

    # --- prompt turns -----------------------------------------------------------------------------

    @boundary
    async def prompt(
        self, prompt: list[PromptBlock] | list[dict[str, Any]] | Any, session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """Run one turn. Refuses a second prompt while a turn runs (`SessionBusyError`, -32600).

        `prompt` is what the client sent (wire JSON, parsed by ACP Kit: a bad block is -32602 naming
        it), or the SDK's models when the SDK validated them. A prompt over `max_prompt_bytes` is
        -32602; a turn whose runner raised answers -32603 `The agent failed: <cause>` after it was
        recorded.
        """
        await self.auth.require("session/prompt")
        return await self.turns.prompt(session_id, prompt, kwargs)  # `_meta` keys: the client's trace context

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """`session/cancel`: end the running turn with `cancelled` (a notification; never an error)."""
        self.turns.cancel(session_id)

    # --- extensions ---------------------------------------------------------------------------------

    @boundary
    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """An `_`-prefixed request (`method` without the `_`): `AgentOptions.extensions`, else -32601."""
        if self.options.extensions is None:
            raise RequestError.method_not_found(f"_{method}")
        return await self.options.extensions.call(method, params)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """An `_`-prefixed notification: `AgentOptions.extensions`, else dropped (a notification has no answer)."""
        if self.options.extensions is not None:
            await self.options.extensions.notify(method, params)
