"""An offline chat model for LangChain / LangGraph that plays a script: what `Agent("test")` is to pydantic-ai.

LangChain's own fakes do not fit an agent: `GenericFakeChatModel` cannot `bind_tools` and, streamed,
fails with "No generations found in stream" or drops tool calls. `ScriptedChatModel` streams each
reply as a real provider would (reasoning, text, then each tool call's name and its arguments in
pieces, then usage and a finish reason), works through `invoke` and `astream` alike, and accepts
`bind_tools`, so `create_agent(ScriptedChatModel(...), tools=[...])` runs tools for real.
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

__all__ = ["ScriptedChatModel", "ScriptedReply", "ScriptedToolCall"]


@dataclass
class ScriptedToolCall:
    """A tool call the scripted model makes: the tool's name, its arguments and the call's id."""

    name: str
    args: dict[str, Any]
    id: str


@dataclass
class ScriptedReply:
    """One model response, streamed in order: reasoning, text, tool calls, then usage.

    `text` and `reasoning` may be one string or a sequence of chunks (each streamed on its own).
    """

    text: str | Sequence[str] = ""
    reasoning: str | Sequence[str] = ""
    """Streamed as `reasoning` content blocks (ACP: `agent_thought_chunk`)."""
    calls: Sequence[ScriptedToolCall] = ()
    finish_reason: str = "stop"
    """`stop`, or `length` / `content_filter` to end the turn `max_tokens` / `refusal`."""
    input_tokens: int = 10
    output_tokens: int = 5
    delay: float = 0.0
    """Seconds to wait before each chunk (to watch a turn stream, or cancel it)."""
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    """More `response_metadata` for the last chunk."""


Script = Sequence["ScriptedReply | Callable[[list[BaseMessage]], ScriptedReply]"]
"""The replies, in order; an entry may be a function of the messages the model received."""


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        return str(cast(dict[str, Any], tool).get("name"))
    return str(getattr(tool, "name", None) or tool)


def _pieces(value: str | Sequence[str]) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    return list(value)


class ScriptedChatModel(BaseChatModel):
    """A chat model that plays `script`, one reply per model call, offline.

    ```python
    from langchain.agents import create_agent
    from langchain_acp import ScriptedChatModel, ScriptedReply, ScriptedToolCall

    model = ScriptedChatModel(script=[
        ScriptedReply(reasoning="Look first.", calls=[ScriptedToolCall("read_file", {"path": "a.txt"}, "c1")]),
        ScriptedReply(text="It says hello."),
    ])
    graph = create_agent(model, tools=[read_file])
    ```

    An entry of the script may also be a function taking the messages the model received and
    returning a `ScriptedReply`. When the script runs out, the model answers `default_text`
    (or, with `repeat_last=True`, plays the last reply again). `seen` and `bound_tools` record
    each call's messages and the names of the tools bound for it, for tests.
    """

    script: list[Any] = Field(default_factory=list[Any])
    """`ScriptedReply` objects, or functions of the messages returning one, played in order."""
    default_text: str = "done"
    """The answer once the script has run out."""
    repeat_last: bool = False
    """Keep playing the last reply when the script runs out (instead of `default_text`)."""
    tools: list[str] = Field(default_factory=list[str])
    """The tool names recorded in `bound_tools` for a call made without `bind_tools`."""
    seen: list[list[BaseMessage]] = Field(default_factory=list[list[BaseMessage]])
    """The messages of each call, in order."""
    bound_tools: list[list[str]] = Field(default_factory=list[list[str]])
    """The names of the tools bound for each call."""

    @property
    def _llm_type(self) -> str:
        return "acpkit-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        """The model with `tools` bound (their names are recorded in `bound_tools`; the script decides calls)."""
        return _Bound(model=self, tool_names=[_tool_name(t) for t in tools])

    def _next(self, messages: list[BaseMessage], tool_names: list[str]) -> ScriptedReply:
        self.seen.append(list(messages))
        self.bound_tools.append(tool_names)
        if self.script:
            item = self.script.pop(0) if (len(self.script) > 1 or not self.repeat_last) else self.script[0]
        else:
            item = ScriptedReply(text=self.default_text)
        return cast(ScriptedReply, item(messages) if callable(item) else item)

    def _chunks(self, reply: ScriptedReply) -> Iterator[AIMessageChunk]:
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

    def _message(self, reply: ScriptedReply) -> AIMessage:
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
            generation = ChatGenerationChunk(message=chunk)
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=generation)
            yield generation


class _Bound(ScriptedChatModel):
    """The model with tools bound (what `bind_tools` returns): plays the same script."""

    model: ScriptedChatModel
    tool_names: list[str] = Field(default_factory=list[str])

    def _next(self, messages: list[BaseMessage], tool_names: list[str]) -> ScriptedReply:
        return self.model._next(messages, self.tool_names)  # pyright: ignore[reportPrivateUsage]
