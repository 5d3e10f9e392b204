"""Every use of the ACP SDK's private internals, in one place, each with a public fallback.

The server leans on three things the `agent-client-protocol` SDK does not export:

- `ClientSideConnection._conn`, its JSON-RPC `Connection`: the server sends per-token updates
  already in wire form through `Connection.send_notification` instead of building, validating and
  dumping a notification model for each. Without it: the typed `Client.session_update`. A served
  turn's numbered update, encoded once for the log and the wire, goes to the connection's
  `_transport` as an [`EncodedMessage`][acpkit_core.json_text.EncodedMessage]
  ([`raw_sender`][acpkit_core.server._sdk.raw_sender], which reads `_observers`, `_disconnected`
  and `_closed` too). Without them: `send_notification`.
- that connection's `_handler`, a `MessageRouter`: the SDK does not route `session/delete`, so the
  server adds the route. Without it: `session/delete` answers -32601 and is not advertised.
- `acp._transport`: where it exists, the SDK's connection takes a message transport object, so
  the server reads and writes the bytes itself
  ([`WireTransport`][acpkit_core.server.transport.WireTransport]: malformed lines answered per
  JSON-RPC, the message size limit, streamed updates coalesced into fewer writes). Without it: the SDK's own
  reader and sender.

- that connection's `send_request` and `_execute_request`, wrapped per connection
  ([`track_requests`][acpkit_core.server._sdk.track_requests]): they see each request's JSON-RPC
  id, which `$/cancel_request` names (the SDK has no cancellation). Without them: no
  `$/cancel_request` either way (it is optional in ACP), everything else works.
- the router again for `logout` and `$/cancel_request`, which the SDK does not route. Without it:
  `logout` answers -32601 and `agentCapabilities.auth.logout` is not advertised.
- the router and the connection's `send_request` again for MCP over ACP (`mcp/connect`,
  `mcp/message`, `mcp/disconnect`), which the SDK has models for but does not route or send.
  Without them: `mcpCapabilities.acp` is not advertised and ACP-transport servers are refused.
- `Connection.add_observer`, to record every raw message of the test client
  ([`observe_wire`][acpkit_core.server._sdk.observe_wire]).
- the router for `initialize`, so that `clientCapabilities.session.compaction` (unstable, newer than
  the SDK's models, which drop it) reaches the negotiation
  ([`route_wire_initialize`][acpkit_core.server._sdk.route_wire_initialize]). Without it: a client
  opts into compaction updates through `_meta["acpkit.unstable"]` only.

The SDK is pinned to a minor range; `tests/core/test_sdk_seams.py` proves each seam is taken on
the pinned version and that the server still serves everything it advertises without them.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, cast

from acp.connection import Connection, StreamEvent
from acp.meta import AGENT_METHODS
from acp.router import MessageRouter, Route
from acp.schema import (
    CancelRequestNotification,
    ClientCapabilities,
    ClientSessionCapabilities,
    DeleteSessionRequest,
    InitializeRequest,
    LogoutRequest,
)
from acp.utils import normalize_result
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidatorFunctionWrapHandler, field_validator

from .requests import CANCEL_REQUEST, PeerCancel, RequestTracker, cancelled_response
from .transport import DirectSender, WireTransport

__all__ = [
    "Notify",
    "WirePromptRequest",
    "observe_wire",
    "raw_notifier",
    "raw_requester",
    "raw_sender",
    "route_logout",
    "route_raw",
    "route_session_delete",
    "route_unstable_updates",
    "route_wire_initialize",
    "route_wire_prompt",
    "track_requests",
    "tracked",
    "wire_transport",
]

Notify = Callable[[str, Any], Awaitable[None]]
"""Sends one JSON-RPC notification: the method and its params, already in wire form."""


def _connection(conn: object) -> Connection | None:
    raw: object = getattr(conn, "_conn", None)
    return raw if isinstance(raw, Connection) else None


def raw_notifier(conn: object) -> Notify | None:
    """The SDK connection's own notification sender, `None` when it cannot be reached."""
    raw = _connection(conn)
    return raw.send_notification if raw is not None else None


def raw_sender(conn: object) -> Callable[[dict[str, Any]], Awaitable[None]] | None:
    """Sends one whole JSON-RPC notification (its dict, which may be an
    [`EncodedMessage`][acpkit_core.json_text.EncodedMessage]) to the SDK connection's transport,
    as `send_notification` does once it has built the dict; `None` when the transport cannot be reached.

    While the connection has observers, or once it has closed, the message goes through
    `send_notification` instead, which tells the observers or raises `ConnectionError`.
    """
    raw = _connection(conn)
    send: object = getattr(getattr(raw, "_transport", None), "send", None)
    if (
        raw is None
        or not callable(send)
        or not all(hasattr(raw, n) for n in ("_observers", "_disconnected", "_closed"))
    ):
        return None
    to_transport = cast("Callable[[dict[str, Any]], Awaitable[None]]", send)

    async def sender(message: dict[str, Any]) -> None:
        if raw._observers or raw._disconnected or raw._closed:  # pyright: ignore[reportPrivateUsage]
            await raw.send_notification(message["method"], message.get("params"))
            return
        await to_transport(message)

    return sender


def _router(conn: object) -> MessageRouter | None:
    router: object = getattr(_connection(conn), "_handler", None)
    return router if isinstance(router, MessageRouter) else None


def route_session_delete(conn: object, handler: object) -> bool:
    """Route `session/delete` to `handler.delete_session`; `False` when the router cannot be reached."""
    router = _router(conn)
    if router is None:
        return False
    method = AGENT_METHODS["session_delete"]
    router.route_request(method, DeleteSessionRequest, handler, "delete_session", adapt_result=normalize_result)
    return True


def raw_requester(conn: object) -> Callable[[str, Any], Awaitable[Any]] | None:
    """The SDK connection's own request sender (method, params → result), `None` when unreachable.

    For methods the SDK has no client or agent method for (`mcp/connect`, `mcp/message`, ...).
    """
    raw = _connection(conn)
    return raw.send_request if raw is not None else None


def route_raw(
    conn: object,
    requests: Mapping[str, Callable[[Any], Awaitable[Any]]],
    notifications: Mapping[str, Callable[[Any], Awaitable[None]]] = {},
) -> bool:
    """Route methods the SDK does not know to handlers taking the raw params (wire JSON).

    Used for MCP over ACP (`mcp/message` both ways, `mcp/connect` and `mcp/disconnect` on the
    client). `False` (nothing routed) when the router cannot be reached.
    """
    router = _router(conn)
    if router is None:
        return False
    for method, func in requests.items():
        router.add_route(Route(method=method, func=func, kind="request"))
    for method, func in notifications.items():
        router.add_route(Route(method=method, func=func, kind="notification"))
    return True


def route_logout(conn: object, handler: object) -> bool:
    """Route `logout` to `handler.logout`; `False` when the router cannot be reached."""
    router = _router(conn)
    if router is None:
        return False
    router.route_request(AGENT_METHODS["logout"], LogoutRequest, handler, "logout", adapt_result=normalize_result)
    return True


def track_requests(conn: object, tracker: RequestTracker) -> bool:
    """Let `tracker` see every request on `conn`, both ways, and serve `$/cancel_request` with it.

    `conn` is an SDK connection of either side (`AgentSideConnection`, `ClientSideConnection`).
    Our outgoing requests are noted with their ids; when the code awaiting one is cancelled, the
    peer is sent `$/cancel_request`. The peer's requests are noted with the task answering them;
    the peer's `$/cancel_request` cancels that task, and the request answers -32800. `False` (and
    nothing changed) when the SDK's connection cannot be reached.
    """
    raw = _connection(conn)
    router = _router(conn)
    if raw is None or router is None:
        return False
    send_request = raw.send_request
    execute_request: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] = raw._execute_request  # pyright: ignore[reportPrivateUsage]

    async def tracked_send(method: str, params: Any = None) -> Any:
        # `send_request` takes this id before its first await, so nothing can take it in between.
        entry = tracker.sent(raw._next_request_id, method, params)  # pyright: ignore[reportPrivateUsage]
        try:
            return await send_request(method, params)
        except asyncio.CancelledError:
            tracker.abandoned(entry)
            raise
        finally:
            tracker.answered(entry.id)

    async def tracked_execute(message: dict[str, Any]) -> dict[str, Any]:
        task = asyncio.current_task()
        entry = tracker.received(message, task)
        try:
            return await execute_request(message)
        except asyncio.CancelledError:
            if entry is None or not entry.cancelled_by_peer:
                raise
            if task is not None:
                task.uncancel()
            return cancelled_response(entry.id)
        finally:
            if entry is not None:
                tracker.finished(entry.id)

    raw.send_request = tracked_send  # type: ignore[method-assign]
    raw._execute_request = tracked_execute  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage]
    router.route_notification(CANCEL_REQUEST, CancelRequestNotification, tracker, "on_cancel_request")
    return True


def tracked(conn: object, decide: PeerCancel | None = None) -> RequestTracker | None:
    """A [`RequestTracker`][acpkit_core.server.requests.RequestTracker] installed on `conn` (see
    `track_requests`), `None` when the SDK's connection cannot be reached."""
    notify = raw_notifier(conn)
    if notify is None:
        return None
    tracker = RequestTracker(notify) if decide is None else RequestTracker(notify, decide=decide)
    return tracker if track_requests(conn, tracker) else None


def observe_wire(conn: object, observer: Callable[[StreamEvent], None]) -> bool:
    """Call `observer` with every raw JSON-RPC message `conn` sends or receives; `False` if unreachable."""
    raw = _connection(conn)
    if raw is None:
        return False
    raw.add_observer(observer)
    return True


class WirePromptRequest(BaseModel):
    """`session/prompt` params with the prompt left as the client sent it, for ACP Kit's own parser."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    session_id: str = Field(alias="sessionId")
    prompt: Any = None
    field_meta: dict[str, Any] | None = Field(default=None, alias="_meta")


def route_wire_prompt(conn: object, handler: object) -> bool:
    """Route `session/prompt` to `handler.prompt` with the wire JSON blocks, not the SDK's models.

    ACP Kit's parser then reports a bad block precisely (`prompt[1] (video): unknown block type`)
    and refuses what the SDK's models would let through (a resource with both `text` and `blob`).
    `False` when the router cannot be reached: the SDK validates the blocks first, as before.
    """
    router = _router(conn)
    if router is None:
        return False
    router.route_request(AGENT_METHODS["session_prompt"], WirePromptRequest, handler, "prompt")
    return True


def wire_transport(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    max_message_bytes: int,
    sender: DirectSender | None = None,
) -> WireTransport | None:
    """Our transport over `reader` and `writer`, for an SDK connection that takes transport objects.

    `sender` writes the messages (default: a [`DirectSender`][acpkit_core.server.transport.DirectSender]
    on `writer`). `None` when the installed SDK has no transport seam (`acp._transport`): the
    caller then serves the streams the SDK's own way.
    """
    try:
        importlib.import_module("acp._transport").Transport  # noqa: B018 - probing the SDK
    except (ImportError, AttributeError):
        return None
    return WireTransport(reader, sender or DirectSender(writer), max_message_bytes=max_message_bytes)


_LAZY = ConfigDict(defer_build=True, use_attribute_docstrings=False)
"""Our subclasses of the SDK's models are built when `initialize` first uses them, and without
reading this file's source for field docstrings (which the SDK's config asks for): 30 ms less at import."""


class WireClientSessionCapabilities(ClientSessionCapabilities):
    """`clientCapabilities.session` with the unstable `compaction` the SDK's model does not have."""

    model_config = _LAZY

    compaction: dict[str, Any] | None = None

    @field_validator("compaction", mode="wrap")
    @classmethod
    def _no_compaction_on_error(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> dict[str, Any] | None:
        try:
            return handler(value)
        except ValidationError:  # as the schema says (`x-deserialize-default-on-error`): not advertised
            return None


class WireClientCapabilities(ClientCapabilities):
    """`clientCapabilities` whose `session` keeps `compaction`."""

    model_config = _LAZY

    session: WireClientSessionCapabilities | None = None  # pyright: ignore[reportIncompatibleVariableOverride]


class WireInitializeRequest(InitializeRequest):
    """`initialize` params whose capabilities keep what the unstable schema adds to `session`."""

    model_config = _LAZY

    client_capabilities: Annotated[  # pyright: ignore[reportIncompatibleVariableOverride]
        WireClientCapabilities | None, Field(alias="clientCapabilities", validate_default=True)
    ] = WireClientCapabilities()


def route_wire_initialize(conn: object, handler: object) -> bool:
    """Route `initialize` to `handler.initialize` with `WireInitializeRequest` (which keeps
    `clientCapabilities.session.compaction`); `False` when the router cannot be reached."""
    router = _router(conn)
    if router is None:
        return False
    router.route_request(AGENT_METHODS["initialize"], WireInitializeRequest, handler, "initialize")
    return True


def route_unstable_updates(conn: object) -> bool:
    """On a client connection, parse `session/update` with
    [`UnstableSessionNotification`][acpkit_core.client.unstable_updates.UnstableSessionNotification] (the
    unstable kinds the SDK has no model for, and a tool call's `name`), still through the SDK's
    bookkeeping of in-flight updates; `False` when the router cannot be reached (the SDK then drops
    those updates, as a client without them should)."""
    from ..client.unstable_updates import UnstableSessionNotification

    router = _router(conn)
    target: object = getattr(conn, "_session_updates", None)
    if router is None or target is None:
        return False
    router.route_notification("session/update", UnstableSessionNotification, target, "session_update")
    return True
