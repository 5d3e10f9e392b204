"""Session updates on their way to the client: in wire form when the SDK lets us, in order."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from acp import Client
from pydantic import ValidationError

from ..json_text import encoded, json_text
from ..runner.elicitation import UrlElicitations
from ..runner.updates import SessionUpdate, WireUpdate, update_from_json, update_to_json
from ._sdk import Notify, raw_notifier, raw_sender
from .requests import RequestTracker
from .turn_log import SEQ_META, TurnLog

__all__ = ["Outbox"]

logger = logging.getLogger("acpkit_core.server")

_SESSION_JSON_KEPT = 256
"""Session ids kept encoded for numbered updates (per connection); past it the cache starts again."""
_NUMBERED_HEAD = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'


class Outbox:
    """Sends `session/update` notifications on one connection."""

    def __init__(self) -> None:
        self.conn: Client | None = None
        """The connection to the client, once connected."""
        self._notify: Notify | None = None
        self._send: Callable[[dict[str, Any]], Awaitable[None]] | None = None
        self._session_json: dict[str, str] = {}
        self._background: set[asyncio.Task[None]] = set()
        self.requests: RequestTracker | None = None
        """Requests in flight on this connection, both ways (`None` where the SDK's connection cannot be reached)."""
        self.links = UrlElicitations()
        """The connection's accepted URL elicitations not completed yet (their ids are unique on it)."""
        self.logs: dict[str, TurnLog] = {}
        """The numbered logs of the turns running on this connection, by session (`acpkit serve` only)."""
        self.on_takeover: Callable[[], None] | None = None
        """Called when a client re-attaches to one of this connection's turns elsewhere (`acpkit serve`)."""

    def connect(self, conn: Client) -> None:
        """Use `conn` from now on (its raw sender when the SDK exposes it)."""
        self.conn = conn
        self._notify = raw_notifier(conn)
        self._send = raw_sender(conn)

    @property
    def sends_wire_json(self) -> bool:
        """True when updates go out as wire JSON through the SDK's connection (the fast path)."""
        return self._notify is not None

    async def send(self, session_id: str, update: SessionUpdate | WireUpdate) -> None:
        """Send one update (a model or its wire JSON); nothing before a connection exists."""
        if self.conn is None:
            return
        if self.logs and (log := self.logs.get(session_id)) is not None:
            await self._send_logged(log, session_id, update)
            return
        if self._notify is not None:
            wire = update if isinstance(update, dict) else update_to_json(update)
            await self._notify("session/update", {"sessionId": session_id, "update": wire})
            return
        try:
            model = update_from_json(update) if isinstance(update, dict) else update
        except ValidationError:  # an unstable update the SDK has no model for: it cannot carry it
            logger.warning("session %s: the SDK cannot send a %r update", session_id, update.get("sessionUpdate"))
            return
        await self.conn.session_update(session_id=session_id, update=model)

    async def _send_logged(self, log: TurnLog, session_id: str, update: SessionUpdate | WireUpdate) -> None:
        """Number and log an update of a turn; send it while the turn's client is attached.

        The update is encoded once: its JSON goes into the log's entry and into the message's text.
        """
        wire = update if isinstance(update, dict) else update_to_json(update)
        text = json_text(wire)
        seq = log.append({"u": wire}, '{"u":' + text + "}")
        if log.full:
            await log.flush()
        if log.attached:
            try:
                await self.send_numbered(session_id, wire, seq, text)
            except (ConnectionError, RuntimeError):  # the client left: the turn goes on, logged
                return

    async def send_numbered(self, session_id: str, wire: WireUpdate, seq: int, text: str | None = None) -> None:
        """Send one update carrying its number in the session's log (`_meta["acpkit.seq"]`); `text`: the
        update's JSON, when made already."""
        params = {"sessionId": session_id, "update": wire, "_meta": {SEQ_META: seq}}
        if self._send is not None and text is not None:
            sid = self._session_json.get(session_id)
            if sid is None:
                if len(self._session_json) >= _SESSION_JSON_KEPT:  # sessions closed long ago: bounded
                    self._session_json.clear()
                sid = self._session_json[session_id] = json_text(session_id)
            numbered = f'{_NUMBERED_HEAD}{sid},"update":{text},"_meta":{{"{SEQ_META}":{seq}}}}}}}'
            await self._send(encoded(numbered, jsonrpc="2.0", method="session/update", params=params))
        elif self._notify is not None:
            await self._notify("session/update", params)
        elif self.conn is not None:
            try:
                model = update_from_json(wire)
            except ValidationError:  # an unstable update the SDK has no model for: it cannot carry it
                logger.warning("session %s: the SDK cannot send a %r update", session_id, wire.get("sessionUpdate"))
                return
            await self.conn.session_update(session_id=session_id, update=model, field_meta={SEQ_META: seq})

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send one notification (an extension's) to the client."""
        if self._notify is not None:
            await self._notify(method, params)
        elif self.conn is not None:
            await self.conn.ext_notification(method.removeprefix("_"), params)

    def follow(self, task: asyncio.Task[None]) -> None:
        """Keep a re-attached follower's task until it ends (cancelled when the connection ends)."""
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def later(self, session_id: str, updates: Sequence[SessionUpdate | WireUpdate]) -> None:
        """Send updates after the current response (used after `session/new` and `session/fork`)."""

        async def send() -> None:
            try:
                for update in updates:
                    await self.send(session_id, update)
            except ConnectionError:  # the client left right after its request: nobody to tell
                return

        task = asyncio.ensure_future(send())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def close(self) -> None:
        """Drop updates not sent yet (the connection is ending)."""
        if self.requests is not None:
            self.requests.close()
        for task in list(self._background):
            task.cancel()
