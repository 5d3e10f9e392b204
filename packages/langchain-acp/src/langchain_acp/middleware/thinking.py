"""`AcpThinkingMiddleware`: the session's `thinking` level as a model setting of each model call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from acpkit_core.thinking import ThinkingLevel, thinking_level
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ModelRequest, ModelResponse

from ._base import current_acp

__all__ = ["AcpThinkingMiddleware"]


class AcpThinkingMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Passes the session's thinking level (the `thinking` config option) to the chat model.

    `create_agent` hands a request's model settings to the model as call keywords, so the level
    arrives as `setting` (`reasoning_effort` by default, which OpenAI-style chat models take). At
    the `default` level nothing is added and the model keeps its own behaviour. Offer the option
    with `config_options=[thinking_option()]`.
    """

    def __init__(self, setting: str = "reasoning_effort", *, values: Mapping[ThinkingLevel, Any] | None = None) -> None:
        """Send the level as `setting`; `values` maps a level to what is sent (default: the level's name)."""
        super().__init__()
        self.setting = setting
        """The model keyword the level is sent as."""
        self.values: dict[ThinkingLevel, Any] = dict(values or {})
        """Per-level replacement of the value sent (for example `{"off": "none"}`)."""

    def _override(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        binding = current_acp()
        if binding is None or binding.turn is None:
            return request
        level = thinking_level(binding.turn.session.config)
        if level is None:
            return request
        value = self.values.get(level, level)
        return request.override(model_settings={**request.model_settings, self.setting: value})

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        """Add the level to the model call's settings."""
        return handler(self._override(request))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> ModelResponse[Any]:
        """Add the level to the model call's settings."""
        return await handler(self._override(request))
