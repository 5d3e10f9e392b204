"""A remote client transport that reconnects by itself and re-attaches, so the client above sees no gap.

[`ResumingTransport`][acpkit_core.remote.resume.ResumingTransport] wraps the SDK's WebSocket or
Streamable HTTP transport. It remembers what a reconnect needs (the `initialize` request, each
session's `cwd`, the number of the last update seen in each session, the prompts waiting for
their answer) and, when the connection drops, reconnects with backoff, sends `initialize` again,
and re-attaches every session waiting for a turn's answer with `session/resume` carrying `_meta["acpkit.resume"] =
{"after": N}`. The server then sends what the client missed, in order; updates already seen are
dropped by their number; a permission question asked again is answered from the answer the client
already gave (or passed on once); and `_acpkit/turn_ended` becomes the answer to the waiting
`session/prompt`, under its original id. Any other request that went out on the dropped
connection and got no answer is sent again on the new one. The connection above it (the SDK's,
`acpkit bridge`'s editor) sees one unbroken conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import uuid
from typing import Any, Final, cast

from ..server.turn_log import PROMPT_META, RESUME_META, SEQ_META, TURN_ENDED
from .client import open_transport

__all__ = ["ResumingTransport"]

logger = logging.getLogger("acpkit_core.remote")

_INTERNAL: Final = "acpkit-resume-"
"""Prefix of the ids of the requests the transport sends itself (never seen above it)."""


class RefusedResume(Exception):
    """The server refused to re-attach a session (its JSON-RPC error)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error


def _params(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return cast("dict[str, Any]", params) if isinstance(params, dict) else {}


class ResumingTransport:
    """The SDK's remote transport to `url`, reconnected and re-attached whenever its connection drops."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        max_attempts: int = 30,
        first_delay: float = 0.05,
        max_delay: float = 2.0,
    ) -> None:
        self.url = url
        self.token = token
        self.max_attempts = max_attempts
        """Reconnect attempts before giving up (the connection above then ends)."""
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.reconnects = 0
        """How many times the connection was re-established."""
        self.last_seq: dict[str, int] = {}
        """The number of the last update seen, by session."""
        self._inner: Any = None
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._ready = asyncio.Event()
        self._closed = False
        self._ids = itertools.count(1)
        self._internal: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._init: dict[str, Any] | None = None
        self._requests: dict[Any, dict[str, Any]] = {}
        """The client's requests waiting for their answer, by id."""
        self._sessions: dict[str, dict[str, Any]] = {}
        """Each known session's `cwd` and MCP servers (what `session/resume` needs)."""
        self._prompts: dict[str, Any] = {}
        """The id of the `session/prompt` waiting for its answer, by session."""
        self._asked: dict[Any, tuple[str, str]] = {}
        """Permission questions passed to the client, not answered yet: id -> (session, tool call)."""
        self._open_asks: dict[tuple[str, str], Any] = {}
        self._answers: dict[tuple[str, str], dict[str, Any]] = {}
        """The client's answers to permission questions of running turns (a question asked again gets it)."""
        self._alias: dict[Any, Any] = {}
        """A question asked again while the client still considers the first: the first's id -> the new id."""
        self._resuming: set[str] = set()
        self._pump: asyncio.Task[None] | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sent_at: dict[str, int] = {}
        """The last number seen in a session when its waiting prompt was sent."""
        self._dropped = False
        """The connection being re-attached dropped too (the attempt fails)."""
        self._generation = 0
        """Which connection is current (counts the ones opened, re-attached or not)."""
        self._sent_in: dict[Any, int] = {}
        """The connection each waiting request of the client went out on (its `_generation`)."""
        self.established = False
        """`initialize` was answered: from then on a dropped connection is re-established (before,
        a refusal or a drop is the caller's, as with the plain transport)."""

    async def start(self) -> ResumingTransport:
        """Connect (raises [`RemoteError`][acpkit_core.remote.RemoteError] as `open_transport` does)."""
        self._inner = await open_transport(self.url, token=self.token)
        self._pump = asyncio.ensure_future(self._read(self._inner))
        self._ready.set()
        return self

    # --- the client's side -----------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        """Send one message of the client (waits while reconnecting)."""
        message = self._outgoing(message)
        while not self._closed:
            await self._ready.wait()
            inner, generation = self._inner, self._generation
            try:
                await inner.send(message)
                if "method" in message and message.get("id") in self._requests:
                    self._sent_in[message["id"]] = generation
                return
            except Exception as exc:
                if self._closed or not self.established:
                    raise
                logger.info("sending to %s failed (%s): reconnecting", self.url, exc)
                self._lost(inner)
                if "method" not in message:  # an answer: a question still open is asked again
                    return
                if message.get("method") == "session/prompt":
                    return  # sent again on re-attach if (and only if) it never reached a turn
        raise ConnectionError("the remote connection is closed")

    async def receive(self) -> dict[str, Any] | None:
        """The next message for the client; `None` once the connection is closed for good."""
        return await self._queue.get()

    async def close(self) -> None:
        """Close for good."""
        self._closed = True
        for task in (self._pump, self._reconnecting):
            if task is not None:
                task.cancel()
        if self._inner is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._inner.close(), 10.0)
        if self._tasks:  # dropped connections being let go: what they hold is freed before this returns
            await asyncio.wait(set(self._tasks), timeout=10.0)
        self._queue.put_nowait(None)

    def _outgoing(self, message: dict[str, Any]) -> dict[str, Any]:
        method = message.get("method")
        request_id = message.get("id")
        if method is not None and request_id is not None:
            self._requests[request_id] = message
            params = _params(message)
            if method == "initialize":
                self._init = params
            elif method in ("session/load", "session/resume") and isinstance(params.get("sessionId"), str):
                self._sessions[params["sessionId"]] = params
            elif method == "session/prompt" and isinstance(params.get("sessionId"), str):
                # a key the server knows the prompt by: sent again after a reconnect, it is not run twice
                session: str = params["sessionId"]
                meta = cast("dict[str, Any]", params.get("_meta") or {})
                message = {**message, "params": {**params, "_meta": {**meta, PROMPT_META: uuid.uuid4().hex}}}
                self._requests[request_id] = message
                self._prompts[session] = request_id
                self._sent_at[session] = self.last_seq.get(session, 0)
        elif method is None and request_id is not None:  # the client's answer to the agent's request
            asked = self._asked.pop(request_id, None)
            if asked is not None:
                self._open_asks.pop(asked, None)
                if "result" in message:
                    self._answers[asked] = message["result"]
                alias = self._alias.pop(request_id, None)
                if alias is not None:
                    message = {**message, "id": alias}
        return message

    # --- the agent's side ------------------------------------------------------------------------

    async def _read(self, inner: Any) -> None:
        try:
            while True:
                message = await inner.receive()
                if message is None:
                    break
                if inner is not self._inner:
                    # A dropped connection's late messages (the SDK's HTTP transport may still read a
                    # session stream): what matters of them comes again, after the cursor.
                    return
                await self._incoming(message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.info("reading from %s failed (%s)", self.url, exc)
        if not self._closed:
            self._lost(inner)

    async def _incoming(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        method = message.get("method")
        if method is None:  # an answer
            if isinstance(request_id, str) and request_id.startswith(_INTERNAL):
                waiter = self._internal.pop(request_id, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(message)
                return
            request = self._settled(request_id)
            if request is not None and request.get("method") == "initialize" and "result" in message:
                self.established = True
            if request is None:
                return  # answered already (a prompt's turn answered through `_acpkit/turn_ended`)
            self._answered(request, message)
            self._queue.put_nowait(message)
            return
        params = _params(message)
        session = params.get("sessionId")
        if method == "session/update" and isinstance(session, str):
            meta = params.get("_meta")
            seq = cast("dict[str, Any]", meta).get(SEQ_META) if isinstance(meta, dict) else None
            if isinstance(seq, int):
                if seq <= self.last_seq.get(session, 0):
                    return  # seen before the connection dropped
                self.last_seq[session] = seq
            elif session in self._resuming:
                return  # what a re-attach sends beside the log (the client has it)
        elif method == TURN_ENDED and isinstance(session, str):
            self._turn_ended(session, params)
            return
        elif (
            method == "session/request_permission"
            and request_id is not None
            and isinstance(session, str)
            and self._asked_again(request_id, session, params)
        ):
            return
        self._queue.put_nowait(message)

    def _answered(self, request: dict[str, Any], answer: dict[str, Any]) -> None:
        method = request.get("method")
        params = _params(request)
        result = answer.get("result")
        result = cast("dict[str, Any]", result) if isinstance(result, dict) else {}
        if method == "session/new" and isinstance(result.get("sessionId"), str):
            self._sessions[result["sessionId"]] = params
        elif method == "session/prompt" and isinstance(params.get("sessionId"), str):
            session = params["sessionId"]
            if self._prompts.get(session) == request.get("id"):
                del self._prompts[session]
            self._forget_answers(session)
            meta = result.get("_meta")
            seq = cast("dict[str, Any]", meta).get(SEQ_META) if isinstance(meta, dict) else None
            if isinstance(seq, int):
                self.last_seq[session] = max(self.last_seq.get(session, 0), seq)
        elif method in ("session/load", "session/resume") and isinstance(params.get("sessionId"), str):
            meta = result.get("_meta")
            seq = cast("dict[str, Any]", meta).get(SEQ_META) if isinstance(meta, dict) else None
            if isinstance(seq, int) and not cast("dict[str, Any]", params.get("_meta") or {}).get(RESUME_META):
                self.last_seq[params["sessionId"]] = seq

    def _turn_ended(self, session: str, params: dict[str, Any]) -> None:
        seq = params.get("seq")
        if isinstance(seq, int):
            if seq <= self.last_seq.get(session, 0):
                return
            self.last_seq[session] = seq
        request_id = self._prompts.pop(session, None)
        self._forget_answers(session)
        if request_id is None:
            return
        self._settled(request_id)
        error = params.get("error")
        if isinstance(error, dict):
            self._queue.put_nowait({"jsonrpc": "2.0", "id": request_id, "error": error})
        else:
            self._queue.put_nowait({"jsonrpc": "2.0", "id": request_id, "result": params.get("response") or {}})

    def _asked_again(self, request_id: Any, session: str, params: dict[str, Any]) -> bool:
        """A permission question: `True` when it was handled here (asked before the connection dropped)."""
        tool_call = params.get("toolCall")
        call_id = cast("dict[str, Any]", tool_call).get("toolCallId") if isinstance(tool_call, dict) else None
        if not isinstance(call_id, str):
            return False
        key = (session, call_id)
        answer = self._answers.get(key)
        if answer is not None:  # the client answered it already: give that answer again
            self._spawn(self._send_quietly({"jsonrpc": "2.0", "id": request_id, "result": answer}))
            return True
        first = self._open_asks.get(key)
        if first is not None:  # the client still considers the first: its answer goes to this one
            self._alias[first] = request_id
            return True
        self._open_asks[key] = request_id
        self._asked[request_id] = key
        return False

    def _forget_answers(self, session: str) -> None:
        for key in [k for k in self._answers if k[0] == session]:
            del self._answers[key]

    # --- reconnecting ------------------------------------------------------------------------------

    def _lost(self, inner: Any) -> None:
        for waiter in self._internal.values():  # a re-attach in progress on it fails now (and is tried again)
            if not waiter.done():
                waiter.set_exception(ConnectionError("the connection dropped while re-attaching"))
        self._internal.clear()
        if self._reconnecting is not None and inner is self._inner:
            self._dropped = True  # the connection being re-attached: the attempt fails, another follows
        if not self.established and not self._closed:  # never connected: nothing to resume
            self._closed = True
            self._queue.put_nowait(None)
            return
        if self._closed or inner is not self._inner or self._reconnecting is not None:
            return
        self._ready.clear()
        self._inner = None  # from now on nothing read from it counts
        self._reconnecting = asyncio.ensure_future(self._reconnect(inner))

    async def _reconnect(self, old: Any) -> None:
        self._spawn(self._close_quietly(old))  # (the HTTP transport's DELETE may wait on the dead connection)
        if self._pump is not None and self._pump is not asyncio.current_task():
            self._pump.cancel()
        delay = self.first_delay
        for attempt in range(1, self.max_attempts + 1):
            inner: Any = None
            self._dropped = False
            try:
                inner = await open_transport(self.url, token=self.token)
                self._inner = inner
                self._generation += 1
                self._pump = asyncio.ensure_future(self._read(inner))
                await self._reattach(inner)
                if self._dropped or self._pump.done():
                    raise ConnectionError("the connection dropped while re-attaching")
                await self._resend_unanswered(inner)
            except Exception as exc:  # refused, unreachable, or the SDK transport's own errors (HTTP status, ...)
                logger.info("reconnect %d to %s failed: %s", attempt, self.url, exc)
                if inner is not None:
                    await self._close_quietly(inner)
            else:
                self.reconnects += 1
                self._reconnecting = None
                self._ready.set()
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_delay)
        logger.warning("could not reconnect to %s after %d attempts", self.url, self.max_attempts)
        self._reconnecting = None
        self._closed = True
        self._queue.put_nowait(None)

    async def _request(self, inner: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = f"{_INTERNAL}{next(self._ids)}"
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._internal[request_id] = waiter
        await inner.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        answer = await asyncio.wait_for(waiter, 30.0)
        error = answer.get("error")
        if isinstance(error, dict):
            if method == "session/resume":
                raise RefusedResume(cast("dict[str, Any]", error))
            raise ConnectionError(f"{method} failed on reconnect: {error}")
        return answer

    async def _reattach(self, inner: Any) -> None:
        """`initialize`, then every session with a prompt waiting re-attached after the last update seen."""
        if self._init is None:
            return
        await self._request(inner, "initialize", self._init)
        # Sessions waiting for a turn's answer re-attach; the others open on their next use.
        for session, opened in [(s, p) for s, p in self._sessions.items() if s in self._prompts]:
            params: dict[str, Any] = {
                "sessionId": session,
                "cwd": opened.get("cwd"),
                "mcpServers": opened.get("mcpServers") or [],
                "_meta": {RESUME_META: {"after": self.last_seq.get(session, 0)}},
            }
            self._resuming.add(session)
            try:
                answer = await self._request(inner, "session/resume", params)
            except RefusedResume as exc:  # gone meanwhile (deleted): its waiting prompt fails
                del self._sessions[session]
                request_id = self._prompts.pop(session, None)
                if request_id is not None:
                    self._settled(request_id)
                    self._queue.put_nowait({"jsonrpc": "2.0", "id": request_id, "error": exc.error})
                continue
            finally:
                self._resuming.discard(session)
            await self._resend_unstarted(inner, session, answer)

    def _settled(self, request_id: Any) -> dict[str, Any] | None:
        """Forget a request of the client that got its answer; the request, if it was waiting."""
        self._sent_in.pop(request_id, None)
        return self._requests.pop(request_id, None)

    async def _resend_unanswered(self, inner: Any) -> None:
        """Send again the client's requests that went out on a dropped connection and got no answer
        (their answer went to the dropped connection's stream, or was lost with it). Prompts are
        the re-attach's: a prompt is never run twice. A `session/new` whose answer was lost may
        leave one empty session behind on the server."""
        for request_id, sent in list(self._sent_in.items()):
            request = self._requests.get(request_id)
            if request is None:  # (answered: forgotten with it)
                continue
            if sent != self._generation and request.get("method") not in ("session/prompt", "initialize"):
                await inner.send(request)
                self._sent_in[request_id] = self._generation

    async def _resend_unstarted(self, inner: Any, session: str, answer: dict[str, Any]) -> None:
        """A prompt the server never started (its log has nothing after the cursor) is sent again."""
        request_id = self._prompts.get(session)
        if request_id is None:
            return
        result = answer.get("result")
        meta = cast("dict[str, Any]", result).get("_meta") if isinstance(result, dict) else None
        last = cast("dict[str, Any]", meta).get(SEQ_META) if isinstance(meta, dict) else None
        request = self._requests.get(request_id)
        before = self._sent_at.get(session, 0)
        # A turn writes its beginning to the log before anything else: nothing after `before` in the
        # log (nor seen here) means the prompt never reached a turn.
        if isinstance(last, int) and last <= before and self.last_seq.get(session, 0) <= before and request is not None:
            await inner.send(request)

    @staticmethod
    async def _close_quietly(transport: Any) -> None:
        """Let a dropped connection go without telling the server (a Streamable HTTP `DELETE` would end
        the turns the client is re-attaching to); what it held is freed."""
        abandon = getattr(transport, "abandon", None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(abandon() if abandon is not None else transport.close(), 10.0)

    async def _send_quietly(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(Exception):
            await self.send(message)

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
