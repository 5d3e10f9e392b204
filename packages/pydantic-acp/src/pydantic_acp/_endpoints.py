"""The client's LLM endpoint (`providers/set`, unstable) as a pydantic-ai model.

When the client set an endpoint, each turn runs a model of the endpoint's protocol (OpenAI chat
completions, or Anthropic messages) at its base URL with its headers, under the name of the model
the agent would have used: the agent needs no code for it.
"""

from __future__ import annotations

import importlib.util

from acpkit_core.runner.providers import PLACEHOLDER_KEY, EndpointModelCache, EndpointSupport, LlmEndpoint
from pydantic_ai.models import Model

__all__ = ["EndpointModels", "endpoint_support"]

_PACKAGES = {"openai": "openai", "anthropic": "anthropic"}
"""The protocols this adapter can build a model for, and the package each needs."""
"""The key given to an SDK client that insists on one when the client's headers carry it another way."""


def _protocols() -> tuple[str, ...]:
    return tuple(p for p, package in _PACKAGES.items() if importlib.util.find_spec(package) is not None)


def _route(model: Model | str | None) -> tuple[str, str]:
    if isinstance(model, Model):
        system = model.system
        return (system if system in _PACKAGES else f"_{system}"), model.base_url or ""
    if isinstance(model, str) and ":" in model:
        provider = model.split(":", 1)[0]
        return (provider if provider in _PACKAGES else f"_{provider}"), ""
    return "_default", ""


def endpoint_support(model: Model | str | None) -> EndpointSupport:
    """What a pydantic-ai agent whose model is `model` can do: every protocol whose SDK is installed."""
    api_type, base_url = _route(model)
    return EndpointSupport(protocols=_protocols(), api_type=api_type, base_url=base_url)


def model_name(model: Model | str | None) -> str:
    """The name of the model the agent would run (`gpt-4o` of `openai:gpt-4o`)."""
    if isinstance(model, Model):
        return model.model_name
    if isinstance(model, str):
        return model.split(":", 1)[-1]
    return "default"


class EndpointModels:
    """The models built on the client's endpoints, one per endpoint and model name (their HTTP clients are reused)."""

    def __init__(self) -> None:
        self._cache = EndpointModelCache[Model](self._build)

    def model(self, endpoint: LlmEndpoint, name: str) -> Model:
        """The model `name` at `endpoint` (built once, kept among the last few used)."""
        return self._cache.model(endpoint, name)

    @staticmethod
    def _build(endpoint: LlmEndpoint, name: str) -> Model:
        headers = dict(endpoint.headers)
        if endpoint.api_type == "openai":
            from openai import AsyncOpenAI
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.providers.openai import OpenAIProvider

            key = endpoint.bearer() or PLACEHOLDER_KEY
            client = AsyncOpenAI(base_url=endpoint.base_url, api_key=key, default_headers=headers)
            return OpenAIChatModel(name, provider=OpenAIProvider(openai_client=client))
        if endpoint.api_type == "anthropic":
            from anthropic import AsyncAnthropic
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider

            key = endpoint.key("x-api-key") or endpoint.bearer() or PLACEHOLDER_KEY
            client = AsyncAnthropic(base_url=endpoint.base_url, api_key=key, default_headers=headers)
            return AnthropicModel(name, provider=AnthropicProvider(anthropic_client=client))
        raise ValueError(f"no pydantic-ai model for apiType {endpoint.api_type!r}")  # refused by providers/set first
