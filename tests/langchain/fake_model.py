"""A small scripted chat model for the LangChain tests.

LangChain's own fakes cannot `bind_tools`, and `GenericFakeChatModel` drops tool calls when
streaming, so this one is written for the tests: each model call plays the next `Reply` of the
script, streaming its text, reasoning and tool-call chunks (the tool call's name first, then its
arguments in pieces), then usage and a finish reason. A script entry may also be a callable that
builds the reply from the messages the model received.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field


@dataclass
class Call:
    """A tool call the model makes."""

    name: str
    args: dict[str, Any]
    id: str


@dataclass
class Reply:
    """One model response, streamed in order: reasoning, text, tool calls."""

    text: str | Sequence[str] = ""
    reasoning: str | Sequence[str] = ""
    calls: Sequence[Call] = ()
    finish_reason: str = "stop"
    input_tokens: int = 10
    output_tokens: int = 5
    delay: float = 0.0
    """Seconds to sleep before each chunk (for cancellation tests)."""
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


Script = Sequence["Reply | Callable[[list[BaseMessage]], Reply]"]


def _pieces(value: str | Sequence[str]) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    return list(value)


class FakeChatModel(BaseChatModel):
    """Plays a script of replies; records what it was called with and which tools were bound."""

    script: list[Any] = Field(default_factory=list)
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    """The messages of each call, in order."""
    bound_tools: list[list[str]] = Field(default_factory=list)
    """Names of the tools bound for each call."""
    tools: list[str] = Field(default_factory=list)
    repeat_last: bool = False
    """Keep playing the last reply when the script runs out (else answer 'done')."""

    @property
    def _llm_type(self) -> str:
        return "acpkit-fake"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        names = [getattr(t, "name", None) or (t.get("name") if isinstance(t, dict) else str(t)) for t in tools]
        return _Bound(model=self, tool_names=[str(n) for n in names])

    def _next(self, messages: list[BaseMessage], tool_names: list[str]) -> Reply:
        self.seen.append(list(messages))
        self.bound_tools.append(tool_names)
        if self.script:
            item = self.script.pop(0) if (len(self.script) > 1 or not self.repeat_last) else self.script[0]
        else:
            item = Reply(text="done")
        return cast(Reply, item(messages) if callable(item) else item)

    def _chunks(self, reply: Reply) -> Iterator[AIMessageChunk]:
        for piece in _pieces(reply.reasoning):
            yield AIMessageChunk(content=[{"type": "reasoning", "reasoning": piece}])
        for piece in _pieces(reply.text):
            yield AIMessageChunk(content=piece)
        for i, call in enumerate(reply.calls):
            yield AIMessageChunk(
                content="", tool_call_chunks=[{"name": call.name, "args": "", "id": call.id, "index": i}]
            )
            args = json.dumps(call.args)
            half = len(args) // 2
            for part in (args[:half], args[half:]):
                if part:
                    yield AIMessageChunk(
                        content="", tool_call_chunks=[{"name": None, "args": part, "id": None, "index": i}]
                    )
        yield AIMessageChunk(
            content="",
            usage_metadata={
                "input_tokens": reply.input_tokens,
                "output_tokens": reply.output_tokens,
                "total_tokens": reply.input_tokens + reply.output_tokens,
            },
            response_metadata={"finish_reason": reply.finish_reason, **reply.extra},
            chunk_position="last",
        )

    def _message(self, reply: Reply) -> AIMessage:
        total: AIMessageChunk | None = None
        for chunk in self._chunks(reply):
            total = chunk if total is None else total + chunk
        assert total is not None
        return AIMessage(**{k: v for k, v in total.model_dump().items() if k not in ("type", "tool_call_chunks")})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self._next(messages, kwargs.get("tool_names", self.tools))
        return ChatResult(generations=[ChatGeneration(message=self._message(reply))])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        reply = self._next(messages, kwargs.get("tool_names", self.tools))
        for chunk in self._chunks(reply):
            if reply.delay:
                await asyncio.sleep(reply.delay)
            gen = ChatGenerationChunk(message=chunk)
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=gen)
            yield gen


class _Bound(FakeChatModel):
    """The model with tools bound (what `bind_tools` returns)."""

    model: FakeChatModel
    tool_names: list[str] = Field(default_factory=list)

    def _next(self, messages: list[BaseMessage], tool_names: list[str]) -> Reply:
        return self.model._next(messages, self.tool_names)  # pyright: ignore[reportPrivateUsage]
