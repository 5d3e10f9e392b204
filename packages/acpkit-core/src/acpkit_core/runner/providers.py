"""Custom LLM endpoints (unstable): the client routes the agent's model calls through its own endpoint.

ACP's provider methods (`rfds/custom-llm-endpoint.mdx`, in `schema.unstable.json`) let an editor
send the agent's model traffic through its own gateway, proxy or local server: `providers/list`
says which providers the agent has and where each sends its requests, `providers/set` gives one a
protocol (`apiType`: `openai`, `anthropic`, ...), a base URL and the headers to send (the key goes
in them, `Authorization: Bearer ...`), and `providers/disable` turns an optional one off.

ACP Kit offers it to a client that opted into the `providers` unstable surface, for a runner that
can swap its model ([`ModelEndpoints`][acpkit_core.runner.providers.ModelEndpoints]): it then advertises
`agentCapabilities.providers`. The agent has one provider, `main` (required: the agent's model);
after `providers/set`, every turn on that connection has the endpoint as
[`turn.llm_endpoint`][acpkit_core.runner.protocols.Turn.llm_endpoint] and the adapter builds its framework's
model on it (pydantic-ai: an OpenAI or Anthropic model with that base URL and headers; LangChain:
`ChatOpenAI` or `ChatAnthropic`), with the name of the model it would have used. The setting is
the connection's (ACP: process-scoped, never stored; `acpkit serve` keeps each connection's to
itself), and the headers are never echoed: `providers/list` shows only the protocol and base URL.

A runner that cannot swap its model (a LangChain graph without `AcpModelMiddleware`) is not
advertised the capability; `providers/list` then answers no providers and `providers/set` is
refused (-32602) with the reason.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Protocol, TypeVar, runtime_checkable

from acp import RequestError

__all__ = [
    "MAIN_PROVIDER",
    "PLACEHOLDER_KEY",
    "EndpointModelCache",
    "EndpointSupport",
    "LlmEndpoint",
    "ModelEndpoints",
    "ProviderSettings",
]

MAIN_PROVIDER: Final = "main"
"""The id of the agent's one provider: its model."""

PROVIDERS_LIST: Final = "providers/list"
PROVIDERS_SET: Final = "providers/set"
PROVIDERS_DISABLE: Final = "providers/disable"


@dataclass(frozen=True, slots=True, kw_only=True)
class LlmEndpoint:
    """Where the client wants the agent's model calls sent (`providers/set`)."""

    api_type: str
    """The API protocol (`openai`, `anthropic`, ...)."""
    base_url: str
    """The base URL requests go to (`http://127.0.0.1:8080/v1`)."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str], repr=False)
    """Headers for every request (the key among them); secret: never logged nor echoed."""

    def bearer(self) -> str | None:
        """The token of an `Authorization: Bearer ...` header, if there is one."""
        for name, value in self.headers.items():
            if name.lower() == "authorization" and value.lower().startswith("bearer "):
                return value[7:].strip()
        return None

    def key(self, *names: str) -> str | None:
        """The value of the first header among `names` (case-insensitive), for an `x-api-key` style key."""
        lowered = {k.lower(): v for k, v in self.headers.items()}
        return next((lowered[n.lower()] for n in names if n.lower() in lowered), None)


PLACEHOLDER_KEY: Final = "set-by-the-client-headers"
"""The API key a model client is built with when the client's headers carry the credentials instead."""

_M = TypeVar("_M")


class EndpointModelCache(Generic[_M]):
    """The models an adapter built on the client's endpoints, one per endpoint and model name.

    Bounded to the `size` most recently used (a client may set endpoints as often as it likes);
    a model built again reuses nothing, so dropping one only costs its next build.
    """

    def __init__(self, build: Callable[[LlmEndpoint, str], _M], *, size: int = 8) -> None:
        self._build = build
        self._size = size
        self._made: OrderedDict[tuple[Any, ...], _M] = OrderedDict()

    def model(self, endpoint: LlmEndpoint, name: str) -> _M:
        """The model `name` at `endpoint` (built on first use)."""
        key = (endpoint.api_type, endpoint.base_url, tuple(sorted(endpoint.headers.items())), name)
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = self._build(endpoint, name)
            while len(self._made) > self._size:
                self._made.popitem(last=False)
        else:
            self._made.move_to_end(key)
        return made


@dataclass(frozen=True, slots=True, kw_only=True)
class EndpointSupport:
    """What a runner says about swapping its model for a client's endpoint."""

    protocols: Sequence[str] = ()
    """The `apiType`s it can build a model for (empty: none)."""
    api_type: str = ""
    """The protocol its own model speaks (shown by `providers/list`; `_<name>` for one ACP has no name for)."""
    base_url: str = ""
    """Where its own model sends requests, when known (shown by `providers/list`)."""
    refusal: str | None = None
    """Why its model cannot be swapped (then `providers/set` is refused with it)."""

    @property
    def swappable(self) -> bool:
        """True when a client's endpoint can replace the model."""
        return self.refusal is None and bool(self.protocols)


@runtime_checkable
class ModelEndpoints(Protocol):
    """Optional: a runner whose model can be replaced by one on the client's endpoint (`providers/*`).

    It builds its model from [`turn.llm_endpoint`][acpkit_core.runner.protocols.Turn.llm_endpoint] when set.
    """

    def model_endpoints(self) -> EndpointSupport:
        """The protocols it can build a model for and its own model's route, or why it cannot swap it."""
        ...


def _object(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise RequestError.invalid_params({"params": "must be an object"})
    return params  # pyright: ignore[reportUnknownVariableType]


class ProviderSettings:
    """One connection's provider configuration, and the answers to `providers/*`."""

    def __init__(self, support: EndpointSupport) -> None:
        self.support = support
        """What the runner can do."""
        self.endpoint: LlmEndpoint | None = None
        """The endpoint the client set for `main` (`None`: the agent's own model)."""

    def _check_provider(self, params: Mapping[str, Any]) -> str:
        provider_id = params.get("providerId")
        if not isinstance(provider_id, str):
            raise RequestError.invalid_params({"providerId": "must be a string"})
        return provider_id

    def list(self, params: Any) -> dict[str, Any]:
        """`providers/list`: `main`, with where it sends requests now (no header ever)."""
        _object(params)
        if not self.support.swappable:
            return {"providers": []}
        if self.endpoint is not None:
            current = {"apiType": self.endpoint.api_type, "baseUrl": self.endpoint.base_url}
        else:
            current = {"apiType": self.support.api_type or "_default", "baseUrl": self.support.base_url}
        info = {"providerId": MAIN_PROVIDER, "supported": list(self.support.protocols), "required": True}
        return {"providers": [{**info, "current": current}]}

    def set(self, params: Any) -> dict[str, Any]:
        """`providers/set`: replace `main`'s endpoint whole (-32602 for anything it cannot use)."""
        data = _object(params)
        provider_id = self._check_provider(data)
        if not self.support.swappable:
            reason = self.support.refusal or "the agent's model cannot be replaced"
            raise RequestError.invalid_params({"providerId": f"unknown provider {provider_id!r}: {reason}"})
        if provider_id != MAIN_PROVIDER:
            raise RequestError.invalid_params(
                {"providerId": f"unknown provider {provider_id!r}: this agent has one, {MAIN_PROVIDER!r}"}
            )
        api_type, base_url = data.get("apiType"), data.get("baseUrl")
        if not isinstance(api_type, str) or api_type not in self.support.protocols:
            supported = ", ".join(self.support.protocols)
            why = f"{api_type!r} is not supported here (supported: {supported})"
            raise RequestError.invalid_params({"apiType": why})
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise RequestError.invalid_params({"baseUrl": f"must be an http(s) URL, got {base_url!r}"})
        headers: object = data.get("headers") or {}
        if not isinstance(headers, dict) or not all(
            isinstance(k, str) and isinstance(v, str)
            for k, v in headers.items()  # pyright: ignore[reportUnknownVariableType]
        ):
            raise RequestError.invalid_params({"headers": "must be an object of string values"})
        self.endpoint = LlmEndpoint(api_type=api_type, base_url=base_url, headers=dict(headers))  # pyright: ignore[reportUnknownArgumentType]
        return {}

    def disable(self, params: Any) -> dict[str, Any]:
        """`providers/disable`: `main` is required (-32602); an unknown id succeeds (ACP: idempotent)."""
        provider_id = self._check_provider(_object(params))
        if provider_id == MAIN_PROVIDER and self.support.swappable:
            raise RequestError.invalid_params(
                {"providerId": f"{MAIN_PROVIDER!r} is required: it is the agent's model (set another endpoint instead)"}
            )
        return {}
