"""Requests in flight on one connection, both ways, and `$/cancel_request` (ACP 1.17).

Either side may cancel a request it sent with the notification
`{"method": "$/cancel_request", "params": {"requestId": ...}}`; the other side then answers that
request at once, with its result so far or the error -32800 (`Request cancelled`).
[`RequestTracker`][acpkit_core.server.requests.RequestTracker] keeps both directions of one
connection (the hooks into the SDK's connection are in `server/_sdk.py`):

- **Outgoing** (our requests to the peer). When the code awaiting one is cancelled (a turn is
  cancelled while a permission question, an elicitation, a file read or a terminal command waits
  for the client), the peer is sent `$/cancel_request` for it, so an editor can close the dialog it
  shows. [`cancel_session`][acpkit_core.server.requests.RequestTracker.cancel_session] cancels
  every pending request of a session at once: the server calls it as soon as a turn is cancelled.
- **Incoming** (the peer's requests to us). On the peer's `$/cancel_request`, a `decide` function
  says what to do: the agent cancels a `session/prompt` as `session/cancel` would (the prompt then
  answers `stopReason: cancelled`); other requests have their handler cancelled and answer -32800.
  A request that already got its answer is left alone (the notification is ignored).

The same tracker serves the agent (`AcpAgent`) and the test client (`AcpTestClient`), which is how
the tests see both directions on a real connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, cast

__all__ = [
    "CANCEL_REQUEST",
    "REQUEST_CANCELLED",
    "CancelRecord",
    "Incoming",
    "Outgoing",
    "PeerCancel",
    "RequestId",
    "RequestTracker",
    "cancelled_response",
]

log = logging.getLogger("acpkit_core.server")

CANCEL_REQUEST: Final = "$/cancel_request"
"""The method of the cancel notification."""
REQUEST_CANCELLED: Final = -32800
"""The JSON-RPC error code of a cancelled request."""

RequestId: TypeAlias = int | str
"""A JSON-RPC request id."""

Notify: TypeAlias = Callable[[str, Any], Awaitable[None]]


@dataclass(slots=True, kw_only=True)
class Outgoing:
    """One of our requests awaiting the peer's answer."""

    id: RequestId
    """Its JSON-RPC id."""
    method: str
    """Its method (`session/request_permission`, `fs/read_text_file`, ...)."""
    session_id: str | None
    """The session it belongs to (its `sessionId` param), if any."""
    cancel_sent: bool = False
    """`$/cancel_request` was sent for it."""


@dataclass(slots=True, kw_only=True)
class Incoming:
    """One of the peer's requests we are still answering."""

    id: RequestId
    """Its JSON-RPC id."""
    method: str
    """Its method."""
    params: Mapping[str, Any]
    """Its params (an empty mapping when it had none or they were not an object)."""
    task: asyncio.Task[Any] | None
    """The task running its handler."""
    cancelled_by_peer: bool = False
    """The peer sent `$/cancel_request` for it and its handler was cancelled (it answers -32800)."""


PeerCancel: TypeAlias = Callable[[Incoming], Literal["handled", "cancel", "ignore"]]
"""What to do with the peer's `$/cancel_request` for one of its requests: `handled` (done another
way, for example a turn cancelled: the request answers on its own), `cancel` (cancel its handler:
it answers -32800), or `ignore` (let it finish)."""


def _always_cancel(entry: Incoming) -> Literal["cancel"]:
    return "cancel"


def cancelled_response(request_id: RequestId) -> dict[str, Any]:
    """The -32800 answer of a request whose handler was cancelled by the peer."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": REQUEST_CANCELLED, "message": "Request cancelled"}}


@dataclass(slots=True, kw_only=True)
class CancelRecord:
    """A `$/cancel_request` the peer sent, as seen by the tracker."""

    request_id: RequestId | None
    """The id it named."""
    method: str | None
    """The method of that request, when it was one of ours still pending (else `None`)."""
    session_id: str | None = None
    """The request's session, when it had one."""


class RequestTracker:
    """Our pending requests and the peer's, on one connection."""

    def __init__(self, notify: Notify, *, decide: PeerCancel = _always_cancel) -> None:
        """Track requests of a connection that sends notifications with `notify`.

        Args:
            notify: Sends one notification (method, params) to the peer.
            decide: What to do with the peer's `$/cancel_request` (default: cancel the handler).
        """
        self._notify = notify
        self.decide: PeerCancel = decide
        """What to do with the peer's `$/cancel_request` for one of its requests."""
        self.outgoing: dict[RequestId, Outgoing] = {}
        """Our requests awaiting an answer, by id."""
        self.incoming: dict[RequestId, Incoming] = {}
        """The peer's requests being answered, by id."""
        self.cancels_received: list[CancelRecord] = []
        """Every `$/cancel_request` the peer sent, in order (kept for tests; a few bytes each)."""
        self.closed = False
        """The connection ended: nothing more is sent."""
        self._background: set[asyncio.Task[None]] = set()

    # --- outgoing --------------------------------------------------------------------------------

    def sent(self, request_id: RequestId, method: str, params: Any) -> Outgoing:
        """Note a request we are sending."""
        session_id: object = cast("Mapping[str, Any]", params).get("sessionId") if isinstance(params, Mapping) else None
        entry = Outgoing(id=request_id, method=method, session_id=session_id if isinstance(session_id, str) else None)
        self.outgoing[request_id] = entry
        return entry

    def answered(self, request_id: RequestId) -> None:
        """Our request got its answer (or failed): forget it."""
        self.outgoing.pop(request_id, None)

    def abandoned(self, entry: Outgoing) -> None:
        """The code awaiting our request was cancelled: tell the peer, once."""
        self.outgoing.pop(entry.id, None)
        self._send_cancel(entry)

    def cancel_session(self, session_id: str) -> list[Outgoing]:
        """Send `$/cancel_request` for every pending request of `session_id` (a cancelled turn's)."""
        entries = [e for e in self.outgoing.values() if e.session_id == session_id and not e.cancel_sent]
        for entry in entries:
            self._send_cancel(entry)
        return entries

    def _send_cancel(self, entry: Outgoing) -> None:
        if entry.cancel_sent or self.closed:
            return
        entry.cancel_sent = True
        task = asyncio.ensure_future(self._notify_cancel(entry))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _notify_cancel(self, entry: Outgoing) -> None:
        try:
            await self._notify(CANCEL_REQUEST, {"requestId": entry.id})
        except (ConnectionError, OSError, RuntimeError):  # the peer left: nothing to cancel any more
            return
        log.debug("sent $/cancel_request for %s (id %r)", entry.method, entry.id)

    async def cancel(self, request_id: RequestId) -> None:
        """Send `$/cancel_request` for any id (the test client uses it to cancel its own requests)."""
        entry = self.outgoing.get(request_id)
        if entry is not None:
            entry.cancel_sent = True
        await self._notify(CANCEL_REQUEST, {"requestId": request_id})

    # --- incoming --------------------------------------------------------------------------------

    def received(self, message: Mapping[str, Any], task: asyncio.Task[Any] | None) -> Incoming | None:
        """Note the peer's request (run by `task`); `None` for a message without a usable id."""
        request_id = message.get("id")
        if not isinstance(request_id, int | str) or isinstance(request_id, bool):
            return None
        params = message.get("params")
        entry = Incoming(
            id=request_id,
            method=str(message.get("method")),
            params=params if isinstance(params, Mapping) else {},  # pyright: ignore[reportUnknownArgumentType]
            task=task,
        )
        self.incoming[request_id] = entry
        return entry

    def finished(self, request_id: RequestId) -> None:
        """The peer's request was answered: forget it."""
        self.incoming.pop(request_id, None)

    async def on_cancel_request(self, request_id: RequestId | None, **meta: Any) -> None:
        """The peer's `$/cancel_request`: cancel that request, if it is still being answered."""
        entry = self.incoming.get(request_id) if request_id is not None else None
        session = entry.params.get("sessionId") if entry is not None else None
        self.cancels_received.append(
            CancelRecord(
                request_id=request_id,
                method=entry.method if entry is not None else None,
                session_id=session if isinstance(session, str) else None,
            )
        )
        if entry is None:
            log.debug("$/cancel_request for %r: no such request pending (already answered?)", request_id)
            return
        how = self.decide(entry)
        if how == "cancel" and entry.task is not None and not entry.task.done():
            entry.cancelled_by_peer = True
            entry.task.cancel()

    def close(self) -> None:
        """The connection ended: send nothing more."""
        self.closed = True
        for task in list(self._background):
            task.cancel()
