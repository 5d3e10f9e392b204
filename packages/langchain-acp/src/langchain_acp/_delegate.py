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
- **Structured output**: `with_structured_output(...)`, `create_agent(..., response_format=...)`
  (tool or provider strategy) and any `bind_tools(..., tool_choice="any")` that requires a call
  are asked of the remote agent as one JSON object (see
  [`acpkit_core.delegate.structured`][acpkit_core.delegate.structured]); its answer comes back as
  that tool's call (or, for `response_format` JSON, as the text), which LangChain parses as usual.
- **Refused**: `bind_tools` that leaves the call to the model (the remote agent cannot call back
  into this process: give it the tools), `stop` sequences, and non-text message content.
- **Event loops**: async calls use the caller's loop; synchronous calls (`invoke`) run on one
  private loop thread per model. Use one model for one of the two.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from acpkit_core.delegate import (
    ConversationSessions,
    OutputChoice,
    RemoteAgent,
    RemoteEvent,
    RemotePermissions,
    RemoteText,
    RemoteThought,
    RemoteToolCall,
    Turn,
    acpkit_run_command,
    answer_instructions,
    answer_schema,
    answer_text,
    parse_answer,
    prompt_text,
)
from acpkit_core.errors import UserError
from acpkit_core.prompt import prompt_meta
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
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

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Runnable[Any, AIMessage]:
        """Tools the model must call (structured output) become one JSON answer; others are refused.

        When the call is required (`tool_choice` `"any"`, `"required"` or a tool's name, as
        `with_structured_output` and `create_agent`'s structured output ask), the remote agent is asked
        for one JSON object naming its choice, returned as that tool's call. Tools left to the model's
        choice are refused: the remote agent runs its own tools and cannot call ours.
        """
        if not tools:
            return self.bind(**kwargs) if kwargs else self
        specs = [convert_to_openai_tool(t)["function"] for t in tools]
        chosen = _forced(tool_choice, kwargs)
        if chosen is None:
            names = ", ".join(str(s["name"]) for s in specs)
            raise UserError(
                f"AcpChatModel cannot offer tools ({names}) to the remote ACP agent: it runs its own tools. "
                "Give the tools to the remote agent, or use another model for this graph. (Tools the model must "
                "call, as structured output asks with tool_choice='any', are answered as one JSON object.)"
            )
        choices = [
            {
                "name": s["name"],
                "schema": s.get("parameters") or {"type": "object"},
                "description": s.get("description"),
            }
            for s in specs
            if chosen == "" or s["name"] == chosen
        ]
        return self.bind(acp_output_choices=choices, **kwargs)

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
        choices, native = _structured(kwargs)
        split = _last_answer(messages) + 1
        earlier, new = _turns(messages[:split]), _turns(messages[split:])
        session, fresh = await self._sessions.session_for(earlier)
        blocks = _Blocks()
        answer: list[str] = []
        said: str | None = None
        stop_reason: str | None = None
        text, meta = prompt_text(new, earlier=earlier if fresh else ()), None
        if choices:
            output = answer_schema(choices)
            text, meta = f"{text}\n\n{answer_instructions(output)}", prompt_meta(output=output)
        async with session.prompt(text, meta=meta) as events:
            async for event in events:
                if isinstance(event, RemoteText):
                    answer.append(event.text)
                    if choices:  # a structured answer: read whole, at the end
                        continue
                if event.kind == "end" and choices and event.stop_reason == "end_turn":
                    name, args = parse_answer("".join(answer), choices)
                    said = answer_text(args)
                    yield ChatGenerationChunk(message=blocks.answer(name, said, native=native))
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
            reply = said if said is not None else "".join(answer)
            self._sessions.remember([*earlier, *new, Turn(role="assistant", text=reply)], session)


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

    def answer(self, name: str, said: str, *, native: bool) -> AIMessageChunk:
        """The structured answer: the JSON as a text block, or the call of the tool the remote agent chose."""
        if native:
            return AIMessageChunk(content=[{"type": "text", "text": said, "index": self._next("text")}])
        call = {"name": name, "args": said, "id": f"call_{uuid.uuid4().hex[:24]}", "index": 0}
        return AIMessageChunk(content=[], tool_call_chunks=[call])  # pyright: ignore[reportArgumentType]

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


def _forced(tool_choice: Any, kwargs: dict[str, Any]) -> str | None:
    """The tool a call is required of (`""`: any of them), `None` when calling one is left to the model."""
    if isinstance(tool_choice, dict):
        function = cast(dict[str, Any], cast(dict[str, Any], tool_choice).get("function") or {})
        return str(function.get("name") or "")
    if tool_choice in ("any", "required", True) or "ls_structured_output_format" in kwargs:
        return ""
    if isinstance(tool_choice, str) and tool_choice not in ("auto", "none"):
        return tool_choice
    return None


def _structured(kwargs: dict[str, Any]) -> tuple[list[OutputChoice], bool]:
    """The structured answers a call accepts (bound output tools, or a `response_format` JSON schema),
    and whether the answer is text (a JSON `response_format`) rather than a tool call."""
    bound: Any = kwargs.get("acp_output_choices")
    if bound:
        return [
            OutputChoice(name=c["name"], schema=c["schema"], description=c.get("description")) for c in bound
        ], False
    response_format: object = kwargs.get("response_format")
    if isinstance(response_format, dict) and cast(dict[str, Any], response_format).get("type") == "json_schema":
        spec = cast(dict[str, Any], cast(dict[str, Any], response_format).get("json_schema") or {})
        name = str(spec.get("name") or "response")
        return [
            OutputChoice(
                name=name, schema=spec.get("schema") or {"type": "object"}, description=spec.get("description")
            )
        ], True
    return [], False


def _last_answer(messages: Sequence[BaseMessage]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], AIMessage):
            return index
    return -1


def _turns(messages: Sequence[BaseMessage]) -> list[Turn]:
    turns: list[Turn] = []
    for message in messages:
        if isinstance(message, AIMessage):
            text = message.text or "".join(answer_text(c["args"]) for c in message.tool_calls)
            turns.append(Turn(role="assistant", text=text))
            continue
        role = "system" if isinstance(message, SystemMessage) else "user"
        if isinstance(message, HumanMessage | SystemMessage) and not isinstance(message.content, str):
            for block in message.content:
                kind = block.get("type") if isinstance(block, dict) else "text"
                if kind != "text":
                    raise UserError(f"AcpChatModel sends text only; this message holds a {kind!r} block")
        turns.append(Turn(role=role, text=message.text))
    return turns
