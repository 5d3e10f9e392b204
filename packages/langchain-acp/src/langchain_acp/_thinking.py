"""`AcpThinkingMiddleware`: the session's `thinking` level as a model setting of each model call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from acpkit_core.config import ConfigOption
from acpkit_core.errors import UserError
from acpkit_core.thinking import THINKING_OPTION, ThinkingLevel, thinking_level
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langgraph.runtime import Runtime

from ._middleware import current_acp

__all__ = ["THINKING_MIDDLEWARE_NAME", "AcpThinkingMiddleware", "check_thinking_middleware"]

THINKING_MIDDLEWARE_NAME = "AcpThinkingMiddleware"
"""The middleware's name in the graph (its `before_agent` node shows it is there)."""


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

    @property
    def name(self) -> str:
        """Always `AcpThinkingMiddleware` (subclasses too: `create_acp_agent` looks for this name)."""
        return THINKING_MIDDLEWARE_NAME

    async def abefore_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Nothing to change (this hook gives the middleware a node `create_acp_agent` can find)."""
        return None

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


def check_thinking_middleware(nodes: Sequence[str], config_options: Sequence[ConfigOption]) -> None:
    """Refuse a graph offered the `thinking` option without `AcpThinkingMiddleware` (the choice would do nothing)."""
    if not any(o.id == THINKING_OPTION for o in config_options):
        return
    if not any(n.startswith(THINKING_MIDDLEWARE_NAME + ".") for n in nodes):
        raise UserError(
            "config_options offers `thinking`, but the graph has no AcpThinkingMiddleware to pass the level to the "
            "model: build it with create_agent(..., middleware=[AcpThinkingMiddleware()]) or drop thinking_option()"
        )
