"""Serve models that cannot stream: one `request()` per step, replayed as a stream of whole parts.

An ACP turn always runs the agent with an event handler, which makes pydantic-ai ask the model for a
streamed response. A model that only implements `request()` (the base `Model.request_stream` raises
`NotImplementedError`; `FunctionModel(fn)` without a `stream_function` fails an assertion) would end
the turn with an error. [`streaming_model`][pydantic_acp._unstreamed.streaming_model] wraps such a
model so each request is made without streaming and its response replayed as events: the text
reaches the client as one message, tool calls are shown as usual.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import CompletedStreamedResponse, Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

__all__ = ["UnstreamedModel", "can_stream", "streaming_model"]


def can_stream(model: Model) -> bool:
    """False for a model known to lack streamed requests (its `request_stream` is the base one, or a
    `FunctionModel` without `stream_function`); wrappers are looked through."""
    if isinstance(model, FunctionModel):
        return model.stream_function is not None
    if isinstance(model, WrapperModel):
        return type(model).request_stream is not WrapperModel.request_stream or can_stream(model.wrapped)
    return type(model).request_stream is not Model.request_stream


def streaming_model(model: Model | str | None) -> Model | str | None:
    """`model` itself when it can stream (or is a name), else wrapped in an `UnstreamedModel`."""
    if isinstance(model, Model) and not can_stream(model):
        return UnstreamedModel(model)
    return model


class UnstreamedModel(WrapperModel):
    """A model whose streamed requests are plain requests replayed as events (text in one chunk)."""

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        yield CompletedStreamedResponse(response, model_request_parameters=model_request_parameters, replay_events=True)
