"""A running turn's numbered log, so a client that loses its connection can re-attach and lose nothing.

`acpkit serve` numbers every update of a turn (`_meta["acpkit.seq"]` on each `session/update`)
and writes it, with the turn's questions to the client and its end, to the session's log in the
store ([`UpdateLogStore`][acpkit_core.store.UpdateLogStore]), a batch every few milliseconds.

When the connection running a turn drops, the turn goes on **detached**: what it says is only
logged, a permission question waits, and after `grace_seconds` without a client it is cancelled
(and recorded as any cancelled turn). A client of the same principal re-attaches with
`session/load` or `session/resume` carrying `_meta["acpkit.resume"] = {"after": N}`, on any
replica sharing the store: it gets every entry after `N` in order (a pending question is asked
again), then the turn's answer as the notification `_acpkit/turn_ended`
([`TURN_ENDED`][acpkit_core.server.turn_log.TURN_ENDED]). A turn running on another replica is
followed by polling the store; answers go back through it.

The log keeps the running turn, or the last turn once it ended: a turn's start drops the entries
of the turn before (so `/rewind` and `/clear`, which are turns, leave only their own).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, cast

from acp import RequestError
from acp.schema import PromptResponse, RequestPermissionResponse

from ..json_text import json_text
from ..store import UpdateLogStore

__all__ = [
    "DEFAULT_GRACE_SECONDS",
    "PROMPT_META",
    "RESUME_META",
    "SEQ_META",
    "TURN_ENDED",
    "Follower",
    "LoggedClient",
    "TurnLog",
    "TurnLogs",
    "answer_of_prompt",
    "prompt_key",
    "resume_cursor",
]

logger = logging.getLogger("acpkit_core.server")

SEQ_META: Final = "acpkit.seq"
"""`_meta` key of an update's number in its session's log (on each `session/update` of a turn)."""
RESUME_META: Final = "acpkit.resume"
"""`_meta` key of `session/load` / `session/resume` asking to re-attach: `{"after": N}`."""
PROMPT_META: Final = "acpkit.prompt"
"""`_meta` key of a `session/prompt`'s key (a string the client makes up): the same prompt sent again
after a reconnect is answered by the turn its first sending started, never run twice."""
TURN_ENDED: Final = "_acpkit/turn_ended"
"""The notification a re-attached client gets when the turn ends: `{"sessionId", "seq", "response"}`
(the `session/prompt` result) or `{"sessionId", "seq", "error"}` (its JSON-RPC error)."""
DEFAULT_GRACE_SECONDS: Final = 60.0
"""How long a turn whose client left waits for it to re-attach before it is cancelled."""
PENDING_BYTES: Final = 64 * 1024
"""Log entries held in memory before the store has them; past this the turn waits for the write."""
_PROMPT_MARK: Final = "prompt:"
"""Prefix of the named value holding the number of the beginning of the turn a prompt key started."""
FOLLOWER_MARK: Final = "follower"
"""The named value a follower on another replica refreshes (seconds since the epoch)."""


def resume_cursor(meta: dict[str, Any] | None) -> int | None:
    """The `after` of `_meta["acpkit.resume"]`, `None` without it; a bad one is -32602."""
    if not meta or RESUME_META not in meta:
        return None
    value: object = meta[RESUME_META]
    after: object = cast("dict[str, Any]", value).get("after", 0) if isinstance(value, dict) else None
    if not isinstance(after, int) or isinstance(after, bool) or after < 0:
        raise RequestError.invalid_params({"details": f'_meta["{RESUME_META}"] must be {{"after": N}}, N >= 0'})
    return after


def prompt_key(meta: Mapping[str, Any] | None) -> str | None:
    """The key of `_meta["acpkit.prompt"]`, `None` without one; a bad one is -32602."""
    if not meta or PROMPT_META not in meta:
        return None
    key: object = meta[PROMPT_META]
    if not isinstance(key, str) or not 0 < len(key) <= 200:
        details = f'_meta["{PROMPT_META}"] must be a string of 1 to 200 characters'
        raise RequestError.invalid_params({"details": details})
    return key


_STOPPED: Final = {
    "code": -32603,
    "message": "the turn stopped without an answer (its replica stopped?): load the session to see what it said",
}


def _is_end(entry: dict[str, Any]) -> bool:
    return "end" in entry or "error" in entry


class TurnLogs:
    """The turn logs of one server process, shared by its connections, and the re-attach settings."""

    def __init__(self, *, grace_seconds: float = DEFAULT_GRACE_SECONDS, poll_seconds: float = 0.05) -> None:
        self.grace_seconds = grace_seconds
        """How long a detached turn waits for its client (then it is cancelled)."""
        self.poll_seconds = poll_seconds
        """How often the store is read for a turn on another replica (and for answers to this one's)."""
        self.running: dict[str, TurnLog] = {}
        """The turns running in this process, by session id."""


class TurnLog:
    """The log of one turn running in this process."""

    def __init__(
        self,
        logs: TurnLogs,
        store: UpdateLogStore,
        session_id: str,
        *,
        cancel: Callable[[], None],
        flush_seconds: float,
        prompt_key: str | None = None,
    ) -> None:
        self.logs = logs
        self.prompt_key = prompt_key
        """The key the client gave the turn's prompt (written with the turn's beginning)."""
        self.started = False
        """The turn holds its session and its beginning is logged (a turn refused before has no entry)."""
        self.store = store
        self.session_id = session_id
        self.last = 0
        """The number of the last entry."""
        self.flushed = 0
        """The number of the last entry the store has."""
        self._pending: list[tuple[int, str]] = []
        self._writing: list[tuple[int, str]] = []
        """The batch being written to the store."""
        self._pending_bytes = 0
        self._cancel = cancel
        self._flush_seconds = flush_seconds
        self.attached = True
        """The connection that started the turn still delivers its updates."""
        self.on_takeover: Callable[[], None] | None = None
        """Called when a client re-attaches elsewhere (the old connection is superseded)."""
        self.followers = 0
        """Clients re-attached in this process."""
        self.remote_follower_at = 0.0
        """When a follower on another replica last marked itself (`time.time()`)."""
        self.ended = False
        self._signal: asyncio.Future[None] | None = None
        self._questions: dict[str, asyncio.Future[RequestPermissionResponse]] = {}
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._detached_at: float | None = None

    # --- the turn's side ------------------------------------------------------------------------

    async def start(self) -> None:
        """Drop the entries of the turns before the last one's end, and write this one's beginning."""
        self.last = self.flushed = await self.store.log_last(self.session_id)
        await self.store.log_trim(self.session_id, self.last)
        self.logs.running[self.session_id] = self
        self.started = True
        begin = self.append({"begin": True})
        if self.prompt_key is not None:  # found in one small read when the same prompt comes again
            await self.store.log_answer(self.session_id, _PROMPT_MARK + self.prompt_key, str(begin))
        await self.flush()
        self._task = asyncio.ensure_future(self._loop())

    def append(self, entry: dict[str, Any], text: str | None = None) -> int:
        """Number `entry` and queue it for the store; its number. `text`: the entry's JSON, when made already."""
        self.last += 1
        if text is None:
            text = json_text(entry)
        self._pending.append((self.last, text))
        self._pending_bytes += len(text)
        signal, self._signal = self._signal, None
        if signal is not None and not signal.done():
            signal.set_result(None)
        return self.last

    @property
    def full(self) -> bool:
        """More than `PENDING_BYTES` wait for the store: the turn should wait (`flush`)."""
        return self._pending_bytes > PENDING_BYTES

    async def flush(self) -> None:
        """Write what waits to the store."""
        async with self._lock:
            batch, self._pending, self._pending_bytes = self._pending, [], 0
            if not batch:
                return
            self._writing = batch  # still served from memory until the store has it
            try:
                await self.store.log_append(self.session_id, batch)
            except BaseException:
                self._pending[:0] = batch
                self._pending_bytes += sum(len(t) for _, t in batch)
                raise
            finally:
                self._writing = []
            self.flushed = batch[-1][0]

    async def _loop(self) -> None:
        last_poll = 0.0
        while not self.ended:
            await asyncio.sleep(self._flush_seconds)
            try:
                await self.flush()
                now = time.monotonic()
                if now - last_poll >= self.logs.poll_seconds * 4 or self._questions or not self.attached:
                    last_poll = now
                    await self._read_answers()
            except Exception:
                logger.exception("session %s: could not write the turn's log", self.session_id)
            self._check_grace()

    async def _read_answers(self) -> None:
        answers = await self.store.log_answers(self.session_id)
        mark = answers.get(FOLLOWER_MARK)
        if mark is not None:
            with contextlib.suppress(ValueError):
                at = float(mark)
                if at > self.remote_follower_at:
                    self.remote_follower_at = at
                    self._takeover()
        for qid, future in list(self._questions.items()):
            text = answers.get(f"answer:{qid}")
            if text is not None and not future.done():
                future.set_result(RequestPermissionResponse.model_validate_json(text))

    def _followed(self) -> bool:
        return self.followers > 0 or time.time() - self.remote_follower_at < max(self.logs.grace_seconds, 1.0)

    def _check_grace(self) -> None:
        if self.attached or self.ended:
            self._detached_at = None
            return
        now = time.monotonic()
        if self._followed():
            self._detached_at = now
            return
        if self._detached_at is None:
            self._detached_at = now
        elif now - self._detached_at >= self.logs.grace_seconds:
            logger.info(
                "session %s: no client re-attached within %.0f s: turn cancelled",
                self.session_id,
                now - self._detached_at,
            )
            self._cancel()

    def detach(self) -> None:
        """The connection that ran the turn is gone: the turn goes on, logged only, for the grace period."""
        self.attached = False
        self._detached_at = time.monotonic()

    def _takeover(self) -> None:
        if self.attached:
            self.attached = False
            self._detached_at = time.monotonic()
            if self.on_takeover is not None:
                self.on_takeover()

    async def ask(
        self, params: dict[str, Any], origin: Callable[[], Awaitable[RequestPermissionResponse]]
    ) -> RequestPermissionResponse:
        """A permission question: asked of the turn's client while attached, and of any client that re-attaches."""
        qid = uuid.uuid4().hex
        future: asyncio.Future[RequestPermissionResponse] = asyncio.get_running_loop().create_future()
        self._questions[qid] = future
        self.append({"ask": qid, "params": params})
        asked: asyncio.Task[RequestPermissionResponse] | None = None
        try:
            if self.attached:
                asked = asyncio.ensure_future(origin())
                await asyncio.wait({asked, future}, return_when=asyncio.FIRST_COMPLETED)
                if asked.done() and not asked.cancelled() and asked.exception() is None:
                    return asked.result()
            return await future
        finally:
            if asked is not None and not asked.done():
                asked.cancel()
            del self._questions[qid]
            self.append({"answered": qid})

    def answer(self, qid: str, response: RequestPermissionResponse) -> bool:
        """A re-attached client in this process answered question `qid`; `False` if it is not pending."""
        future = self._questions.get(qid)
        if future is None or future.done():
            return False
        future.set_result(response)
        return True

    async def end(self, entry: dict[str, Any]) -> None:
        """The turn's answer (or error): logged, written, and the log stops."""
        if self.ended:
            return
        if not self.started:  # refused before it held the session: the log is another turn's
            self.ended = True
            return
        self.append(entry)
        self.ended = True
        if self.logs.running.get(self.session_id) is self:
            del self.logs.running[self.session_id]
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        try:
            await self.flush()
        except Exception:
            logger.exception("session %s: could not write the turn's end to its log", self.session_id)
        signal, self._signal = self._signal, None
        if signal is not None and not signal.done():
            signal.set_result(None)

    # --- a local follower's side ----------------------------------------------------------------

    def pending_after(self, after: int) -> list[tuple[int, str]] | None:
        """Entries after `after` held in memory, or `None` when some must be read from the store first."""
        if after < self.flushed:
            return None
        return [e for e in (*self._writing, *self._pending) if e[0] > after]

    async def changed(self) -> None:
        """Wait for the next entry (or the end)."""
        if self.ended:
            return
        if self._signal is None:
            self._signal = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._signal)

    def takeover_local(self) -> None:
        """A client re-attached in this process."""
        self._takeover()


class LoggedClient:
    """The turn's client connection, with permission questions going through the turn's log."""

    def __init__(self, conn: Any, log: TurnLog) -> None:
        self._conn = conn
        self._log = log

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    async def request_permission(self, **kwargs: Any) -> RequestPermissionResponse:
        """Ask the turn's client, and any client that re-attaches meanwhile; the first answer counts."""
        params = {
            "sessionId": kwargs["session_id"],
            "toolCall": kwargs["tool_call"].model_dump(mode="json", by_alias=True, exclude_none=True),
            "options": [o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in kwargs["options"]],
        }
        return await self._log.ask(params, lambda: self._conn.request_permission(**kwargs))


class Follower:
    """Sends a re-attached client the log of a session's turn after its cursor, then its answer.

    `send(entry_seq, update)` delivers one update, `ask(params)` asks a permission question (its
    answer), `ended(message)` delivers the `_acpkit/turn_ended` params.
    """

    def __init__(
        self,
        logs: TurnLogs,
        store: UpdateLogStore,
        session_id: str,
        after: int,
        *,
        send: Callable[[int, dict[str, Any]], Awaitable[None]],
        ask: Callable[[dict[str, Any]], Awaitable[RequestPermissionResponse]],
        ended: Callable[[dict[str, Any]], Awaitable[None]],
    ) -> None:
        self.logs = logs
        self.store = store
        self.session_id = session_id
        self.after = after
        self._send = send
        self._ask = ask
        self._ended = ended
        self._asking: dict[str, asyncio.Task[None]] = {}

    async def run(self) -> None:
        """Follow until the turn's end is delivered, nothing more can come, or this client leaves too."""
        try:
            await self._run()
        except (ConnectionError, RuntimeError) as exc:
            logger.info("session %s: the re-attached client left (%s)", self.session_id, exc)

    async def _run(self) -> None:
        local = self.logs.running.get(self.session_id)
        if local is not None:
            local.followers += 1
            local.takeover_local()
        else:
            # The store's last entry says whether a turn runs (on another replica): the client may be
            # ahead of the store (it saw updates not written yet), never past a turn's end it has not seen.
            last = await self.store.log_last(self.session_id)
            tail = await self.store.log_read(self.session_id, last - 1) if last else []
            if not tail or (tail[-1][0] <= self.after and _is_end(json.loads(tail[-1][1]))):
                return  # no turn to follow: the client has everything
        try:
            await self._follow()
        finally:
            if local is not None:
                local.followers -= 1
            for task in self._asking.values():
                task.cancel()

    async def _follow(self) -> None:
        idle_polls = 0
        while True:
            local = self.logs.running.get(self.session_id)
            batch = local.pending_after(self.after) if local is not None else None
            if batch is None:
                batch = await self.store.log_read(self.session_id, self.after)
                if local is not None:  # and what the store does not have yet
                    top = batch[-1][0] if batch else self.after
                    batch.extend(local.pending_after(top) or ())
            for seq, text in batch:
                if seq <= self.after:
                    continue
                if await self._entry(seq, json.loads(text)):
                    return
                self.after = seq
            if batch:
                idle_polls = 0
                continue
            local = self.logs.running.get(self.session_id)
            if local is not None:
                await local.changed()
                continue
            idle_polls += 1
            if idle_polls % 20 == 1:  # the turn runs on another replica: say we follow it
                await self.store.log_answer(self.session_id, FOLLOWER_MARK, repr(time.time()))
            if idle_polls * self.logs.poll_seconds > 2 * max(self.logs.grace_seconds, 5.0):
                await self._ended({"sessionId": self.session_id, "seq": self.after, "error": _STOPPED})
                return
            await asyncio.sleep(self.logs.poll_seconds)

    async def _entry(self, seq: int, entry: dict[str, Any]) -> bool:
        """Deliver one entry; `True` at the turn's end."""
        if "u" in entry:
            await self._send(seq, entry["u"])
        elif "ask" in entry:
            qid = str(entry["ask"])
            self._asking[qid] = asyncio.ensure_future(self._relay(qid, entry["params"]))
        elif "answered" in entry:
            task = self._asking.pop(str(entry["answered"]), None)
            if task is not None and not task.done():
                task.cancel()
        elif _is_end(entry):
            message: dict[str, Any] = {"sessionId": self.session_id, "seq": seq}
            if entry.get("error") is not None:
                message["error"] = entry["error"]
            else:
                message["response"] = entry.get("end") or {}
            await self._ended(message)
            return True
        return False

    async def _relay(self, qid: str, params: dict[str, Any]) -> None:
        try:
            response = await self._ask(params)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.info("session %s: the re-attached client did not answer a question (%s)", self.session_id, exc)
            return
        local = self.logs.running.get(self.session_id)
        if local is not None and local.answer(qid, response):
            return
        await self.store.log_answer(
            self.session_id, f"answer:{qid}", response.model_dump_json(by_alias=True, exclude_none=True)
        )


async def answer_of_prompt(
    logs: TurnLogs,
    store: UpdateLogStore,
    session_id: str,
    key: str,
    *,
    send: Callable[[int, dict[str, Any]], Awaitable[None]],
    ask: Callable[[dict[str, Any]], Awaitable[RequestPermissionResponse]],
    wait: float = 5.0,
) -> PromptResponse | None:
    """The answer of the turn prompt `key` started, its log sent from its beginning meanwhile (`send`,
    `ask`: as a [`Follower`][acpkit_core.server.turn_log.Follower]'s; the client drops what it has
    by number); `None` when no turn of the session's log began with it (looked for during `wait`
    seconds: its first sending may be starting)."""
    deadline = time.monotonic() + wait
    while True:  # (the named values hold the running or last turn's only: a turn's start clears them)
        mark = (await store.log_answers(session_id)).get(_PROMPT_MARK + key)
        if mark is not None and mark.isdigit():
            begin = int(mark)
            break
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(logs.poll_seconds)
    answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    async def ended(message: dict[str, Any]) -> None:
        if not answer.done():
            answer.set_result(message)

    await Follower(logs, store, session_id, begin, send=send, ask=ask, ended=ended).run()
    message = answer.result() if answer.done() else {"error": _STOPPED}
    error = message.get("error")
    if isinstance(error, dict):
        error = cast("dict[str, Any]", error)
        raise RequestError(int(error.get("code", -32603)), str(error.get("message", "")), error.get("data"))
    return PromptResponse.model_validate(message.get("response") or {})
