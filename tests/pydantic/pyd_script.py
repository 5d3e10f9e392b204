"""Shared helpers for the pydantic-acp tests: scripted FunctionModels."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingCalls, DeltaToolCall, DeltaToolCalls, FunctionModel

Chunk: TypeAlias = str | DeltaToolCalls | DeltaThinkingCalls
Step: TypeAlias = Sequence[Chunk]


def call(name: str, args: str = "{}", *, id: str, index: int = 1) -> DeltaToolCalls:
    """A complete tool call chunk."""
    return {index: DeltaToolCall(name=name, json_args=args, tool_call_id=id)}


@dataclass
class Script:
    """A FunctionModel that streams one scripted step per model request, and records what it was sent."""

    steps: list[Step]
    requests: list[list[ModelMessage]] = field(default_factory=list[list[ModelMessage]])
    infos: list[AgentInfo] = field(default_factory=list[AgentInfo])
    name: str = "script"
    before_step: Callable[[int], Any] | None = None

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(stream_function=self._stream, model_name=self.name, profile={"context_window": 100_000})

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Chunk]:
        index = len(self.requests)
        self.requests.append(list(messages))
        self.infos.append(info)
        if self.before_step is not None:
            result = self.before_step(index)
            if hasattr(result, "__await__"):
                await result
        step = self.steps[index] if index < len(self.steps) else ["(no more steps)"]
        for chunk in step:
            yield chunk

    def tool_returns(self, index: int = -1) -> list[ToolReturnPart]:
        """The tool returns the model saw in model call `index`, oldest first."""
        return [
            p
            for m in self.requests[index]
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        ]

    def user_prompts(self, index: int = -1) -> list[UserPromptPart]:
        """The user prompt parts sent in model call `index`."""
        return [
            p
            for m in self.requests[index]
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart)
        ]
