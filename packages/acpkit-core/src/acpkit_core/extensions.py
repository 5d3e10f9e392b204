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
-32602 with the validation message); otherwise it gets the params dict. A method returns a dict
or a pydantic model. An unknown method answers -32601; an unknown notification is logged and
dropped (a notification has no answer). `initialize` lists what is served under
`agentCapabilities._meta["acpkit.extensions"]` as `{"methods": [...], "notifications": [...]}`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar, cast, get_type_hints

from acp import RequestError
from pydantic import BaseModel, ValidationError

from .errors import UserError

__all__ = ["EXTENSIONS_META_KEY", "ExtensionHandler", "Extensions"]

log = logging.getLogger("acpkit.extensions")

EXTENSIONS_META_KEY = "acpkit.extensions"
"""The `_meta` key of `agentCapabilities` listing the served extensions."""

ExtensionHandler: TypeAlias = Callable[[Any], Awaitable[Any]]
"""An async function taking the params (a dict or a pydantic model) and returning the result."""

_H = TypeVar("_H", bound=ExtensionHandler)


@dataclass(frozen=True, slots=True)
class _Route:
    handler: ExtensionHandler
    params: type[BaseModel] | None


def _params_model(handler: ExtensionHandler, name: str) -> type[BaseModel] | None:
    if not inspect.iscoroutinefunction(handler):
        raise UserError(f"extension {name!r}: the handler must be an async function")
    parameters = list(inspect.signature(handler).parameters.values())
    if len(parameters) != 1:
        raise UserError(f"extension {name!r}: the handler takes exactly one argument, the params")
    hint = get_type_hints(handler).get(parameters[0].name)
    return hint if isinstance(hint, type) and issubclass(hint, BaseModel) else None


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
            table[name] = _Route(handler, _params_model(handler, name))
            return handler

        return register

    def capabilities(self) -> dict[str, Any]:
        """What `initialize` advertises under `agentCapabilities._meta`."""
        return {EXTENSIONS_META_KEY: {"methods": sorted(self._methods), "notifications": sorted(self._notifications)}}

    async def call(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run method `name` (without the `_`); -32601 when unknown, -32602 when the params do not validate."""
        route = self._methods.get(name)
        if route is None:
            raise RequestError.method_not_found(f"_{name}")
        result = await route.handler(_validated(route, name, params))
        if isinstance(result, BaseModel):
            return result.model_dump(mode="json", by_alias=True, exclude_none=True)
        if result is None:
            return {}
        if not isinstance(result, dict):
            raise TypeError(f"extension method {name!r} returned {type(result).__name__}; return a dict or a model")
        return cast(dict[str, Any], result)

    async def notify(self, name: str, params: dict[str, Any]) -> None:
        """Run notification `name` (without the `_`); unknown ones and bad params are logged and dropped."""
        route = self._notifications.get(name)
        if route is None:
            log.warning("ignoring unknown extension notification _%s", name)
            return
        try:
            value = _validated(route, name, params)
        except RequestError as exc:
            log.warning("ignoring extension notification _%s: %s", name, exc.data)
            return
        await route.handler(value)


def _validated(route: _Route, name: str, params: dict[str, Any]) -> Any:
    if route.params is None:
        return params
    try:
        return route.params.model_validate(params)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors())
        raise RequestError.invalid_params({"method": f"_{name}", "details": problems}) from None
