"""`AcpChatModel`: any ACP agent as a LangChain chat model, so a graph can delegate to another agent.

```python
from langchain.agents import create_agent
from langchain_acp import AcpChatModel

model = AcpChatModel.from_target("examples/langgraph_agent.py")
graph = create_agent(model)
result = await graph.ainvoke({"messages": [("user", "Summarise README.md")]})
await model.aclose()
```

The remote agent is started by [`acpkit_core.delegate.RemoteAgent`][acpkit_core.delegate.RemoteAgent]
on the first call and ended by [`aclose`][langchain_acp.AcpChatModel.aclose] (or
[`close`][langchain_acp.AcpChatModel.close] after synchronous use).

- **Answer**: streamed as `AIMessageChunk`s whose content is a list of standard blocks: `text`
  blocks for the answer, `reasoning` blocks for the remote agent's thoughts (each run of one kind
  shares an `index`, so chunks merge into one block).
- **Tool calls**: the remote agent runs its own tools; each one is a `server_tool_call` block
  (`name` = the call's title, `args` = its raw input) and, once it ended, a `server_tool_result`
  block (`status` `success` or `error`, `output` = its raw output), with the ACP kind, title and
  status in `extras`. LangChain does not execute server tool calls.
- **End**: the last chunk carries `response_metadata` `{"stop_reason": ..., "finish_reason": ...}`
  and `usage_metadata` when the remote agent reported usage.
- **History**: as in [`acpkit_core.delegate.conversations`][acpkit_core.delegate.conversations]: the
  messages after the last `AIMessage` go to the remote session that holds the rest; an unknown
  history opens a new session and is sent once as a transcript.
- **Cancellation**: cancelling the task that streams or invokes the model sends `session/cancel`.
- **Refused**: `bind_tools` (the remote agent cannot call back into this process: give it the tools),
  `stop` sequences, and non-text message content.
- **Event loops**: async calls use the caller's loop; synchronous calls (`invoke`) run on one
  private loop thread per model. Use one model for one of the two.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from acpkit_core.delegate import (
    ConversationSessions,
    RemoteAgent,
    RemoteEvent,
    RemotePermissions,
    RemoteText,
    RemoteThought,
    RemoteToolCall,
    Turn,
    acpkit_run_command,
    prompt_text,
)
from acpkit_core.errors import UserError
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict, PrivateAttr

__all__ = ["AcpChatModel"]

_T = TypeVar("_T")

_FINISH = {"end_turn": "stop", "max_tokens": "length", "max_turn_requests": "length", "refusal": "content_filter"}


class AcpChatModel(BaseChatModel):
    """A LangChain chat model answered by an ACP agent (an `acpkit run` target or any stdio ACP command)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    command: list[str]
    """The agent command line (see `acpkit_core.delegate.acpkit_run_command` for `acpkit run` targets)."""
    cwd: str | None = None
    """The remote agent's working directory (default: ours)."""
    permissions: RemotePermissions = "reject"
    """How the remote agent's permission requests are answered: `allow`, `reject`, or an async function."""
    agent_name: str | None = None
    """Name reported in `response_metadata["model_name"]`; default: the remote agent's own name."""

    _remote: RemoteAgent | None = PrivateAttr(default=None)
    _sessions: ConversationSessions | None = PrivateAttr(default=None)
    _loop: asyncio.AbstractEventLoop | None = PrivateAttr(default=None)
    _thread: threading.Thread | None = PrivateAttr(default=None)

    @classmethod
    def from_target(
        cls, target: str, *, cwd: str | Path | None = None, permissions: RemotePermissions = "reject"
    ) -> AcpChatModel:
        """A model answered by `acpkit run TARGET` (a file or module serving an agent), started with this Python."""
        return cls(command=acpkit_run_command(target), cwd=str(cwd) if cwd else None, permissions=permissions)

    @property
    def _llm_type(self) -> str:
        return "acp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"command": self.command, "cwd": self.cwd}

    @property
    def remote(self) -> RemoteAgent:
        """The remote agent (process and connection), created on first use."""
        if self._remote is None:
            self._remote = RemoteAgent(self.command, cwd=self.cwd, permissions=self.permissions)
            self._sessions = ConversationSessions(self._remote)
        return self._remote

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        """Refused when tools are given: the remote agent runs its own tools and cannot call ours."""
        if tools:
            names = ", ".join(str(getattr(t, "name", None) or getattr(t, "__name__", t)) for t in tools)
            raise UserError(
                f"AcpChatModel cannot offer tools ({names}) to the remote ACP agent: it runs its own tools. "
                "Give the tools to the remote agent, or use another model for this graph."
            )
        return self

    async def aclose(self) -> None:
        """End the remote agent's process (after async use); the next call starts a new one."""
        if self._sessions is not None:
            self._sessions.clear()
        if self._remote is not None:
            await self._remote.aclose()

    def close(self) -> None:
        """End the remote agent's process and the private loop thread (after synchronous use)."""
        if self._loop is None:
            return
        self._on_thread(self.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join()
        self._loop.close()
        self._loop = self._thread = None

    def _on_thread(self, coro: Coroutine[Any, Any, _T]) -> _T:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, name="acp-chat-model", daemon=True)
            self._thread.start()
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Run the remote prompt on the model's private loop thread."""
        return self._on_thread(self._agenerate(messages, stop, **kwargs))

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """Synchronous streaming: the whole answer, then its chunks (the remote prompt runs on the loop thread)."""

        async def collect() -> list[ChatGenerationChunk]:
            return [chunk async for chunk in self._astream(messages, stop, **kwargs)]

        yield from self._on_thread(collect())

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """The whole answer, gathered from the stream."""
        from langchain_core.language_models.chat_models import agenerate_from_stream

        return await agenerate_from_stream(self._astream(messages, stop, run_manager, **kwargs))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """Send the new messages to the remote agent and stream its answer as content blocks."""
        if stop:
            raise UserError("AcpChatModel does not support stop sequences: the remote ACP agent decides when to stop")
        remote = self.remote
        assert self._sessions is not None
        split = _last_answer(messages) + 1
        earlier, new = _turns(messages[:split]), _turns(messages[split:])
        session, fresh = await self._sessions.session_for(earlier)
        blocks = _Blocks()
        answer: list[str] = []
        stop_reason: str | None = None
        async with session.prompt(prompt_text(new, earlier=earlier if fresh else ())) as events:
            async for event in events:
                if isinstance(event, RemoteText):
                    answer.append(event.text)
                chunk = blocks.chunk(event)
                if event.kind == "end":
                    stop_reason = event.stop_reason
                    info = remote.agent_info
                    chunk.response_metadata["model_name"] = self.agent_name or (info.name if info else "acp")
                generation = ChatGenerationChunk(message=chunk)
                if run_manager is not None and isinstance(event, RemoteText):
                    await run_manager.on_llm_new_token(event.text, chunk=generation)
                yield generation
        if stop_reason == "end_turn":
            self._sessions.remember([*earlier, *new, Turn(role="assistant", text="".join(answer))], session)


class _Blocks:
    """Numbers the content blocks of one answer, so consecutive chunks of one kind merge into one block."""

    def __init__(self) -> None:
        self.index = -1
        self._last: str | None = None

    def _next(self, kind: str | None) -> int:
        if kind is None or kind != self._last:
            self.index += 1
        self._last = kind
        return self.index

    def chunk(self, event: RemoteEvent) -> AIMessageChunk:
        if isinstance(event, RemoteText):
            return AIMessageChunk(content=[{"type": "text", "text": event.text, "index": self._next("text")}])
        if isinstance(event, RemoteThought):
            block = {"type": "reasoning", "reasoning": event.text, "index": self._next("reasoning")}
            return AIMessageChunk(content=[block])
        if isinstance(event, RemoteToolCall):
            return AIMessageChunk(content=self._tool_blocks(event))
        usage = event.usage
        return AIMessageChunk(
            content=[],
            response_metadata={"stop_reason": event.stop_reason, "finish_reason": _FINISH.get(event.stop_reason)},
            usage_metadata=None
            if usage is None
            else {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens,
            },
            chunk_position="last",
        )

    def _tool_blocks(self, call: RemoteToolCall) -> list[str | dict[Any, Any]]:
        extras: dict[str, Any] = {"kind": call.tool_kind, "title": call.title, "status": call.status}
        blocks: list[str | dict[Any, Any]] = []
        if call.started:
            blocks.append(
                {
                    "type": "server_tool_call",
                    "id": call.tool_call_id,
                    "name": call.title,
                    "args": call.arguments or {},
                    "index": self._next(None),
                    "extras": extras,
                }
            )
        if call.finished:
            blocks.append(
                {
                    "type": "server_tool_result",
                    "tool_call_id": call.tool_call_id,
                    "status": "success" if call.status == "completed" else "error",
                    "output": call.raw_output if call.raw_output is not None else call.text,
                    "index": self._next(None),
                    "extras": extras,
                }
            )
        return blocks


def _last_answer(messages: Sequence[BaseMessage]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], AIMessage):
            return index
    return -1


def _turns(messages: Sequence[BaseMessage]) -> list[Turn]:
    turns: list[Turn] = []
    for message in messages:
        if isinstance(message, AIMessage):
            turns.append(Turn(role="assistant", text=message.text))
            continue
        role = "system" if isinstance(message, SystemMessage) else "user"
        if isinstance(message, HumanMessage | SystemMessage) and not isinstance(message.content, str):
            for block in message.content:
                kind = block.get("type") if isinstance(block, dict) else "text"
                if kind != "text":
                    raise UserError(f"AcpChatModel sends text only; this message holds a {kind!r} block")
        turns.append(Turn(role=role, text=message.text))
    return turns
