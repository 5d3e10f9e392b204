"""`AcpTestClient`: an ACP client for tests, over a real subprocess or an in-process socket pair."""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import acp
from acp import PROTOCOL_VERSION, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AcpMcpServer,
    AudioContentBlock,
    AuthCapabilities,
    BooleanConfigOptionCapabilities,
    ClientCapabilities,
    ClientSessionCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
    EmbeddedResourceContentBlock,
    FileSystemCapabilities,
    ForkSessionResponse,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    RequestPermissionRequest,
    ResourceContentBlock,
    ResumeSessionResponse,
    SessionConfigOptionsCapabilities,
    SetSessionConfigOptionResponse,
    TextContentBlock,
)

from ..client.local_host import LocalClientHost
from ..runner.unstable import UNSTABLE_META_KEY
from ..server._sdk import observe_wire, route_unstable_updates, tracked
from ..server.requests import CancelRecord, RequestId, RequestTracker
from .mcp_server import ClientMcp
from .results import PromptResult

if TYPE_CHECKING:
    from ..server import AcpAgent
from .answers import ClientAnswers, ElicitationAnswer, PermissionAnswer, WireMessage, wire_mcp_server

__all__ = ["AcpTestClient", "PromptBlock"]

STREAM_LIMIT = 50 * 1024 * 1024

PromptBlock: TypeAlias = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)


class AcpTestClient(ClientAnswers):
    """An ACP client that records everything and answers the agent from a script.

    Use [`spawn`][acpkit_core.testing.AcpTestClient.spawn] for an agent command over real
    stdio, [`connect_url`][acpkit_core.testing.AcpTestClient.connect_url] for a remote agent, or
    [`connect`][acpkit_core.testing.AcpTestClient.connect] for an `AcpAgent` in this
    process. Files and terminals are served for real, from `root` (a temporary directory by
    default).
    """

    def __init__(
        self,
        *,
        root: str | Path | None = None,
        permission_answers: PermissionAnswer = (),
        fs: bool = True,
        fs_read: bool | None = None,
        fs_write: bool | None = None,
        terminal: bool = True,
        boolean_options: bool = False,
        elicitation: bool = False,
        elicitation_url: bool = False,
        elicitation_answers: ElicitationAnswer = (),
        auth_terminal: bool = False,
        unstable: bool | Sequence[str] = False,
        remove_files: bool | None = None,
    ) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if root is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="acpkit-client-")
            root = self._tmp.name
        self.root = Path(root).resolve()
        """Directory served as the client's workspace (the default session cwd)."""
        self.permission_answers: PermissionAnswer = permission_answers
        """How to answer `session/request_permission`; a list is consumed in order (default `allow_once`)."""
        self.fs = fs
        """Advertise and serve `fs/read_text_file` and `fs/write_text_file`."""
        self.fs_read = fs if fs_read is None else fs_read
        """Advertise `fs.readTextFile` (default: as `fs`)."""
        self.fs_write = fs if fs_write is None else fs_write
        """Advertise `fs.writeTextFile` (default: as `fs`)."""
        self.terminal = terminal
        """Advertise and serve `terminal/*`."""
        self.boolean_options = boolean_options
        """Advertise boolean config options."""
        self.elicitation = elicitation
        """Advertise and serve `elicitation/create` in form mode."""
        self.elicitation_url = elicitation_url
        """Advertise and serve `elicitation/create` in URL mode (and `elicitation/complete`)."""
        self.auth_terminal = auth_terminal
        """Advertise `auth.terminal` (the client can run `terminal` authentication methods)."""
        self.unstable: bool | Sequence[str] = unstable
        """Opt into unstable surfaces (`clientCapabilities._meta["acpkit.unstable"]`): `True` for all
        the agent offers, or their names (`["promptUsage"]`); `False` is a plain v1 client."""
        self.completed_elicitations: list[str] = []
        """The `elicitationId` of every `elicitation/complete` received, in order."""
        self.wire: list[WireMessage] = []
        """Every raw JSON-RPC message of the connection, in order (`("sent" | "received", message)`)."""
        self.tracker: RequestTracker | None = None
        """Requests in flight both ways (`$/cancel_request`), once connected."""
        self.elicitation_answers: ElicitationAnswer = elicitation_answers
        """How to answer `elicitation/create`; a list is consumed in order (it declines once exhausted)."""
        self.remove_files = fs if remove_files is None else remove_files
        """Advertise and serve the `_acpkit/fs/remove_file` extension (by default when `fs` is on)."""
        self.elicitations: list[dict[str, Any]] = []
        """The params of every `elicitation/create` received (wire JSON)."""
        self.updates: dict[str, list[Any]] = {}
        """Every `session/update` by session id, in order (schema models)."""
        self.permission_requests: list[RequestPermissionRequest] = []
        """Every permission request received."""
        self.requests: list[tuple[str, dict[str, Any]]] = []
        """Every agent-to-client request as `(method, params)`, in order."""
        self.host = LocalClientHost(cwd=self.root, shell=False)
        """Serves the agent's file and terminal requests from the real disk and real subprocesses."""
        self.conn: ClientSideConnection | None = None
        """The SDK connection (set inside `spawn`/`connect`)."""
        self.process: asyncio.subprocess.Process | None = None
        """The agent process (with `spawn`)."""
        self.stderr = ""
        """What the agent process wrote to stderr so far (with `spawn`)."""
        self.init: InitializeResponse | None = None
        """The last `initialize` answer."""
        self.last_session: NewSessionResponse | ForkSessionResponse | None = None
        """The last `session/new` or `session/fork` answer."""
        self._answer_index = 0
        self._elicitation_index = 0
        self._cancel_events: dict[str, asyncio.Event] = {}
        self.mcp = ClientMcp()
        """The MCP servers this client serves over ACP (MCP over ACP, unstable): see `serve_mcp`."""

    # --- connecting ------------------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def spawn(
        cls,
        command: str,
        *args: str,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        **options: Any,
    ) -> AsyncGenerator[AcpTestClient]:
        """Start `command` and talk ACP over its stdin/stdout.

        The child gets the SDK's trimmed environment, `ACPKIT_STATE_DIR` (when set here) and `env`.
        """
        client = cls(**options)
        merged = {k: os.environ[k] for k in ("ACPKIT_STATE_DIR", "PYTHONPATH") if k in os.environ}
        merged.update(env or {})
        try:
            async with acp.spawn_agent_process(
                cast(acp.Client, client),  # serves only what a test needs
                command,
                *args,
                env=merged,
                cwd=cwd,
                transport_kwargs={"limit": STREAM_LIMIT},
                use_unstable_protocol=True,
            ) as (conn, process):
                client._attach(conn)
                client.process = process
                drain = asyncio.ensure_future(client._drain_stderr(process))
                try:
                    yield client
                finally:
                    await client.mcp.close()
                    await client.host.close()
                    await conn.close()
                drain.cancel()
        finally:
            client._cleanup()

    async def _drain_stderr(self, process: asyncio.subprocess.Process) -> None:
        if process.stderr is None:
            return
        while line := await process.stderr.readline():
            self.stderr += line.decode("utf-8", "replace")

    @classmethod
    @asynccontextmanager
    async def connect(cls, agent: AcpAgent, **options: Any) -> AsyncGenerator[AcpTestClient]:
        """Serve `agent` in this process over a socket pair and connect to it."""
        from ..server import serve_streams

        client = cls(**options)
        a, b = socket.socketpair()
        agent_reader, agent_writer = await asyncio.open_connection(sock=a, limit=STREAM_LIMIT)
        client_reader, client_writer = await asyncio.open_connection(sock=b, limit=STREAM_LIMIT)
        server = asyncio.ensure_future(serve_streams(agent, agent_reader, agent_writer))
        conn = acp.connect_to_agent(cast(acp.Client, client), client_writer, client_reader, use_unstable_protocol=True)
        client._attach(conn)
        try:
            yield client
        finally:
            await client.mcp.close()
            await client.host.close()
            client_writer.close()
            await conn.close()
            try:
                await asyncio.wait_for(server, timeout=5)
            except TimeoutError:
                server.cancel()
            agent_writer.close()
            client._cleanup()

    @classmethod
    @asynccontextmanager
    async def connect_url(
        cls, url: str, *, token: str | None = None, reconnect: bool = False, **options: Any
    ) -> AsyncGenerator[AcpTestClient]:
        """Connect to a remote agent (`acpkit serve`) by URL: `ws://` / `wss://` (WebSocket) or
        `http://` / `https://` (Streamable HTTP), with a bearer `token` if the server wants one.

        Needs the `serve` extra. The client's fs, terminal and permission answers work as over stdio.
        With `reconnect`, a dropped connection is re-established and its sessions re-attached, as
        `acpkit chat --url` does (see [`open_remote`][acpkit_core.remote.open_remote]).
        """
        from ..remote.connect import open_remote

        client = cls(**options)
        try:
            async with open_remote(client, url, token=token, reconnect=reconnect) as conn:
                client._attach(conn)
                try:
                    yield client
                finally:
                    await client.mcp.close()
                    await client.host.close()
        finally:
            client._cleanup()

    def _attach(self, conn: ClientSideConnection) -> None:
        """Use `conn`: record its raw messages and track its requests both ways (`$/cancel_request`)."""
        self.conn = conn

        def record(event: Any) -> None:
            self.wire.append(("sent" if event.direction.value == "outgoing" else "received", event.message))

        observe_wire(conn, record)
        self.tracker = tracked(conn)
        self.mcp.attach(conn)
        route_unstable_updates(conn)  # notices, compaction updates, a tool call's `name` (see `unstable_updates`)

    def serve_mcp(self, server: Any, *, name: str | None = None, server_id: str | None = None) -> AcpMcpServer:
        """Serve an MCP server to the agent through the ACP connection (MCP over ACP, unstable).

        `server` is an in-process MCP server (the `mcp` package's `MCPServer`, or a low-level
        `Server`) or a [`StdioMcpServer`][acpkit_core.runner.types.StdioMcpServer] started as a subprocess
        on each `mcp/connect`. Returns the `mcpServers` entry to pass to `new_session` (type `acp`,
        with a fresh `serverId`); the agent sees it only when this client opted into `mcpOverAcp`.
        """
        return self.mcp.add(server, name=name, server_id=server_id)

    def _cleanup(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    @property
    def c(self) -> ClientSideConnection:
        """The connection (raises outside `spawn`/`connect`)."""
        if self.conn is None:
            raise RuntimeError("AcpTestClient is not connected: use `async with AcpTestClient.spawn(...)`")
        return self.conn

    # --- agent methods -------------------------------------------------------------------------

    async def initialize(self, *, protocol_version: int = PROTOCOL_VERSION, **kwargs: Any) -> InitializeResponse:
        """Send `initialize` with this client's capabilities."""
        elicitation = (
            ElicitationCapabilities(
                form=ElicitationFormCapabilities() if self.elicitation else None,
                url=ElicitationUrlCapabilities() if self.elicitation_url else None,
            )
            if self.elicitation or self.elicitation_url
            else None
        )
        unstable: Any = None
        if self.unstable is True:
            unstable = True
        elif self.unstable:
            unstable = {name: dict[str, Any]() for name in self.unstable}
        field_meta: dict[str, Any] = {}
        if unstable is not None:
            field_meta[UNSTABLE_META_KEY] = unstable
        if self.remove_files:
            field_meta["acpkit.fs"] = {"removeFile": True}
        caps = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=self.fs_read, write_text_file=self.fs_write),
            terminal=self.terminal,
            session=ClientSessionCapabilities(
                config_options=SessionConfigOptionsCapabilities(boolean=BooleanConfigOptionCapabilities())
            )
            if self.boolean_options
            else None,
            auth=AuthCapabilities(terminal=self.auth_terminal),
            elicitation=elicitation,
            field_meta=field_meta or None,
        )
        self.init = await self.c.initialize(
            protocol_version=protocol_version,
            client_capabilities=caps,
            client_info=Implementation(name="acpkit-test-client", version="0"),
            **kwargs,
        )
        return self.init

    async def new_session(
        self,
        cwd: str | Path | None = None,
        *,
        mcp_servers: Sequence[Any] = (),
        additional_directories: Sequence[str] = (),
    ) -> str:
        """`session/new`; returns the id (the full answer is `last_session`)."""
        response = await self.c.new_session(
            cwd=str(cwd or self.root),
            mcp_servers=[wire_mcp_server(s) for s in mcp_servers],
            additional_directories=list(additional_directories) or None,
        )
        self.last_session = response
        await self._settle(response.session_id)
        return response.session_id

    async def _settle(self, session_id: str, timeout: float = 0.5) -> None:
        """Wait (briefly) for the updates an agent sends right after creating a session."""
        updates = self.updates.setdefault(session_id, [])
        deadline = asyncio.get_running_loop().time() + timeout
        while not updates and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.002)

    async def prompt(
        self,
        prompt: str | Sequence[PromptBlock],
        *,
        session_id: str,
        attachments: Sequence[PromptBlock] = (),
        meta: Mapping[str, Any] | None = None,
    ) -> PromptResult:
        """Send `session/prompt`; returns the response with the updates and permission requests it caused.

        `meta` is the request's `_meta`: ACP Kit's prompt options (`acpkit_core.prompt.prompt_meta(model=...)`),
        the client's W3C trace context (`traceparent`), or both.
        """
        blocks: list[PromptBlock] = [text_block(prompt)] if isinstance(prompt, str) else list(prompt)
        blocks += list(attachments)
        seen = len(self.updates.setdefault(session_id, []))
        asked = len(self.permission_requests)
        self._cancel_events[session_id] = asyncio.Event()
        response = await self.c.prompt(session_id=session_id, prompt=blocks, **dict(meta or {}))
        # The SDK handles each notification in a task of its own and an answer at once. Over Streamable
        # HTTP the request's POST can return in the same loop pass that reads the turn's last updates and
        # its answer from the event stream: this task then runs before the tasks recording those updates.
        # One pass lets them run (each records its update without waiting).
        await asyncio.sleep(0)
        return PromptResult(
            response=response,
            updates=self.updates[session_id][seen:],
            permission_requests=[r for r in self.permission_requests[asked:] if r.session_id == session_id],
        )

    async def cancel(self, session_id: str) -> None:
        """Send `session/cancel` and answer this session's open permission requests `cancelled`."""
        event = self._cancel_events.get(session_id)
        if event is not None:
            event.set()
        await self.c.cancel(session_id=session_id)

    async def load_session(
        self, session_id: str, cwd: str | Path | None = None, *, mcp_servers: Sequence[Any] = ()
    ) -> tuple[LoadSessionResponse, list[Any]]:
        """`session/load`; returns the answer and the updates replayed before it."""
        seen = len(self.updates.setdefault(session_id, []))
        response = await self.c.load_session(
            session_id=session_id, cwd=str(cwd or self.root), mcp_servers=[wire_mcp_server(s) for s in mcp_servers]
        )
        await asyncio.sleep(0)
        return response, self.updates[session_id][seen:]

    async def resume_session(
        self, session_id: str, cwd: str | Path | None = None, *, mcp_servers: Sequence[Any] = ()
    ) -> ResumeSessionResponse:
        """`session/resume`."""
        return await self.c.resume_session(
            session_id=session_id, cwd=str(cwd or self.root), mcp_servers=[wire_mcp_server(s) for s in mcp_servers]
        )

    async def fork_session(
        self,
        session_id: str,
        cwd: str | Path | None = None,
        *,
        prompt: int | None = None,
        message_id: str | None = None,
    ) -> str:
        """`session/fork`; returns the new id. With `prompt` (or `message_id`), forks at that prompt:
        the new session holds what came before it (`_meta["acpkit.fork"]`)."""
        meta: dict[str, Any] = {}
        if prompt is not None or message_id is not None:
            point = {"prompt": prompt} if prompt is not None else {"messageId": message_id}
            meta["acpkit.fork"] = point
        response = await self.c.fork_session(session_id=session_id, cwd=str(cwd or self.root), mcp_servers=[], **meta)
        self.last_session = response
        await self._settle(response.session_id)
        return response.session_id

    async def list_sessions(self, *, cwd: str | Path | None = None, cursor: str | None = None) -> ListSessionsResponse:
        """`session/list`."""
        return await self.c.list_sessions(cwd=str(cwd) if cwd is not None else None, cursor=cursor)

    async def close_session(self, session_id: str) -> None:
        """`session/close`."""
        await self.c.close_session(session_id=session_id)

    async def delete_session(self, session_id: str) -> None:
        """`session/delete` (the SDK's client has no method for it: sent as a raw request)."""
        await self._raw("session/delete", {"sessionId": session_id})

    async def authenticate(self, method_id: str) -> None:
        """`authenticate` with one of the methods the agent advertised."""
        await self.c.authenticate(method_id=method_id)

    async def logout(self) -> None:
        """`logout` (the SDK's client has no method for it: sent as a raw request)."""
        await self._raw("logout", {})

    async def providers_list(self) -> dict[str, Any]:
        """`providers/list` (unstable; the SDK's client has no method for it): the agent's providers."""
        return await self._raw("providers/list", {})

    async def providers_set(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """`providers/set` (unstable) with these params (`providerId`, `apiType`, `baseUrl`, `headers`)."""
        return await self._raw("providers/set", dict(params))

    async def providers_disable(self, provider_id: str) -> dict[str, Any]:
        """`providers/disable` (unstable)."""
        return await self._raw("providers/disable", {"providerId": provider_id})

    async def _raw(self, method: str, params: dict[str, Any]) -> Any:
        """A request the SDK's client has no method for, through its JSON-RPC connection."""
        raw = self.c._conn  # pyright: ignore[reportPrivateUsage]
        return await raw.send_request(method, params)

    # --- request cancellation ($/cancel_request) -------------------------------------------------

    def pending_requests(self, method: str | None = None) -> list[RequestId]:
        """The ids of this client's requests still waiting for the agent's answer (of one `method`)."""
        if self.tracker is None:
            return []
        return [e.id for e in self.tracker.outgoing.values() if method is None or e.method == method]

    async def cancel_request(self, request_id: RequestId) -> None:
        """Send `$/cancel_request` for one of this client's pending requests (see `pending_requests`)."""
        if self.tracker is None:
            raise RuntimeError("cannot send $/cancel_request: the SDK's connection cannot be reached")
        await self.tracker.cancel(request_id)

    @property
    def cancels_received(self) -> list[CancelRecord]:
        """Every `$/cancel_request` the agent sent, with the method of the request it cancelled.

        The request itself was answered -32800 (its handler here was cancelled)."""
        return list(self.tracker.cancels_received) if self.tracker is not None else []

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        """`session/set_mode`."""
        await self.c.set_session_mode(session_id=session_id, mode_id=mode_id)

    async def set_config_option(
        self, session_id: str, config_id: str, value: str | bool
    ) -> SetSessionConfigOptionResponse:
        """`session/set_config_option` (boolean values are sent with `type: boolean`)."""
        if isinstance(value, bool):
            return await self.c.set_config_option(session_id=session_id, config_id=config_id, value=value)
        return await self.c.set_config_option(session_id=session_id, config_id=config_id, value=value)

    async def prompts(self, session_id: str) -> list[dict[str, Any]]:
        """The session's prompts (`_acpkit/session/prompts`): number, message id, text."""
        answer = await self.c.ext_method("acpkit/session/prompts", {"sessionId": session_id})
        return cast(list[dict[str, Any]], answer["prompts"])

    async def rewind(
        self,
        session_id: str,
        *,
        prompt: int | None = None,
        message_id: str | None = None,
        restore_files: bool | None = None,
        transcript: bool = False,
    ) -> dict[str, Any]:
        """`_acpkit/session/rewind`: back to before a prompt (the last one by default); its answer."""
        params: dict[str, Any] = {"sessionId": session_id, "transcript": transcript}
        if prompt is not None:
            params["prompt"] = prompt
        if message_id is not None:
            params["messageId"] = message_id
        if restore_files is not None:
            params["restoreFiles"] = restore_files
        return await self.c.ext_method("acpkit/session/rewind", params)

    # --- client methods (called by the agent) ------------------------------------------------------

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Serve `_acpkit/fs/remove_file` (when `remove_files`); any other extension answers -32601."""
        self.requests.append((f"_{method}", params))
        if method == "acpkit/fs/remove_file" and self.remove_files:
            await self.host.remove_file(str(params.get("path", "")))
            return {}
        raise acp.RequestError.method_not_found(f"_{method}")

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Record an update."""
        self.updates.setdefault(session_id, []).append(update)
