"""`acpkit serve -- CMD ARGS...`: any stdio ACP agent behind the remote endpoint, one child process per connection.

The endpoint does everything it does for an ACP Kit agent (tokens and principals, the `Origin`
check, the message size limit, the budget of bytes in flight, the outbound buffer and its stall
rule, the idle limit, the per-principal quotas, the graceful stop); a
[`ChildConnection`][acpkit_core.remote.child.ChildConnection] then relays each valid client message
to its own child's stdin, one JSON line, and each line of the child's stdout back to the client:

- the child starts with the connection (in its own process group) and is stopped with it: its stdin
  is closed, then after `stop_seconds` its process group gets `SIGTERM`, then `SIGKILL`;
- a child that exits while the connection is open (a crash) answers every request it left
  unanswered with a JSON-RPC error naming its exit status and the end of its stderr, then the
  connection is closed (WebSocket close `1011`, or the end of the Streamable HTTP stream);
- the quotas are kept from the messages themselves: a session is open from the child's answer to
  `session/new`, `load`, `resume` or `fork` until its `session/close`, and a turn runs from
  `session/prompt` until its answer; one more than a limit is answered -32600 without reaching the child;
- [`host_tools`][acpkit_core.runner.host_tools] rewrites the `clientCapabilities` the child sees in
  `initialize` and decides where its file and terminal requests go.

Each connection has its own child, so sessions never cross principals; what `session/list` shows is
the child's own (whatever store it keeps). With `AgentCommand.child_per="session"`, each session gets
a child of its own besides (see [`child_sessions`][acpkit_core.remote.child_sessions]).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast

from acp import RequestError

from ..errors import UserError
from ..limits import MAX_MESSAGE_BYTES
from ..runner.host_tools import HOST_METHODS, HostTools, Workspace, check_host_tools, client_capabilities_for
from ..server.jsonrpc import error_response
from ..server.session_manager import Admission
from ..server.transport import WRITE_WINDOW_MS
from .budget import Account
from .child_process import STDERR_TAIL, ChildProcess
from .connection import Deliver, FrameTransport, RemoteConnection

__all__ = ["AgentCommand", "ChildConnection"]

logger = logging.getLogger("acpkit_core.remote")

WS_INTERNAL_ERROR: Final = 1011
"""WebSocket close code when the child exits while its connection is open."""
AGENT_EXITED: Final = -32603
"""JSON-RPC code of the answer to a request the child left unanswered when it exited (internal error)."""
OPENING: Final = frozenset({"session/new", "session/load", "session/resume", "session/fork"})
CREATING: Final = frozenset({"session/new", "session/fork"})


@dataclass(frozen=True, kw_only=True)
class AgentCommand:
    """A stdio ACP agent command, in any language, for [`RemoteServer`][acpkit_core.remote.RemoteServer].

    ```python
    AgentCommand(argv=["node", "agent.js"], host_tools="off")
    ```
    """

    argv: Sequence[str]
    """The program and its arguments (no shell)."""
    cwd: str | None = None
    """Where the child starts (`None`: the server's directory)."""
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    """Variables added to the server's environment for the child."""
    host_tools: HostTools = "client"
    """Who serves the child's file and terminal requests (see
    [`acpkit_core.runner.host_tools`][acpkit_core.runner.host_tools])."""
    allowed_paths: Sequence[str] = ()
    """The server's workspace with `host_tools="server"`."""
    max_message_bytes: int | None = None
    """The largest JSON-RPC message either way (`None`: as `AgentOptions.max_message_bytes`). A client
    message past it is answered -32600; a child line past it ends the child (it broke the limit)."""
    write_window_ms: float = WRITE_WINDOW_MS
    """Notifications from the child within this window share one write (as `AgentOptions.write_window_ms`)."""
    stop_seconds: float = 2.0
    """When its connection ends, how long the child has after its stdin is closed before `SIGTERM`
    (and as long again before `SIGKILL`)."""
    child_per: Literal["connection", "session"] = "connection"
    """`"connection"`: one child per connection serves all its sessions. `"session"`: the connection's
    first child answers `initialize`, `authenticate` and what names no session, and each session
    opened (`session/new`, `load`, `resume`, `fork`) gets a child of its own, stopped when the
    session closes (see "One child per session" in docs/remote.md)."""

    def check(self) -> tuple[str, ...]:
        """Refuse a command that cannot run (raises `UserError`); the workspace (with `host_tools="server"`)."""
        if not self.argv:
            raise UserError("no command to serve: give it after `--` (acpkit serve -- CMD ARGS...)")
        program = self.argv[0]
        if shutil.which(program, path=None if os.sep not in program else "") is None and not (
            os.sep in program and os.access(os.path.join(self.cwd or "", program), os.X_OK)
        ):
            raise UserError(f"cannot serve {program!r}: no such executable (on PATH, or as a path)")
        if self.cwd is not None and not os.path.isdir(self.cwd):
            raise UserError(f"the command's directory {self.cwd!r} does not exist")
        if self.stop_seconds < 0:
            raise UserError("AgentCommand.stop_seconds must not be negative")
        if self.child_per not in ("connection", "session"):
            raise UserError(f"AgentCommand.child_per must be 'connection' or 'session', not {self.child_per!r}")
        return check_host_tools(self.host_tools, self.allowed_paths)

    @property
    def message_limit(self) -> int:
        """The message size limit in bytes, with the default resolved."""
        return MAX_MESSAGE_BYTES.value(self.max_message_bytes)


def request_key(request_id: Any) -> str:
    return json.dumps(request_id)


@dataclass(slots=True)
class Pending:
    method: str
    session_id: str | None


class ChildConnection(RemoteConnection):
    """One remote client's connection relayed to its own child process (see the module's description)."""

    def __init__(
        self,
        command: AgentCommand,
        deliver: Deliver,
        *,
        principal: str | None,
        max_message_bytes: int,
        max_sessions: int | None,
        account: Account,
        kind: str = "websocket",
        peer: str | None = None,
        workspace: tuple[str, ...] = (),
    ) -> None:
        # Not `RemoteConnection.__init__`: there is no AcpAgent; the attributes the endpoint uses are set here.
        self.id = uuid.uuid4().hex
        self.principal = principal
        self.probe = None
        self.closing = None
        self.transport = FrameTransport(
            self._deliver, max_message_bytes=max_message_bytes, account=account, window_ms=command.write_window_ms
        )
        self.last_active = time.monotonic()
        self.sse = None
        self.outbound = None
        self.on_close = None
        self.silenced = False
        self.detached = False  # a child's turns end with its connection (no update log to re-attach to)
        self._deliver_to = deliver
        self._task = None
        self.command = command
        """What runs for this connection."""
        self._control: ChildProcess | None = None
        self._limit = max_message_bytes
        self._max_sessions = max_sessions
        self._admission: Admission | None = None
        self._sessions: set[str] = set()
        self._pending: dict[str, Pending] = {}
        """Client requests the child has not answered yet, by id."""
        self._turns: dict[str, str] = {}
        """Running `session/prompt` requests (by id): their session."""
        self._idle = asyncio.Event()
        self._idle.set()
        self._workspace = Workspace(workspace) if command.host_tools == "server" else None
        self._serving: set[asyncio.Task[None]] = set()
        self._client_gone = False

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        """The connection's (first) child (once started)."""
        return None if self._control is None else self._control.process

    # --- what the endpoint asks ------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while a request waits for the child's answer (a child's start-up can take seconds)."""
        return bool(self._pending)

    def has_session(self, session_id: str) -> bool:
        """True when the child opened `session_id` on this connection (and did not close it)."""
        return session_id in self._sessions

    @property
    def open_sessions(self) -> int:
        """Sessions the child opened on this connection."""
        return len(self._sessions)

    @property
    def running_turns(self) -> int:
        """`session/prompt` requests the child has not answered yet."""
        return len(self._turns)

    def admit(self, admission: Admission) -> None:
        """Check sessions and turns against `admission` before they reach the child."""
        self._admission = admission

    def follow(self, session_id: str, after: int) -> bool:
        """A served command keeps no update log."""
        return False

    def silence(self) -> None:
        """Send nothing more to the client (the child's messages to it are dropped)."""
        self.silenced = True

    def cancel_turns(self) -> int:
        """Send the child `session/cancel` for every running turn; how many there were."""
        for session_id in set(self._turns.values()):
            cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
            self._later(self._relay(cancel))
        return len(self._turns)

    async def turns_ended(self) -> None:
        """Until the child has answered every `session/prompt` (or exited)."""
        await self._idle.wait()

    # --- serving -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the child and relay both ways."""
        self._task = asyncio.create_task(self._serve(), name=f"acp-child-{self.id[:8]}")

    def _new_child(self, session: bool = False) -> ChildProcess:
        command = self.command
        label = f"connection {self.id}" + (" (a session's child)" if session else "")
        return ChildProcess(
            command.argv, cwd=command.cwd, env=command.env, label=label, session=session, principal=self.principal
        )

    def _watch(self, child: ChildProcess) -> None:
        """Read the child's stdout and stderr."""
        child.tasks = [
            asyncio.create_task(self._from_child(child), name=f"acp-child-out-{self.id[:8]}"),
            asyncio.create_task(child.read_stderr(), name=f"acp-child-err-{self.id[:8]}"),
        ]

    async def _serve(self) -> None:
        self._control = child = self._new_child()
        try:
            await child.start()
        except OSError as exc:
            why = f"the agent command could not start: {exc.strerror or exc}"
            logger.error("connection %s: %s", self.id, why)
            await self._refuse(why)
            return
        self._watch(child)
        try:
            while (message := await self.transport.receive()) is not None:
                await self._from_client(message)
        finally:
            self._client_gone = True
            await self._stop_children()
            readers = [task for c in self._children() for task in c.tasks]
            for task in (*readers, *self._serving):
                task.cancel()
            await asyncio.gather(*readers, *self._serving, return_exceptions=True)
            if self._workspace is not None:
                await self._workspace.close()
            await self.transport.close()

    def _children(self) -> list[ChildProcess]:
        """Every child of the connection."""
        return [self._control] if self._control is not None else []

    async def _stop_children(self) -> None:
        if self._control is not None:
            await self._control.stop(self.command.stop_seconds)

    async def _refuse(self, reason: str) -> None:
        """No child: answer the client's first request with `reason`, then close the connection."""
        message = await self.transport.receive()
        if message is not None and "method" in message and "id" in message:
            await self.transport.send(error_response(message["id"], AGENT_EXITED, reason))
        await self._close(reason)

    async def _close(self, reason: str) -> None:
        """Close the connection from this side (its socket or stream), its input ended."""
        self.closing = reason
        await self.transport.close()
        if self.on_close is not None and not self._client_gone:
            await self.on_close(WS_INTERNAL_ERROR, reason[:120])  # a close reason is at most 123 bytes
        self.transport.end()
        self.account.close()

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` beside the relay (ended with the connection)."""
        task = asyncio.ensure_future(work)
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)

    # --- client -> child -----------------------------------------------------------------------------

    async def _from_client(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        request_id = message.get("id")
        if not isinstance(method, str) or not isinstance(request_id, str | int):
            await self._relay(message)  # a notification, or the client's answer to the child
            return
        sent: Any = message.get("params")
        params: dict[str, Any] = dict(sent) if isinstance(sent, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
        refusal = self._refusal(method)
        if refusal is not None:
            await self.transport.send({"jsonrpc": "2.0", "id": request_id, "error": refusal})
            return
        if method == "initialize":
            params["clientCapabilities"] = client_capabilities_for(
                params.get("clientCapabilities"), self.command.host_tools
            )
            message = {**message, "params": params}
        elif method in OPENING and self._workspace is not None:
            cwd = params.get("cwd")
            if isinstance(cwd, str):
                params["cwd"] = self._workspace.session_cwd(cwd)
            if isinstance(params.get("additionalDirectories"), list):
                params["additionalDirectories"] = self._workspace.session_directories(
                    [d for d in params["additionalDirectories"] if isinstance(d, str)]
                )
            message = {**message, "params": params}
        session_id = params.get("sessionId")
        pending = Pending(method, session_id if isinstance(session_id, str) else None)
        self._pending[request_key(request_id)] = pending
        if method == "session/prompt":
            self._turns[request_key(request_id)] = pending.session_id or ""
            self._idle.clear()
        await self._forward(message, pending)

    async def _forward(self, message: dict[str, Any], pending: Pending) -> None:
        """A client request, checked: to the child that serves it."""
        await self._to_child(message)

    async def _relay(self, message: dict[str, Any]) -> None:
        """A client notification or answer: to the child it is for."""
        await self._to_child(message)

    def _refusal(self, method: str) -> dict[str, Any] | None:
        """The error object refusing a session or a turn past a limit (`None`: it may go on)."""
        try:
            if method in OPENING:
                held = self.open_sessions
                if self._max_sessions is not None and held >= self._max_sessions:
                    raise RequestError.invalid_request(
                        {
                            "details": f"this connection already has {held} open sessions, the "
                            f"server's limit (max_sessions_per_connection={self._max_sessions}): close one with "
                            "session/close, or open another connection"
                        }
                    )
                if self._admission is not None:
                    self._admission.session()
            elif method == "session/prompt" and self._admission is not None:
                self._admission.turn()
        except RequestError as error:
            return error.to_error_obj()
        return None

    async def _to_child(self, message: dict[str, Any], child: ChildProcess | None = None) -> None:
        child = child or self._control
        if child is not None:
            await child.write(message)

    # --- child -> client -----------------------------------------------------------------------------

    async def _from_child(self, child: ChildProcess) -> None:
        reason = await child.read(self._limit, lambda line: self._child_line(child, line))
        await self._child_gone(child, reason)

    async def _child_line(self, child: ChildProcess, line: bytes) -> None:
        if not line.strip():
            return
        try:
            parsed: Any = json.loads(line)
        except ValueError:
            logger.warning("connection %s: the agent wrote a line that is not JSON: %r", self.id, line[:120])
            return
        if not isinstance(parsed, dict):
            logger.warning("connection %s: the agent wrote JSON that is not a message: %r", self.id, line[:120])
            return
        message: dict[str, Any] = parsed  # pyright: ignore[reportUnknownVariableType]
        method = message.get("method")
        hosted = self.command.host_tools != "client"
        if hosted and isinstance(method, str) and method in HOST_METHODS and "id" in message:
            await self._host_request(child, method, message)
            return
        await self._to_client(child, message)

    async def _to_client(self, child: ChildProcess, message: dict[str, Any]) -> None:
        """A message of the child for the client (an answer is counted first)."""
        if "method" not in message and "id" in message:
            self._answered(message)
        await self.transport.send(message)

    def _answered(self, message: dict[str, Any]) -> None:
        """The child answered a client request: keep the sessions and turns counts."""
        key = request_key(message.get("id"))
        pending = self._pending.pop(key, None)
        if self._turns.pop(key, None) is not None and not self._turns:
            self._idle.set()
        if pending is None or "error" in message:
            return
        result: Any = message.get("result")
        if pending.method in CREATING:
            created = cast("dict[str, Any]", result).get("sessionId") if isinstance(result, dict) else None
            if isinstance(created, str):
                self._sessions.add(created)
        elif pending.method in OPENING and pending.session_id is not None:
            self._sessions.add(pending.session_id)
        elif pending.method == "session/close" and pending.session_id is not None:
            self._sessions.discard(pending.session_id)

    async def _host_request(self, child: ChildProcess, method: str, message: dict[str, Any]) -> None:
        """A file or terminal request of the child: to the server's workspace, or refused."""
        if self._workspace is None:
            await child.write(
                error_response(
                    message["id"],
                    -32601,
                    f"{method}: file and terminal tools are off on this server (host_tools='off')",
                )
            )
        else:  # a terminal wait must not hold the child's other messages
            self._later(self._serve_host(child, self._workspace, method, message))

    async def _serve_host(
        self, child: ChildProcess, workspace: Workspace, method: str, message: dict[str, Any]
    ) -> None:
        try:
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
            answer["result"] = await workspace.answer(method, message.get("params"))
        except RequestError as error:
            answer = {"jsonrpc": "2.0", "id": message["id"], "error": error.to_error_obj()}
        await child.write(answer)

    async def _child_gone(self, child: ChildProcess, reason: str | None) -> None:
        """The child closed its stdout (it exited, or broke the limit): answer what it left, then close."""
        why = await child.ended(reason)
        if self._client_gone:
            return  # the client left first: the connection is ending anyway
        logger.warning("connection %s: %s", self.id, why)
        await self._fail(list(self._pending), child, why)
        await self._close(why)

    async def _fail(self, keys: list[str], child: ChildProcess, why: str) -> None:
        """Answer the client requests `keys` with the error saying why `child` exited."""
        for key in keys:
            pending = self._pending.pop(key, None)
            if self._turns.pop(key, None) is not None and not self._turns:
                self._idle.set()
            if pending is None:
                continue
            data = {"method": pending.method, "exitCode": child.returncode, "stderr": child.stderr[-STDERR_TAIL:]}
            await self.transport.send(
                {"jsonrpc": "2.0", "id": json.loads(key), "error": {"code": AGENT_EXITED, "message": why, "data": data}}
            )
