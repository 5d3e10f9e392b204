"""`acpkit serve --child-per session -- CMD`: one child process per session, routed by `sessionId`.

A [`SessionChildConnection`][acpkit_core.remote.child_sessions.SessionChildConnection] is a
[`ChildConnection`][acpkit_core.remote.child.ChildConnection] whose first child (the *control*
child) answers `initialize`, `authenticate`, `logout`, `session/list` and whatever names no
session. Each `session/new`, `load`, `resume` and `fork` starts a fresh child for that session:

- the client's `initialize` (its capabilities as the first child saw them), and its `authenticate`
  if one succeeded, are replayed to the new child first and their answers kept from the client
  (which has its own); a new child that fails them answers the session request with `-32603`
  naming why, and is stopped;
- then the session request goes to it, and from its answer on, every message naming that
  `sessionId` goes to that child; `$/cancel_request` goes to the child that owns the request;
- the requests children send the client (files, terminals, permissions, elicitations) each get an
  id unique on the connection (children number theirs alike), and the client's answer goes back to
  the child that asked, under its own id;
- `session/close` (answered) stops the session's child; a session's child that exits by itself
  answers its unanswered requests with `-32603` and its sessions are gone: later requests naming
  them are answered `-32603` without reaching any child. The connection goes on. The control
  child exiting ends the connection, as with one child per connection.

A session opening counts against `max_sessions` and the per-principal session quota from its
request on (not from its answer), so no client starts more children than its quota allows:
each connection runs at most one child more than its open (or opening) sessions.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Final, cast

from .child import AGENT_EXITED, CREATING, OPENING, ChildConnection, Pending, request_key
from .child_process import STDERR_TAIL, ChildProcess

__all__ = ["SessionChildConnection"]

logger = logging.getLogger("acpkit_core.remote")

GONE_SESSIONS: Final = 1024
"""How many sessions whose child exited a connection remembers, to answer their later requests."""
_REPLAY: Final = "acpkit-replay-"


class SessionChildConnection(ChildConnection):
    """One remote connection with a child process per session (`AgentCommand.child_per="session"`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._session_children: list[ChildProcess] = []
        self._by_session: dict[str, ChildProcess] = {}
        self._owner: dict[str, ChildProcess] = {}
        """The child serving each client request not answered yet, by key."""
        self._opening: set[str] = set()
        """Session requests (by key) not answered yet: they count as open sessions."""
        self._asked: dict[int, tuple[ChildProcess, Any]] = {}
        """The children's requests to the client, by the id the client sees: who asked, under which id."""
        self._asked_as: dict[tuple[int, str], int] = {}
        self._next_id = 0
        self._replays: dict[str, tuple[ChildProcess, asyncio.Future[dict[str, Any]]]] = {}
        """The handshake replayed to starting children, by id: the child, and its answer."""
        self._initialize: dict[str, Any] | None = None
        self._authenticating: dict[str, dict[str, Any]] = {}
        self._authenticated: dict[str, Any] | None = None
        self._gone: dict[str, str] = {}
        """Sessions whose child exited by itself: why."""

    @property
    def open_sessions(self) -> int:
        """Sessions open on this connection, and those opening (each has, or is getting, a child)."""
        return len(self._sessions) + len(self._opening)

    def _children(self) -> list[ChildProcess]:
        return [*super()._children(), *self._session_children]

    async def _stop_children(self) -> None:
        await asyncio.gather(*(c.stop(self.command.stop_seconds) for c in self._children()))

    def _child_for(self, session_id: str | None) -> ChildProcess | None:
        if session_id is not None and session_id in self._by_session:
            return self._by_session[session_id]
        return self._control

    # --- client -> children --------------------------------------------------------------------------

    async def _forward(self, message: dict[str, Any], pending: Pending) -> None:
        key = request_key(message["id"])
        method, session_id = pending.method, pending.session_id
        if method == "initialize":
            self._initialize = message
        elif method == "authenticate":
            self._authenticating[key] = message
        if method in OPENING and not (method != "session/fork" and session_id in self._by_session):
            self._opening.add(key)
            self._later(self._open(key, message))
            return
        if session_id is not None and session_id not in self._by_session and session_id in self._gone:
            await self._answer_gone(key, session_id)
            return
        child = self._child_for(session_id)
        if child is None or child.exited:
            await self._answer_gone(key, session_id)
            return
        self._owner[key] = child
        await child.write(message)

    async def _answer_gone(self, key: str, session_id: str | None) -> None:
        pending = self._pending.pop(key, None)
        if self._turns.pop(key, None) is not None and not self._turns:
            self._idle.set()
        why = self._gone.get(session_id or "", "its agent process has exited")
        data = {"method": pending.method if pending else None, "sessionId": session_id}
        await self.transport.send(
            {
                "jsonrpc": "2.0",
                "id": json.loads(key),
                "error": {"code": AGENT_EXITED, "message": f"session {session_id} is gone: {why}", "data": data},
            }
        )

    async def _open(self, key: str, message: dict[str, Any]) -> None:
        """Start the session's own child, replay the handshake to it, then send it the session request."""
        child = self._new_child(session=True)
        self._session_children.append(child)
        try:
            await child.start()
        except OSError as exc:
            await self._open_failed(key, child, f"it could not start: {exc.strerror or exc}")
            return
        if self._client_gone:  # the connection ended while it started
            await self._retire(child)
            return
        self._watch(child)
        for step in (self._initialize, self._authenticated):
            if step is None:
                continue
            failure = await self._replay(child, step)
            if failure is not None:
                await self._open_failed(key, child, failure)
                return
        self._owner[key] = child  # from here its exit answers the request
        if child.exited:
            await self._open_failed(key, child, f"it exited before the session request: {child.why}")
        else:
            await child.write(message)

    async def _replay(self, child: ChildProcess, request: dict[str, Any]) -> str | None:
        """Send `request` (the client's `initialize` or `authenticate`) again to `child`; why it failed."""
        self._next_id += 1
        replay_id = f"{_REPLAY}{self._next_id}"
        answer = asyncio.get_running_loop().create_future()
        self._replays[replay_id] = (child, answer)
        if child.exited:  # it ended before the answer could be waited for
            self._replays.pop(replay_id, None)
            return f"its {request['method']} failed: {child.why}"
        try:
            await child.write({**request, "id": replay_id})  # if it cannot take it, its end answers
            reply = await answer
        finally:
            self._replays.pop(replay_id, None)
        error: Any = reply.get("error")
        if error is None:
            return None
        said = cast("dict[str, Any]", error).get("message") if isinstance(error, dict) else error
        return f"its {request['method']} failed: {said}"

    async def _open_failed(self, key: str, child: ChildProcess, why: str) -> None:
        self._opening.discard(key)
        self._owner.pop(key, None)
        pending = self._pending.pop(key, None)
        method = pending.method if pending else "session/new"
        message = f"the agent process for this {method} failed: {why}"
        logger.warning("connection %s: %s", self.id, message)
        data = {"method": method, "exitCode": child.returncode, "stderr": child.stderr[-STDERR_TAIL:]}
        await self.transport.send(
            {"jsonrpc": "2.0", "id": json.loads(key), "error": {"code": AGENT_EXITED, "message": message, "data": data}}
        )
        await self._retire(child)

    async def _retire(self, child: ChildProcess) -> None:
        """Stop a session's child that serves no session any more."""
        if child in self._session_children:
            await child.stop(self.command.stop_seconds)
            if child in self._session_children:
                self._session_children.remove(child)

    async def _relay(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:  # the client's answer to a child's request: under the child's own id
            asked = self._asked.pop(message["id"], None) if isinstance(message.get("id"), int) else None
            if asked is None:
                logger.info("connection %s: an answer to no request of a child: dropped", self.id)
                return
            child, original = asked
            self._asked_as.pop((id(child), request_key(original)), None)
            await child.write({**message, "id": original})
            return
        params: Any = message.get("params")
        params = cast("dict[str, Any]", params) if isinstance(params, dict) else {}
        child: ChildProcess | None
        if method == "$/cancel_request":
            child = self._owner.get(request_key(params.get("requestId")), self._control)
        else:
            session_id = params.get("sessionId")
            child = self._child_for(session_id if isinstance(session_id, str) else None)
        if child is not None:
            await child.write(message)

    # --- children -> client --------------------------------------------------------------------------

    async def _to_client(self, child: ChildProcess, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None and "id" in message:
            replay = self._replays.get(message["id"]) if isinstance(message["id"], str) else None
            if replay is not None and replay[0] is child:
                if not replay[1].done():
                    replay[1].set_result(message)
                return  # the client had its own answer to this
            self._answered(message)
        elif "id" in message:  # the child's request: an id unique on the connection
            self._next_id += 1
            self._asked[self._next_id] = (child, message["id"])
            self._asked_as[(id(child), request_key(message["id"]))] = self._next_id
            message = {**message, "id": self._next_id}
        elif method == "$/cancel_request":
            params: Any = message.get("params")
            if isinstance(params, dict):
                asked = self._asked_as.get((id(child), request_key(cast("dict[str, Any]", params).get("requestId"))))
                if asked is not None:
                    message = {**message, "params": {**params, "requestId": asked}}
        await self.transport.send(message)

    def _answered(self, message: dict[str, Any]) -> None:
        key = request_key(message.get("id"))
        pending = self._pending.get(key)
        child = self._owner.pop(key, None)
        opening = key in self._opening
        self._opening.discard(key)
        super()._answered(message)
        if pending is None or child is None:
            return
        ok = "error" not in message
        result: Any = message.get("result")
        if pending.method == "authenticate":
            request = self._authenticating.pop(key, None)
            if ok and request is not None:
                self._authenticated = request
        elif pending.method in OPENING:
            created = cast("dict[str, Any]", result).get("sessionId") if isinstance(result, dict) else None
            session_id = created if pending.method in CREATING else pending.session_id
            if ok and isinstance(session_id, str):
                self._by_session[session_id] = child
                self._gone.pop(session_id, None)
                child.sessions.add(session_id)
            elif opening and child.session and not child.sessions:
                self._later(self._retire(child))
        elif pending.method == "session/close" and ok and pending.session_id is not None:
            self._by_session.pop(pending.session_id, None)
            child.sessions.discard(pending.session_id)
            if child.session and not child.sessions:
                self._later(self._retire(child))

    async def _child_gone(self, child: ChildProcess, reason: str | None) -> None:
        if not child.session:
            await super()._child_gone(child, reason)  # the first child: the connection ends with it
            return
        why = await child.ended(reason)
        for owner, replay in self._replays.values():
            if owner is child and not replay.done():
                replay.set_result({"error": {"message": why}})
        if self._client_gone:
            return
        if not child.stopping:
            logger.warning("connection %s: a session's agent process ended: %s", self.id, why)
        owed = [key for key, owner in self._owner.items() if owner is child]
        for key in owed:
            self._owner.pop(key, None)
            self._opening.discard(key)
        await self._fail(owed, child, why)
        for session_id in child.sessions:
            self._by_session.pop(session_id, None)
            self._sessions.discard(session_id)
            if not child.stopping:
                self._gone[session_id] = why
        while len(self._gone) > GONE_SESSIONS:
            del self._gone[next(iter(self._gone))]
        child.sessions.clear()
        for asked, (owner, original) in list(self._asked.items()):
            if owner is child:
                del self._asked[asked]
                self._asked_as.pop((id(child), request_key(original)), None)
        if child in self._session_children:
            self._session_children.remove(child)
