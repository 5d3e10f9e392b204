"""Extension methods and notifications: the `_`-prefixed JSON-RPC calls ACP leaves to agents and clients.

```python
from pydantic import BaseModel
from acpkit_core.extensions import Extensions

extensions = Extensions()

class Echo(BaseModel):
    text: str

@extensions.method("acme/echo")
async def echo(params: Echo) -> dict[str, str]:
    return {"text": params.text}

@extensions.notification("acme/ping")
async def ping(params: dict[str, object]) -> None:
    ...

AcpAgent(runner, AgentOptions(extensions=extensions))
```

A client calls `_acme/echo` (the SDK's `ext_method("acme/echo", {...})`). Handlers are typed: a
parameter annotated with a pydantic model gets the params validated into it (a mismatch answers
-32602 with the validation message); otherwise it gets the params dict. A handler that takes a
second parameter gets an [`ExtensionContext`][acpkit_core.extensions.ExtensionContext]: the
connection it was called on (the client's capabilities and info, the negotiated protocol version,
the remote principal) and the session named by the params' `sessionId`. A method returns a dict
or a pydantic model. An unknown method answers -32601; an unknown notification is logged and
dropped (a notification has no answer). `initialize` lists what is served under
`agentCapabilities._meta["acpkit.extensions"]` as `{"methods": [...], "notifications": [...]}`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar, cast, get_type_hints

from acp import RequestError
from pydantic import BaseModel, ValidationError

from .errors import AcpKitError, UserError
from .runner.types import ClientInfo, Session

__all__ = ["EXTENSIONS_META_KEY", "ExtensionContext", "ExtensionHandler", "Extensions"]

log = logging.getLogger("acpkit.extensions")

EXTENSIONS_META_KEY = "acpkit.extensions"
"""The `_meta` key of `agentCapabilities` listing the served extensions."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtensionContext:
    """The connection an extension method or notification arrived on, for handlers that take it.

    Declare a second parameter on the handler (`async def handler(params, ctx: ExtensionContext)`)
    to receive it.
    """

    client: ClientInfo
    """What the client advertised in `initialize`, as the server reads it (files, terminal, boolean
    options, elicitation, its name)."""
    client_capabilities: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The client's `clientCapabilities` as it sent them (wire JSON), including its own `_meta`."""
    client_info: Mapping[str, Any] | None = None
    """The client's `clientInfo` (`name`, `title`, `version`) as it sent it, when it did."""
    protocol_version: int | None = None
    """The protocol version agreed in `initialize` (`None` before it)."""
    principal: str | None = None
    """Who the connection's client is when served remotely with bearer tokens (`acpkit serve`);
    `None` over stdio."""
    session: Session | None = None
    """The session named by the params' `sessionId` (an open one, else as stored), `None` when the
    params name none. A `sessionId` that is unknown, or another principal's, answers -32002 to a
    method (a notification is dropped) before the handler runs."""


ExtensionHandler: TypeAlias = Callable[..., Awaitable[Any]]
"""An async function taking the params (a dict or a pydantic model), and optionally an
[`ExtensionContext`][acpkit_core.extensions.ExtensionContext], and returning the result."""

ContextFactory: TypeAlias = Callable[[dict[str, Any]], Awaitable[ExtensionContext]]
"""Builds the context of one call from its params (the server resolves `sessionId`)."""

_H = TypeVar("_H", bound=ExtensionHandler)


@dataclass(frozen=True, slots=True)
class _Route:
    handler: ExtensionHandler
    params: type[BaseModel] | None
    wants_context: bool


def _route(handler: ExtensionHandler, name: str) -> _Route:
    if not inspect.iscoroutinefunction(handler):
        raise UserError(f"extension {name!r}: the handler must be an async function")
    parameters = list(inspect.signature(handler).parameters.values())
    if len(parameters) not in (1, 2):
        raise UserError(
            f"extension {name!r}: the handler takes the params, and optionally an ExtensionContext as a second argument"
        )
    hint = get_type_hints(handler).get(parameters[0].name)
    model = hint if isinstance(hint, type) and issubclass(hint, BaseModel) else None
    return _Route(handler, model, len(parameters) == 2)


def _check_name(name: str) -> None:
    if not name or name.startswith("_"):
        raise UserError(f"extension name {name!r}: give it without the leading '_' (for example 'acme/echo')")


class Extensions:
    """A router of extension methods and notifications, registered with decorators."""

    def __init__(self) -> None:
        self._methods: dict[str, _Route] = {}
        self._notifications: dict[str, _Route] = {}

    def method(self, name: str) -> Callable[[_H], _H]:
        """Register the handler of the extension method `_<name>`."""
        return self._registrar(self._methods, "method", name)

    def notification(self, name: str) -> Callable[[_H], _H]:
        """Register the handler of the extension notification `_<name>`."""
        return self._registrar(self._notifications, "notification", name)

    @staticmethod
    def _registrar(table: dict[str, _Route], what: str, name: str) -> Callable[[_H], _H]:
        _check_name(name)

        def register(handler: _H) -> _H:
            if name in table:
                raise UserError(f"extension {what} {name!r} is registered twice")
            table[name] = _route(handler, name)
            return handler

        return register

    def capabilities(self) -> dict[str, Any]:
        """What `initialize` advertises under `agentCapabilities._meta`."""
        return {EXTENSIONS_META_KEY: {"methods": sorted(self._methods), "notifications": sorted(self._notifications)}}

    async def call(self, name: str, params: dict[str, Any], context: ContextFactory | None = None) -> dict[str, Any]:
        """Run method `name` (without the `_`); -32601 when unknown, -32602 when the params do not validate.

        `context` builds the [`ExtensionContext`][acpkit_core.extensions.ExtensionContext] of a
        handler that takes one (the server passes it; without it such a handler gets a bare context).
        """
        route = self._methods.get(name)
        if route is None:
            raise RequestError.method_not_found(f"_{name}")
        value = _validated(route, name, params)
        if route.wants_context:
            result = await route.handler(value, await _context(context, params))
        else:
            result = await route.handler(value)
        if isinstance(result, BaseModel):
            return result.model_dump(mode="json", by_alias=True, exclude_none=True)
        if result is None:
            return {}
        if not isinstance(result, dict):
            raise TypeError(f"extension method {name!r} returned {type(result).__name__}; return a dict or a model")
        return cast(dict[str, Any], result)

    async def notify(self, name: str, params: dict[str, Any], context: ContextFactory | None = None) -> None:
        """Run notification `name` (without the `_`); unknown ones, bad params and unknown sessions are
        logged and dropped."""
        route = self._notifications.get(name)
        if route is None:
            log.warning("ignoring unknown extension notification _%s", name)
            return
        try:
            value = _validated(route, name, params)
            if not route.wants_context:
                await route.handler(value)
                return
            ctx = await _context(context, params)
        except (RequestError, AcpKitError) as exc:
            detail = exc.data if isinstance(exc, RequestError) and exc.data else exc
            log.warning("ignoring extension notification _%s: %s", name, detail)
            return
        await route.handler(value, ctx)


async def _context(factory: ContextFactory | None, params: dict[str, Any]) -> ExtensionContext:
    return await factory(params) if factory is not None else ExtensionContext(client=ClientInfo())


def _validated(route: _Route, name: str, params: dict[str, Any]) -> Any:
    if route.params is None:
        return params
    try:
        return route.params.model_validate(params)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors())
        raise RequestError.invalid_params({"method": f"_{name}", "details": problems}) from None
