"""`AcpModelMiddleware`: the turn's model (the session's choice, or the prompt's own) on every model call.

A graph built once by `create_agent` has one model. Offering `models=` through ACP then needs the
choice to reach each model call: this middleware swaps the request's model for the one the turn
runs with ([`turn.model_id`][acpkit_core.runner.protocols.Turn.model_id]: a prompt's `_meta.acpkit.model` or
`/model <id> <prompt>`, else the `model` config option). A `graph_factory` gets the same choice as
`SessionContext.model_id` and builds the graph with it instead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from acpkit_core.errors import UserError
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime

from ._endpoints import EndpointChatModels, chat_model_name
from ._middleware import current_acp

__all__ = ["MODEL_MIDDLEWARE_NAME", "AcpModelMiddleware", "check_model_middleware", "has_model_middleware"]

MODEL_MIDDLEWARE_NAME = "AcpModelMiddleware"
"""The middleware's name in the graph (its `before_agent` node shows it is there)."""


class AcpModelMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Runs each model call with the turn's model: the prompt's own choice, else the session's; on the
    client's own endpoint when it set one (`providers/set`, unstable: see `acpkit_core.runner.providers`).

    `models` maps the ids offered with `create_acp_agent(models=[...])` to chat models (instances,
    or names for `init_chat_model`); an id it does not map is itself given to `init_chat_model`
    (`"openai:gpt-5"`). Each model is made once and kept. Outside an ACP turn, or when no model is
    chosen, the graph's own model runs.
    """

    def __init__(self, models: Mapping[str, BaseChatModel | str] | None = None) -> None:
        """Use `models` (id -> chat model or `init_chat_model` name) for the offered ids."""
        super().__init__()
        self.models: dict[str, BaseChatModel | str] = dict(models or {})
        """The chat model (or its `init_chat_model` name) of each model id."""
        self._made: dict[str, BaseChatModel] = {}
        self._endpoints = EndpointChatModels()

    @property
    def name(self) -> str:
        """Always `AcpModelMiddleware` (subclasses too: `create_acp_agent` looks for this name)."""
        return MODEL_MIDDLEWARE_NAME

    async def abefore_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Nothing to change (this hook gives the middleware a node `create_acp_agent` can find)."""
        return None

    def model_for(self, model_id: str) -> BaseChatModel:
        """The chat model of `model_id` (made on first use)."""
        made = self._made.get(model_id)
        if made is not None:
            return made
        spec = self.models.get(model_id, model_id)
        if isinstance(spec, str):
            from langchain.chat_models import init_chat_model

            try:
                spec = init_chat_model(spec)
            except Exception as error:
                raise UserError(
                    f"AcpModelMiddleware: model {model_id!r} is not in `models` and init_chat_model({spec!r}) "
                    f"failed: {error}"
                ) from error
        self._made[model_id] = spec
        return spec

    def _override(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        binding = current_acp()
        if binding is None or binding.turn is None:
            return request
        model_id = binding.turn.model_id
        chosen = self.model_for(model_id) if model_id is not None else None
        endpoint = binding.turn.llm_endpoint
        if endpoint is not None:  # the client's own endpoint (`providers/set`), with the model's name
            return request.override(
                model=self._endpoints.model(endpoint, chat_model_name(chosen or request.model, model_id))
            )
        return request if chosen is None else request.override(model=chosen)

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        """Call the turn's model."""
        return handler(self._override(request))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> ModelResponse[Any]:
        """Call the turn's model."""
        return await handler(self._override(request))


def has_model_middleware(nodes: Sequence[str]) -> bool:
    """True when a graph with these node names has `AcpModelMiddleware`."""
    return any(n.startswith(MODEL_MIDDLEWARE_NAME + ".") for n in nodes)


def check_model_middleware(nodes: Sequence[str], models: Sequence[object]) -> None:
    """Refuse a fixed graph offered `models=` without `AcpModelMiddleware` (the choice would do nothing)."""
    if not models:
        return
    if not any(n.startswith(MODEL_MIDDLEWARE_NAME + ".") for n in nodes):
        raise UserError(
            "models=... offers a model choice, but the graph has no AcpModelMiddleware to run the chosen model: "
            "build it with create_agent(..., middleware=[AcpModelMiddleware({...})]), or pass graph_factory=... "
            "(it gets the choice as SessionContext.model_id)"
        )
