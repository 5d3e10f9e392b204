"""The client's LLM endpoint (`providers/set`, unstable) as a LangChain chat model.

`AcpModelMiddleware` runs each model call of a turn on it when the client set one: `ChatOpenAI`
(OpenAI chat completions) or `ChatAnthropic` at the endpoint's base URL with its headers, under the
name of the model the graph would have used. A graph without the middleware has its model fixed
inside it: the runner then refuses `providers/set`, saying so.
"""

from __future__ import annotations

import importlib.util

from acpkit_core.runner.providers import PLACEHOLDER_KEY, EndpointModelCache, EndpointSupport, LlmEndpoint
from langchain_core.language_models import BaseChatModel

__all__ = ["EndpointChatModels", "chat_model_name", "endpoint_support"]

_PACKAGES = {"openai": "langchain_openai", "anthropic": "langchain_anthropic"}
"""The protocols this adapter can build a chat model for, and the package each needs."""

FIXED_MODEL = (
    "the graph's model is fixed inside it: build it with create_agent(..., middleware=[AcpModelMiddleware()]) "
    "so that a client's endpoint can replace it"
)
"""Why a graph without `AcpModelMiddleware` cannot run on the client's endpoint."""
FACTORY_MODEL = "a graph_factory builds its own model: it cannot be replaced by a client's endpoint"
"""Why a `graph_factory`'s graphs cannot run on the client's endpoint."""


def endpoint_support(*, swappable: bool, factory: bool) -> EndpointSupport:
    """What the runner can do: every protocol whose LangChain package is installed, when the graph can swap."""
    if factory:
        return EndpointSupport(refusal=FACTORY_MODEL)
    if not swappable:
        return EndpointSupport(refusal=FIXED_MODEL)
    protocols = tuple(p for p, package in _PACKAGES.items() if importlib.util.find_spec(package) is not None)
    return EndpointSupport(protocols=protocols, api_type="_langchain")


def chat_model_name(model: object, fallback: str | None = None) -> str:
    """The model name of a chat model (`gpt-4o`), else `fallback` (the chosen model's id), else `default`."""
    for attribute in ("model_name", "model"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return fallback or "default"


class EndpointChatModels:
    """The chat models built on the client's endpoints, one per endpoint and model name."""

    def __init__(self) -> None:
        self._cache = EndpointModelCache[BaseChatModel](self._build)

    def model(self, endpoint: LlmEndpoint, name: str) -> BaseChatModel:
        """The model `name` at `endpoint` (built once, kept among the last few used)."""
        return self._cache.model(endpoint, name)

    @staticmethod
    def _build(endpoint: LlmEndpoint, name: str) -> BaseChatModel:
        headers = dict(endpoint.headers)
        if endpoint.api_type == "openai":
            from langchain_openai import ChatOpenAI

            key = endpoint.bearer() or PLACEHOLDER_KEY
            return ChatOpenAI(
                model=name,
                base_url=endpoint.base_url,
                api_key=key,  # pyright: ignore[reportArgumentType]
                default_headers=headers,
                streaming=True,
                stream_usage=True,
            )
        if endpoint.api_type == "anthropic":
            from langchain_anthropic import ChatAnthropic

            key = endpoint.key("x-api-key") or endpoint.bearer() or PLACEHOLDER_KEY
            return ChatAnthropic(  # pyright: ignore[reportCallIssue]
                model=name,  # pyright: ignore[reportCallIssue]
                base_url=endpoint.base_url,
                api_key=key,  # pyright: ignore[reportArgumentType]
                default_headers=headers,
                streaming=True,
            )
        raise ValueError(f"no LangChain chat model for apiType {endpoint.api_type!r}")  # refused by providers/set first
