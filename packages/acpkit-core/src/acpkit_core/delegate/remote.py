"""`RemoteAgent`: start an ACP agent over stdio and talk to it as its client.

This is the framework-neutral half of "an ACP agent as a model": the adapters wrap it in a
pydantic-ai `Model` and a LangChain chat model. The agent process is started on first use, gets
`initialize` without file-system or terminal capabilities (it works in its own working directory,
with its own tools), and is ended by [`aclose`][acpkit_core.delegate.RemoteAgent.aclose]: its stdin
is closed, then it is terminated and killed if it does not exit (2 s each).

The connection belongs to the event loop that started it; using it from another loop raises
[`UserError`][acpkit_core.errors.UserError].
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self, TypeAlias, cast

from acp import PROTOCOL_VERSION, Client, RequestError, text_block
from acp.client.connection import ClientSideConnection
from acp.connection import StreamEvent
from acp.schema import (
    AllowedOutcome,
    AudioContentBlock,
    ClientCapabilities,
    DeniedOutcome,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    ResourceContentBlock,
    TextContentBlock,
    ToolCallUpdate,
)

from ..errors import AcpKitError, UserError
from ..runner.types import PermissionDecision
from ..server._sdk import tracked
from ._updates import ToolCallTracker, turn_end
from .events import RemoteEvent, RemoteToolCall

__all__ = [
    "ContentBlock",
    "PermissionAnswerer",
    "RemoteAgent",
    "RemoteAgentError",
    "RemotePermissions",
    "RemoteSession",
    "acpkit_run_command",
]

ContentBlock: TypeAlias = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)
"""An ACP prompt block, as sent to the remote agent."""

PermissionAnswerer: TypeAlias = Callable[[RemoteToolCall], Awaitable[PermissionDecision]]
"""Decides a permission request of the remote agent, given the tool call it asks about."""

RemotePermissions: TypeAlias = Literal["allow", "reject"] | PermissionAnswerer
"""How permission requests of the remote agent are answered: always allow, always reject, or a function."""

_STDIO_LIMIT = 50 * 1024 * 1024
_SHUTDOWN_SECONDS = 2.0


class RemoteAgentError(AcpKitError):
    """The remote agent failed: it could not start, exited, or answered a request with an error."""


def acpkit_run_command(target: str, *, store: str = "memory", args: Sequence[str] = ()) -> list[str]:
    """The command line that serves `target` (anything `acpkit run` accepts) with this Python interpreter.

    `store` defaults to `memory`: a delegate's sessions live as long as its process. It is passed as
    `--default-store`, so a target that is a ready ACP agent keeps its own store without a note.
    """
    return [sys.executable, "-m", "acpkit_core.cli", "run", target, "--default-store", store, *args]


class _DelegateClient:
    """The ACP client methods a remote agent may call: session updates and permission requests."""

    def __init__(self, owner: RemoteAgent) -> None:
        self._owner = owner

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        session = self._owner.sessions.get(session_id)
        if session is not None:
            session._receive(update)  # pyright: ignore[reportPrivateUsage]

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        session = self._owner.sessions.get(session_id)
        if session is None or session.cancelling:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        call = session._tracker.merge(tool_call)  # pyright: ignore[reportPrivateUsage]
        decision = await self._owner._decide(call)  # pyright: ignore[reportPrivateUsage]
        return _answer(decision, options)


def _answer(decision: PermissionDecision, options: list[PermissionOption]) -> RequestPermissionResponse:
    if decision.outcome == "cancelled":
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
    prefix = "allow" if decision.outcome == "allow" else "reject"
    kinds = [f"{prefix}_always", f"{prefix}_once"] if decision.always else [f"{prefix}_once", f"{prefix}_always"]
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option.option_id))
    # the agent offered no option of that kind: not answering would be a silent allow or a hang
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


class RemoteAgent:
    """An ACP agent process and the client connection to it.

    Use it as an async context manager, or call [`aclose`][acpkit_core.delegate.RemoteAgent.aclose];
    the process starts on the first [`new_session`][acpkit_core.delegate.RemoteAgent.new_session].
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        permissions: RemotePermissions = "reject",
        cancel_timeout: float = 5.0,
        observers: Sequence[Callable[[StreamEvent], None]] = (),
    ) -> None:
        if not command:
            raise UserError("RemoteAgent needs a command to start the agent, e.g. acpkit_run_command('my_agent.py')")
        self.command = list(command)
        """The agent command line."""
        self.cwd = Path(cwd).resolve() if cwd is not None else Path.cwd()
        """Working directory of the process and of its sessions."""
        self.env = dict(env or {})
        """Added to our environment for the process."""
        self.permissions: RemotePermissions = permissions
        """How the agent's permission requests are answered (`reject` by default)."""
        self.cancel_timeout = cancel_timeout
        """Seconds to wait for the agent to answer a cancelled prompt before giving up on it."""
        self.observers = list(observers)
        """SDK stream observers, called with every raw JSON-RPC message in both directions."""
        self.sessions: dict[str, RemoteSession] = {}
        """Open sessions by id."""
        self.info: InitializeResponse | None = None
        """The agent's `initialize` answer, once started."""
        self.process: asyncio.subprocess.Process | None = None
        """The agent process, once started."""
        self._conn: ClientSideConnection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._starting = asyncio.Lock()

    @property
    def agent_info(self) -> Implementation | None:
        """The agent's name, title and version, as it introduced itself."""
        return self.info.agent_info if self.info is not None else None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def _check_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop is not loop:
            raise UserError(
                "this RemoteAgent was started on another event loop; use one remote agent (one model) per loop"
            )

    async def start(self) -> InitializeResponse:
        """Start the process and send `initialize` (once); raise `RemoteAgentError` if it fails."""
        self._check_loop()
        async with self._starting:
            if self.info is not None:
                return self.info
            self._loop = asyncio.get_running_loop()
            try:
                process = await asyncio.create_subprocess_exec(
                    *self.command,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=None,
                    cwd=self.cwd,
                    env={**os.environ, **self.env},
                    limit=_STDIO_LIMIT,
                    start_new_session=True,
                )
            except OSError as exc:
                raise RemoteAgentError(f"cannot start the remote agent {self.command[0]!r}: {exc}") from exc
            assert process.stdin is not None and process.stdout is not None
            self.process = process
            kwargs: dict[str, Any] = {"observers": list(self.observers)} if self.observers else {}
            self._conn = ClientSideConnection(
                cast(Client, _DelegateClient(self)),
                process.stdin,
                process.stdout,
                use_unstable_protocol=True,
                **kwargs,
            )
            tracked(self._conn)  # `$/cancel_request` both ways with the remote agent
            try:
                self.info = await self._conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(),
                    client_info=Implementation(name="acpkit-delegate", title="ACP Kit delegate", version="2"),
                )
            except (ConnectionError, RequestError) as exc:
                await self.aclose()
                raise RemoteAgentError(f"the remote agent did not initialize: {_describe(exc)}") from exc
            return self.info

    async def new_session(self) -> RemoteSession:
        """Start the agent if needed and open a new session in `cwd`."""
        await self.start()
        assert self._conn is not None
        try:
            response = await self._conn.new_session(cwd=str(self.cwd), mcp_servers=[])
        except (ConnectionError, RequestError) as exc:
            raise RemoteAgentError(f"the remote agent refused session/new: {_describe(exc)}") from exc
        session = RemoteSession(self, self._conn, response.session_id)
        self.sessions[session.session_id] = session
        return session

    async def _decide(self, call: RemoteToolCall) -> PermissionDecision:
        if self.permissions == "allow":
            return PermissionDecision(outcome="allow")
        if self.permissions == "reject":
            return PermissionDecision(outcome="reject")
        return await self.permissions(call)

    async def aclose(self) -> None:
        """Close the connection and end the process (stdin closed, then terminate, then kill)."""
        conn, process = self._conn, self.process
        self._conn = None
        self.sessions.clear()
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        if process is not None:
            await _stop(process)
        self.info = None
        self._loop = None


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            process.stdin.close()
    for signal in ("wait", "terminate", "kill"):
        if signal == "terminate":
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        elif signal == "kill":
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            return
        try:
            await asyncio.wait_for(process.wait(), _SHUTDOWN_SECONDS)
            return
        except TimeoutError:
            continue


def _describe(exc: BaseException) -> str:
    if isinstance(exc, RequestError):
        return f"{exc} (code {exc.code})"
    return str(exc) or type(exc).__name__


_DONE = object()


class RemoteSession:
    """One ACP session of a [`RemoteAgent`][acpkit_core.delegate.RemoteAgent]: prompts run one at a time."""

    def __init__(self, agent: RemoteAgent, conn: ClientSideConnection, session_id: str) -> None:
        self.agent = agent
        """The agent this session belongs to."""
        self.session_id = session_id
        """The remote session id."""
        self.last_stop_reason: str | None = None
        """How the last prompt ended (`end_turn`, `cancelled`, ...), once one did."""
        self.cancelling = False
        """True while a cancelled prompt waits for the agent's answer."""
        self._conn = conn
        self._tracker = ToolCallTracker()
        self._queue: asyncio.Queue[object] | None = None
        self._lock = asyncio.Lock()

    def _receive(self, update: Any) -> None:
        if self._queue is None:
            return
        event = self._tracker.event(update)
        if event is not None:
            self._queue.put_nowait(event)

    @asynccontextmanager
    async def prompt(
        self, prompt: str | Sequence[ContentBlock], *, meta: Mapping[str, Any] | None = None
    ) -> AsyncGenerator[AsyncIterator[RemoteEvent]]:
        """Send `session/prompt` (with `meta` as its `_meta`) and yield the stream of its events,
        ending with a `RemoteTurnEnd`.

        Leaving the block before the stream ended (a `break`, an error, or the caller's task being
        cancelled) sends `session/cancel` and waits for the agent's answer (`cancel_timeout`).
        """
        self.agent._check_loop()  # pyright: ignore[reportPrivateUsage]
        blocks: list[ContentBlock] = [text_block(prompt)] if isinstance(prompt, str) else list(prompt)
        async with self._lock:
            queue: asyncio.Queue[object] = asyncio.Queue()
            self._queue = queue
            task = asyncio.ensure_future(
                self._conn.prompt(session_id=self.session_id, prompt=blocks, **dict(meta or {}))
            )
            task.add_done_callback(lambda _: queue.put_nowait(_DONE))
            try:
                yield self._events(queue, task)
            finally:
                try:
                    if not task.done():
                        await self._cancel(task)
                finally:
                    self._queue = None
                    self.cancelling = False

    async def _events(
        self, queue: asyncio.Queue[object], task: asyncio.Future[PromptResponse]
    ) -> AsyncIterator[RemoteEvent]:
        while True:
            item = await queue.get()
            if item is _DONE:
                break
            yield cast(RemoteEvent, item)
        # updates sent just before the answer may still be on their way through the SDK's tasks
        for _ in range(3):
            await asyncio.sleep(0)
        while not queue.empty():
            item = queue.get_nowait()
            if item is not _DONE:
                yield cast(RemoteEvent, item)
        try:
            response = task.result()
        except (ConnectionError, RequestError) as exc:
            raise RemoteAgentError(f"the remote agent failed the prompt: {self._failure(exc)}") from exc
        self.last_stop_reason = response.stop_reason
        yield turn_end(response)

    def _failure(self, exc: BaseException) -> str:
        process = self.agent.process
        if process is not None and process.returncode is not None:
            return f"it exited with code {process.returncode}"
        return _describe(exc)

    async def _cancel(self, task: asyncio.Future[PromptResponse]) -> None:
        """Send `session/cancel` and wait for the cancelled prompt's answer, even if our own task is cancelled."""
        self.cancelling = True
        try:
            with contextlib.suppress(ConnectionError, RequestError):
                await asyncio.shield(self._conn.cancel(session_id=self.session_id))
            done, _ = await asyncio.wait([task], timeout=self.agent.cancel_timeout)
            if done and not task.cancelled() and task.exception() is None:
                self.last_stop_reason = task.result().stop_reason
        finally:
            if not task.done():
                task.cancel()
            elif not task.cancelled():
                task.exception()  # retrieved, so asyncio does not log it

    async def cancel(self) -> None:
        """Send `session/cancel` for this session's running prompt (if any)."""
        with contextlib.suppress(ConnectionError, RequestError):
            await self._conn.cancel(session_id=self.session_id)
