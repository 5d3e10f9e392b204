"""`AcpModel`: any ACP agent as a pydantic-ai model, so one agent can delegate to another.

```python
from pydantic_ai import Agent
from pydantic_acp import AcpModel

async with Agent(AcpModel.from_target("examples/pydantic_agent.py")) as agent:
    result = await agent.run("Summarise README.md")
```

The remote agent is started by [`acpkit_core.delegate.RemoteAgent`][acpkit_core.delegate.RemoteAgent]
on the first request and ended when the model's context exits (`async with agent:` enters it) or on
[`aclose`][pydantic_acp.AcpModel.aclose].

- **Answer**: the remote agent's message chunks stream as `TextPart` deltas, its thoughts as
  `ThinkingPart` deltas.
- **Tool calls**: the remote agent runs its own tools; each one shows up as a
  `NativeToolCallPart` (tool name = the call's title, args = its raw input) followed, once it ended,
  by a `NativeToolReturnPart` (content = its raw output; `outcome` `failed` for a failed call), both
  with `provider_name="acp"` and the ACP kind and status in `provider_details`. pydantic-ai does not
  execute native tool parts.
- **History**: see [`acpkit_core.delegate.conversations`][acpkit_core.delegate.conversations]: the
  user messages after the last answer are sent in the remote session that holds the rest of the
  conversation; an unknown history opens a new session and is sent once as a transcript, with the
  agent's instructions.
- **Cancellation**: cancelling the run (or the stream) sends `session/cancel` to the remote agent.
- **Structured output**: tool output (`ToolOutput`, the default for a `BaseModel` output type) and
  `NativeOutput` are asked of the remote agent as one JSON object (see
  [`acpkit_core.delegate.structured`][acpkit_core.delegate.structured]); its answer becomes the
  output tool's call (or the JSON text), which pydantic-ai validates as usual. `PromptedOutput`
  and text work as they do with any model.
- **Refused**: the caller's own function tools and native tools (the remote agent cannot call
  back into this process; give it the tools instead), and non-text user content. Model settings
  (temperature, ...) are not forwarded: the remote agent picks its model.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from acp.schema import StopReason
from acpkit_core.delegate import (
    ConversationSessions,
    OutputChoice,
    RemoteAgent,
    RemoteEvent,
    RemotePermissions,
    RemoteSession,
    RemoteText,
    RemoteThought,
    RemoteToolCall,
    RemoteTurnEnd,
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
from pydantic_ai import RunContext
from pydantic_ai.messages import (
    FinishReason,
    InstructionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    NativeToolCallPart,
    NativeToolReturnPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

__all__ = ["AcpModel", "AcpStreamedResponse"]

PROVIDER = "acp"
"""`provider_name` of the parts an `AcpModel` produces."""

_FINISH: dict[StopReason, FinishReason | None] = {
    "end_turn": "stop",
    "max_tokens": "length",
    "max_turn_requests": "length",
    "refusal": "content_filter",
    "cancelled": None,
}


class AcpModel(Model):
    """A pydantic-ai model answered by an ACP agent (an `acpkit run` target or any stdio ACP command)."""

    def __init__(
        self,
        agent: RemoteAgent | Sequence[str],
        *,
        name: str | None = None,
        cwd: str | Path | None = None,
        permissions: RemotePermissions = "reject",
        settings: ModelSettings | None = None,
    ) -> None:
        """Wrap `agent`: a [`RemoteAgent`][acpkit_core.delegate.RemoteAgent] or the command that starts one.

        `permissions` answers the remote agent's permission requests (`reject` unless you say
        otherwise); `cwd` is the remote agent's working directory (default: ours).
        """
        # The remote agent is asked for one JSON object for a native output as for output tools.
        super().__init__(settings=settings, profile=ModelProfile(supports_json_schema_output=True))
        self.remote = agent if isinstance(agent, RemoteAgent) else RemoteAgent(agent, cwd=cwd, permissions=permissions)
        """The remote agent (process and connection)."""
        self.sessions = ConversationSessions(self.remote)
        """Which remote session holds which conversation."""
        self._name = name

    @classmethod
    def from_target(
        cls,
        target: str,
        *,
        name: str | None = None,
        cwd: str | Path | None = None,
        permissions: RemotePermissions = "reject",
    ) -> AcpModel:
        """A model answered by `acpkit run TARGET` (a file or module serving an agent), started with this Python."""
        return cls(acpkit_run_command(target), name=name, cwd=cwd, permissions=permissions)

    @property
    def model_name(self) -> str:
        """The name given, else the remote agent's own name once it started, else its command."""
        if self._name:
            return self._name
        info = self.remote.agent_info
        return info.name if info is not None else Path(self.remote.command[0]).name

    @property
    def system(self) -> str:
        """`acp`."""
        return PROVIDER

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None

    async def aclose(self) -> None:
        """End the remote agent's process; the next request starts a new one."""
        self.sessions.clear()
        await self.remote.aclose()

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Send the new user messages to the remote agent and wait for its whole answer."""
        async with self.request_stream(messages, model_settings, model_request_parameters) as stream:
            async for _ in stream:
                pass
        return stream.get()

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        """Send the new user messages to the remote agent and stream its answer."""
        model_settings, params = self.prepare_request(model_settings, model_request_parameters)
        _refuse_tools(params)
        choices, native = _structured(params)
        split = _last_response(messages) + 1
        earlier, new = _turns(messages[:split]), _turns(messages[split:])
        session, fresh = await self.sessions.session_for(earlier)
        text = prompt_text(
            new, earlier=earlier if fresh else (), instructions=_instructions(messages, params) if fresh else None
        )
        meta = None
        if choices:
            output = answer_schema(choices)
            text = f"{text}\n\n{answer_instructions(output)}"
            meta = prompt_meta(output=output)
        async with session.prompt(text, meta=meta) as events:
            response = AcpStreamedResponse(
                model_request_parameters=params,
                _model_name=self.model_name,
                _events=events,
                _session=session,
                _choices=choices,
                _native=native,
            )
            yield response
        if response.stop_reason == "end_turn":
            self.sessions.remember([*earlier, *new, *_turns([response.get()])], session)


@dataclass
class AcpStreamedResponse(StreamedResponse):
    """The stream of one remote prompt, as pydantic-ai response events."""

    _model_name: str
    _events: AsyncIterator[RemoteEvent]
    _session: RemoteSession
    _timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))
    texts: list[str] = field(default_factory=list[str])
    """The answer's text chunks so far."""
    stop_reason: StopReason | None = None
    """How the remote turn ended, once it did."""
    _choices: Sequence[OutputChoice] = ()
    _native: bool = False

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        async for event in self._events:
            for item in self._map(event):
                yield item

    def _map(self, event: RemoteEvent) -> list[ModelResponseStreamEvent]:
        if isinstance(event, RemoteText):
            self.texts.append(event.text)
            if self._choices:  # a structured answer: read whole, at the end
                return []
            return list(
                self._parts_manager.handle_text_delta(vendor_part_id=("text", event.message_id), content=event.text)
            )
        if isinstance(event, RemoteThought):
            return list(
                self._parts_manager.handle_thinking_delta(
                    vendor_part_id=("thought", event.message_id), content=event.text
                )
            )
        if isinstance(event, RemoteToolCall):
            return self._tool_call(event)
        self._end(event)
        return self._answer() if self._choices and event.stop_reason == "end_turn" else []

    def _answer(self) -> list[ModelResponseStreamEvent]:
        """The structured answer, read whole: the output tool's call, or the JSON text of a native output."""
        name, args = parse_answer("".join(self.texts), self._choices)
        if self._native:
            text = answer_text(args)
            return list(self._parts_manager.handle_text_delta(vendor_part_id="answer", content=text))
        return [self._parts_manager.handle_tool_call_part(vendor_part_id="answer", tool_name=name, args=args)]

    def _tool_call(self, call: RemoteToolCall) -> list[ModelResponseStreamEvent]:
        details: dict[str, Any] = {"kind": call.tool_kind, "status": call.status, "title": call.title}
        out: list[ModelResponseStreamEvent] = []
        if call.started:
            part = NativeToolCallPart(
                tool_name=call.title,
                args=call.arguments,
                tool_call_id=call.tool_call_id,
                provider_name=PROVIDER,
                provider_details=details,
            )
            out.append(self._parts_manager.handle_part(vendor_part_id=("call", call.tool_call_id), part=part))
        if call.finished:
            result = NativeToolReturnPart(
                tool_name=call.title,
                content=call.raw_output if call.raw_output is not None else call.text,
                tool_call_id=call.tool_call_id,
                outcome="success" if call.status == "completed" else "failed",
                provider_name=PROVIDER,
                provider_details=details,
            )
            out.append(self._parts_manager.handle_part(vendor_part_id=("return", call.tool_call_id), part=result))
        return out

    def _end(self, end: RemoteTurnEnd) -> None:
        self.stop_reason = end.stop_reason
        self.finish_reason = _FINISH[end.stop_reason]
        self.provider_details = {"stop_reason": end.stop_reason}
        if end.usage is not None:
            usage = RequestUsage(
                input_tokens=end.usage.input_tokens,
                output_tokens=end.usage.output_tokens,
                cache_read_tokens=end.usage.cached_read_tokens or 0,
                cache_write_tokens=end.usage.cached_write_tokens or 0,
            )
            self._add_usage(usage, reported=True, cumulative=True)

    async def close_stream(self) -> None:
        """Ask the remote agent to stop (`session/cancel`); the model waits for its answer."""
        await self._session.cancel()

    @property
    def model_name(self) -> str:
        """The model's name."""
        return self._model_name

    @property
    def provider_name(self) -> str:
        """`acp`."""
        return PROVIDER

    @property
    def provider_url(self) -> None:
        """No URL: the agent is a local process."""
        return None

    @property
    def timestamp(self) -> datetime:
        """When the request started."""
        return self._timestamp


def _refuse_tools(params: ModelRequestParameters) -> None:
    if params.function_tools:
        names = ", ".join(t.name for t in params.function_tools)
        raise UserError(
            f"AcpModel cannot offer this agent's tools ({names}) to the remote ACP agent: it runs its own tools. "
            "Give the tools to the remote agent, or use another model for this agent."
        )
    if params.native_tools:
        raise UserError("AcpModel does not support native tools: the remote ACP agent chooses its own tools")


def _structured(params: ModelRequestParameters) -> tuple[list[OutputChoice], bool]:
    """The structured answers the run accepts (its output tools, or a native output's schema), and
    whether the answer is text (native) rather than an output tool's call."""
    if params.output_mode == "native" and params.output_object is not None:
        obj = params.output_object
        name = obj.name or "final_result"
        return [OutputChoice(name=name, schema=obj.json_schema, description=obj.description)], True
    if params.output_tools and not params.allow_text_output:
        tools = params.output_tools
        return [
            OutputChoice(name=t.name, schema=t.parameters_json_schema, description=t.description) for t in tools
        ], False
    return [], False


def _last_response(messages: Sequence[ModelMessage]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], ModelResponse):
            return index
    return -1


def _turns(messages: Sequence[ModelMessage]) -> list[Turn]:
    turns: list[Turn] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            if not text:  # a structured answer (an output tool's call): its arguments are what was said
                text = "".join(answer_text(p.args or {}) for p in message.parts if isinstance(p, ToolCallPart))
            turns.append(Turn(role="assistant", text=text))
            continue
        assert isinstance(message, ModelRequest)
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                turns.append(Turn(role="system", text=part.content))
            elif isinstance(part, UserPromptPart):
                turns.append(Turn(role="user", text=_user_text(part)))
            elif isinstance(part, ToolReturnPart):
                turns.append(Turn(role="user", text=part.model_response_str()))
            else:
                turns.append(Turn(role="user", text=str(getattr(part, "content", ""))))
    return turns


def _user_text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    texts: list[str] = []
    for item in part.content:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, TextContent):
            texts.append(item.content)
        else:
            raise UserError(f"AcpModel sends text only; this prompt holds {type(item).__name__}")
    return "\n".join(texts)


def _instructions(messages: Sequence[ModelMessage], params: ModelRequestParameters) -> str | None:
    if params.instruction_parts:
        return InstructionPart.join(params.instruction_parts)
    for message in reversed(messages):
        if isinstance(message, ModelRequest) and message.instructions:
            return message.instructions
    return None
