"""`AcpAgent`: the ACP methods, a thin facade over the sessions and the turns of one connection.

Each method checks nothing and decides nothing itself: `SessionManager` (`server/session_manager.py`)
owns the sessions and their options, `TurnRunner` (`server/turn_runner.py`) runs `session/prompt`,
`Outbox` (`server/outbox.py`) sends updates, and every reach into the SDK's private
internals is in `server/_sdk.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal, cast

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.schema import (
    AgentAuthCapabilities,
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
    LogoutCapabilities,
    LogoutResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ProvidersCapabilities,
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
from ..config import AgentOptions
from ..extensions import ExtensionContext
from ..runner.capabilities import CapabilityProvider, RunnerCapabilities
from ..runner.host_tools import client_info_for
from ..runner.mcp_over_acp import MCP_MESSAGE, McpOverAcp
from ..runner.protocols import Runner
from ..runner.providers import (
    PROVIDERS_DISABLE,
    PROVIDERS_LIST,
    PROVIDERS_SET,
    EndpointSupport,
    ModelEndpoints,
    ProviderSettings,
)
from ..runner.types import ClientInfo
from ..runner.unstable import negotiate_unstable, unstable_answer
from ..runner.warmup import initialized as warmup_initialized
from ..runner.warmup import opening as warmup_opening
from ..store import SessionStore
from ._boundary import boundary
from ._sdk import (
    raw_notifier,
    raw_requester,
    route_logout,
    route_raw,
    route_session_delete,
    route_wire_initialize,
    route_wire_prompt,
    tracked,
)
from .builtins import BuiltinCommands
from .commands import collect_commands
from .memory import limit_retained_memory
from .options import SessionOptions
from .outbox import Outbox
from .reattach import capability as reattach_capability
from .reattach import follow, seq_meta
from .requests import Incoming
from .rewind_extension import RewindExtension, fork_point
from .rewind_extension import capabilities as rewind_capabilities
from .rewinding import Rewinder
from .session_manager import SessionManager
from .sessions import WireMcpServer
from .turn_log import RESUME_META, resume_cursor
from .turn_runner import PromptBlock, TurnRunner

__all__ = ["AcpAgent"]

SUPPORTED_PROTOCOL_VERSIONS = frozenset({PROTOCOL_VERSION})

_FINISHED_WHEN_CANCELLED = frozenset({"session/delete", "session/close"})
"""Requests a `$/cancel_request` does not interrupt: stopping them half-way would leave half a change."""


class AcpAgent:
    """An ACP agent serving one [`Runner`][acpkit_core.runner.protocols.Runner], one instance per connection.

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
        rewinder = Rewinder(runner, self.sessions)
        builtins = BuiltinCommands(runner, self.sessions, rewinder)
        commands = collect_commands(runner, self.options.commands, builtins)
        self.turns = TurnRunner(runner, self.options, self.sessions, commands, rewinder)
        """Runs prompt turns."""
        self.rewinds = RewindExtension(rewinder, self.sessions, self.turns.owner)
        """Going back to an earlier prompt: the `_acpkit/session/*` extension and fork at a prompt."""
        self._serves_delete = False
        self._serves_logout = False
        self.served_remotely = False
        """Served by `acpkit serve` to clients elsewhere: `providers/set` is refused (it would let a client
        point the server's outgoing model calls at any address the server can reach)."""
        self.providers = ProviderSettings(
            runner.model_endpoints()
            if isinstance(runner, ModelEndpoints)
            else EndpointSupport(refusal="this agent's runner does not build its model from a client's endpoint")
        )
        """This connection's custom LLM endpoint (`providers/*`, unstable)."""
        self._serves_providers = False
        self.mcp_over_acp: McpOverAcp | None = None
        """The agent's end of MCP over ACP on this connection (`None` where the SDK's connection cannot be reached)."""
        self.auth = ConnectionAuth(self.options.auth)
        """This connection's authentication state (`AgentOptions.auth`); a transport that authenticated
        the connection itself calls `auth.grant(...)`."""
        self.protocol_version: int | None = None
        """The protocol version agreed in `initialize` (`None` before it)."""
        self.client_capabilities: dict[str, Any] = {}
        """The client's `clientCapabilities` as sent (wire JSON), for extension handlers."""
        self.client_info: dict[str, Any] | None = None
        """The client's `clientInfo` as sent (wire JSON), when it sent one."""
        limit_retained_memory()  # big blocks go back to the system when freed (glibc)

    def on_connect(self, conn: Client) -> None:
        """Called by the SDK with the connection to the client."""
        self.outbox.connect(conn)
        # The SDK does not route `session/delete`: advertise it only when the route could be added.
        self._serves_delete = route_session_delete(conn, self)
        # Nor `logout`: served (and advertised) where the agent has authentication to end.
        self._serves_logout = self.options.auth is not None and route_logout(conn, self)
        # Prompt blocks reach our own parser as sent, for its precise errors (see `route_wire_prompt`).
        route_wire_prompt(conn, self)
        route_wire_initialize(conn, self)  # keeps `clientCapabilities.session.compaction` (unstable)
        # `$/cancel_request` both ways (the SDK has no request cancellation).
        self.outbox.requests = tracked(conn, self._peer_cancel)
        # MCP over ACP (unstable): the SDK has the models but neither sends nor routes `mcp/*`.
        self.mcp_over_acp = self._mcp_bridge(conn)
        # Custom LLM endpoints (unstable): nor `providers/*`.
        self._serves_providers = route_raw(
            conn,
            {
                PROVIDERS_LIST: self._providers(self.providers.list),
                PROVIDERS_SET: self._providers(self.providers.set),
                PROVIDERS_DISABLE: self._providers(self.providers.disable),
            },
        )

    def _providers(self, answer: Callable[[Any], dict[str, Any]]) -> Callable[[Any], Awaitable[dict[str, Any]]]:
        """A `providers/*` handler: served to clients that opted into `providers` (-32601 for others)."""

        async def handle(params: Any) -> dict[str, Any]:
            if not self.client.uses("providers"):
                raise RequestError.method_not_found(f"providers/{answer.__name__}")
            await self.auth.require(f"providers/{answer.__name__}")
            if self.served_remotely and answer.__name__ == "set":
                raise RequestError.invalid_request(
                    {
                        "reason": "a remote agent does not send its model calls to an endpoint its client names: "
                        "they would leave from the server's network (providers/set is for an agent on the "
                        "client's own machine)"
                    }
                )
            result = answer(params)
            self.sessions.llm_endpoint = self.providers.endpoint
            return result

        return handle

    def _mcp_bridge(self, conn: Client) -> McpOverAcp | None:
        request, notify = raw_requester(conn), raw_notifier(conn)
        if request is None or notify is None:
            return None
        bridge = McpOverAcp(request, notify)

        async def message(params: Any) -> Any:
            if not self.client.uses("mcpOverAcp"):
                raise RequestError.method_not_found(MCP_MESSAGE)
            return await bridge.on_message(params)

        async def notification(params: Any) -> None:
            if self.client.uses("mcpOverAcp"):
                await bridge.on_notification(params)

        return bridge if route_raw(conn, {MCP_MESSAGE: message}, {MCP_MESSAGE: notification}) else None

    def _peer_cancel(self, request: Incoming) -> Literal["handled", "cancel", "ignore"]:
        """The client's `$/cancel_request`: a prompt ends its turn `cancelled`; a delete or close finishes."""
        if request.method == "session/prompt":
            return "handled" if self.turns.cancel_request(request.task) else "cancel"
        if request.method in _FINISHED_WHEN_CANCELLED:
            return "ignore"
        return "cancel"

    def _offers_providers(self) -> bool:
        return self._serves_providers and self.client.uses("providers") and self.providers.support.swappable

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

    async def _commands_update(self, session_id: str) -> AvailableCommandsUpdate:
        return await self.turns.commands_update(session_id)

    def _capabilities_meta(self, meta: dict[str, Any]) -> dict[str, Any] | None:
        """`agentCapabilities._meta`: `meta` (the extensions' and the unstable surfaces'), rewind's, re-attach's."""
        meta = dict(meta)
        if self.rewinds.rewinder.available:
            meta.update(rewind_capabilities())
        if self.sessions.turn_logs is not None:
            meta.update(reattach_capability())
        return meta or None

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
        unstable = negotiate_unstable(caps)
        advertised = ClientInfo(
            name=client_info.name if client_info else None,
            read_text_file=bool(fs and fs.read_text_file),
            write_text_file=bool(fs and fs.write_text_file),
            terminal=bool(caps.terminal),
            boolean_config_options=boolean,
            elicitation_form=bool(caps.elicitation and caps.elicitation.form is not None),
            elicitation_url=bool(caps.elicitation and caps.elicitation.url is not None),
            auth_terminal=bool(caps.auth and caps.auth.terminal),
            unstable=unstable,
            remove_file=_removes_files(caps),
        )
        self.sessions.client = client_info_for(advertised, self.options.host_tools)  # what the tools may use
        self.auth.client = client_info.name if client_info else None
        self.auth.terminal = self.client.auth_terminal
        mcp_over_acp = self.mcp_over_acp is not None and self.client.uses("mcpOverAcp")
        self.sessions.mcp_connector = self.mcp_over_acp.connect if mcp_over_acp and self.mcp_over_acp else None
        warm_sdk_models()  # the SDK models a session uses, built in the background (once per process)
        # The warm-ups start once this answer is written (the SDK writes it in this task's step).
        asyncio.get_running_loop().call_soon(warmup_initialized)
        rc = self.capabilities
        meta = {**(self.options.extensions.capabilities() if self.options.extensions else {})}
        meta.update(unstable_answer(unstable) or {})
        version = protocol_version if protocol_version in SUPPORTED_PROTOCOL_VERSIONS else PROTOCOL_VERSION
        self.protocol_version = version
        self.client_capabilities = caps.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if client_info is not None:
            self.client_info = client_info.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return InitializeResponse(
            protocol_version=version,
            agent_info=Implementation(name=self.options.name, title=self.options.title, version=self.options.version),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=rc.image, audio=rc.audio, embedded_context=rc.embedded_context
                ),
                # `acp` (MCP over ACP) is unstable: advertised to clients that opted into `mcpOverAcp`.
                mcp_capabilities=McpCapabilities(http=rc.mcp_http, sse=rc.mcp_sse, acp=True if mcp_over_acp else None),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    delete=SessionDeleteCapabilities() if self._serves_delete else None,
                    # `fork` exists only in the unstable schema: advertised to clients that opted in.
                    fork=SessionForkCapabilities() if self.client.uses("sessionFork") else None,
                    additional_directories=SessionAdditionalDirectoriesCapabilities(),
                ),
                auth=AgentAuthCapabilities(logout=LogoutCapabilities()) if self._serves_logout else None,
                # `providers` is unstable: advertised to `providers` clients, for a runner that can swap its model.
                providers=ProvidersCapabilities() if self._offers_providers() else None,
                field_meta=self._capabilities_meta(meta),
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

    @boundary
    async def logout(self, **kwargs: Any) -> LogoutResponse:
        """End this connection's authenticated state (`Authentication.logout` runs first).

        Session requests then answer -32000 until a method succeeds again; open sessions stay open.
        """
        await self.auth.logout(kwargs)
        return LogoutResponse()

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
        with warmup_opening():
            session = await self.sessions.new(cwd, additional_directories, mcp_servers)
            self.outbox.later(session.id, [await self._commands_update(session.id)])
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
        after = resume_cursor(kwargs)  # `_meta["acpkit.resume"]`: re-attach (see `server/reattach.py`)
        with warmup_opening():
            session = await self.sessions.reopen(
                session_id, cwd, additional_directories, mcp_servers, replay=after is None
            )
            if after is None:
                await self.outbox.send(session_id, await self._commands_update(session_id))
            else:
                self._reattach(session_id, after)
            return LoadSessionResponse(
                modes=self.session_options.mode_state(session),
                config_options=self.session_options.wire_options(session, self.client),  # pyright: ignore[reportArgumentType]
                field_meta=await seq_meta(self.sessions, session_id),
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
        after = resume_cursor(kwargs)
        with warmup_opening():
            session = await self.sessions.reopen(session_id, cwd, additional_directories, mcp_servers, replay=False)
            if after is None:
                await self.outbox.send(session_id, await self._commands_update(session_id))
            else:
                self._reattach(session_id, after)
            return ResumeSessionResponse(
                modes=self.session_options.mode_state(session),
                config_options=self.session_options.wire_options(session, self.client),  # pyright: ignore[reportArgumentType]
                field_meta=await seq_meta(self.sessions, session_id),
            )

    def _reattach(self, session_id: str, after: int) -> None:
        if not follow(self.sessions, session_id, after):
            raise RequestError.invalid_params(
                {"details": f'this agent keeps no update log: send session/load without _meta["{RESUME_META}"]'}
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
        """Copy a stored session (state, transcript, mode, options) into a new one.

        With `_meta["acpkit.fork"]` = `{"prompt": N}` (or `{"messageId": id}`), the new session holds
        only what came before that prompt (see `server/rewind_extension.py`).
        """
        await self.auth.require("session/fork")
        point = fork_point(kwargs)
        with warmup_opening():
            if point is None:
                session = await self.sessions.fork(session_id, cwd, additional_directories, mcp_servers)
            else:
                session = await self.rewinds.rewinder.fork(
                    session_id,
                    cwd,
                    additional_directories,
                    mcp_servers,
                    number=point.prompt,
                    message_id=point.message_id,
                )
            self.outbox.later(session.id, [await self._commands_update(session.id)])
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

        The runner forgets its own data first ([`SessionDeleter`][acpkit_core.runner.protocols.SessionDeleter]:
        checkpoints), then the store drops the session, its state and its transcript. An unknown id
        succeeds with nothing to delete (ACP: SHOULD succeed silently).
        """
        await self.auth.require("session/delete")
        await self.sessions.delete(session_id)
        return DeleteSessionResponse()

    async def shutdown(self) -> None:
        """Close every open session (hooks) and the store; called when the connection ends."""
        await self.sessions.shutdown()
        if self.mcp_over_acp is not None:
            await self.mcp_over_acp.close()
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
        it), or the SDK's models when the SDK validated them. The request's `_meta` arrives as
        keywords; its `acpkit` options are read by [`prompt_options`][acpkit_core.prompt.meta.prompt_options].
        A prompt over `max_prompt_bytes` is -32602; a turn whose runner raised answers -32603
        `The agent failed: <cause>` after it was recorded.
        """
        await self.auth.require("session/prompt")
        return await self.turns.prompt(session_id, prompt, kwargs)  # `_meta` keys: the client's trace context

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """`session/cancel`: end the running turn with `cancelled` (a notification; never an error)."""
        self.turns.cancel(session_id)

    # --- extensions ---------------------------------------------------------------------------------

    async def extension_context(self, params: dict[str, Any]) -> ExtensionContext:
        """What an extension handler is told about this connection, and the session `params["sessionId"]` names.

        Naming a session needs what any session request needs (authentication, when required), and
        the session must be this principal's: otherwise -32000 / -32002.
        """
        session = None
        session_id = params.get("sessionId")
        if session_id is not None:
            if not isinstance(session_id, str):
                raise RequestError.invalid_params({"sessionId": "must be a string (a session id)"})
            await self.auth.require("an extension call naming a session")
            live = self.sessions.open_session(session_id)
            session = live.session if live is not None else (await self.sessions.stored(session_id)).session
        return ExtensionContext(
            client=self.client,
            client_capabilities=self.client_capabilities,
            client_info=self.client_info,
            protocol_version=self.protocol_version,
            principal=self.sessions.principal,
            session=session,
        )

    @boundary
    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """An `_`-prefixed request (`method` without the `_`): the rewind extension
        (`_acpkit/session/prompts`, `_acpkit/session/rewind`), `AgentOptions.extensions`, else -32601."""
        if self.rewinds.serves(method):
            await self.auth.require(f"_{method}")
            return await self.rewinds.call(method, params)
        if self.options.extensions is None:
            raise RequestError.method_not_found(f"_{method}")
        return await self.options.extensions.call(method, params, self.extension_context)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """An `_`-prefixed notification: `AgentOptions.extensions`, else dropped (a notification has no answer)."""
        if self.options.extensions is not None:
            await self.options.extensions.notify(method, params, self.extension_context)


def _removes_files(caps: ClientCapabilities) -> bool:
    """The client advertised the `_acpkit/fs/remove_file` extension (`_meta["acpkit.fs"].removeFile`)."""
    meta: dict[str, Any] = caps.field_meta or {}
    fs: object = meta.get("acpkit.fs")
    return isinstance(fs, dict) and cast(dict[str, Any], fs).get("removeFile") is True
