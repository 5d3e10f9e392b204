"""Graph events to ACP updates: one `(namespace, mode, data)` item at a time.

The runner streams a graph's `updates` (`subgraphs=True`) and takes its messages from the run's
callbacks as they are made ([`MessageTap`][langchain_acp._message_tap.MessageTap], the items
LangGraph's `messages` stream mode would give); both go to
[`StreamMapper.feed`][langchain_acp._events.StreamMapper.feed], in the order the run made them:

- `messages`: AI message chunks -> text (`agent_message_chunk`), reasoning (`agent_thought_chunk`),
  tool-call chunks -> `tool_call` as soon as the name is known, updated as the arguments complete;
  tool messages -> the call's `completed` / `failed` update.
- `updates`: finished AI messages -> usage and finish reason; tool messages (fallback); the state
  keys of `state_updates` through their projections (`todos` -> `plan` by default, see
  `langchain_acp._state_updates`); a `structured_response` that is a `PlanOutput` -> `plan` and its
  summary as the answer; `__interrupt__` is left to the runner (it reads the interrupts from the state);
  a write that replaces the whole history (`RemoveMessage(REMOVE_ALL_MESSAGES)` first, as LangChain's
  `SummarizationMiddleware` writes) -> a compaction (core's `emit.compaction`, with the summary kept).
  The summarization's own model call (tagged `lc_source: summarization`) is not the answer: its
  first chunk starts the compaction (`in_progress`) and its text streams as the compaction's
  summary (`compaction_summary_chunk`); the finished summary replaces it when the write lands.

A `PlanOutput` answer (`create_agent(..., response_format=PlanOutput)`) is not shown as a tool
call: the steps of its structured-output call are shown as the plan while the model writes them.

Chunks from a subgraph (a DeepAgents subagent) are shown as thoughts, and their tool calls carry
`_meta.acpkit.subagent` with the subgraph's namespace; a subgraph's `todos` are not the session's
plan (only the top-level graph's are sent as `plan`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from acpkit_core.runner.plan import PlanOutput, partial_plan, plan_items
from acpkit_core.runner.protocols import Emitter, Turn
from acpkit_core.runner.tool_lifecycle import ToolCalls
from acpkit_core.runner.types import CompactionStatus, PlanItem
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Command

from ._state_updates import DEFAULT_STATE_UPDATES, StateContext, StateProjection
from ._stop import finish_reason
from ._tools import finish_call
from ._usage import usage_from_message

__all__ = ["PLAN_OUTPUT_TOOL", "StreamMapper", "message_parts"]

PLAN_OUTPUT_TOOL = PlanOutput.__name__

SUMMARIZATION = "summarization"
"""The `lc_source` LangChain's `SummarizationMiddleware` tags its model call and its summary message with."""

_SUMMARY_PREFIX = "Here is a summary of the conversation to date:"
"""The name `create_agent` gives the structured-output tool of `response_format=PlanOutput`."""


def message_parts(message: AIMessage | AIMessageChunk) -> tuple[str, str]:
    """The text and the reasoning in one AI message or chunk (any provider's shape)."""
    content = message.content
    if isinstance(content, str) and not message.additional_kwargs:
        return content, ""  # the common streamed chunk
    text: list[str] = []
    reasoning: list[str] = []
    if isinstance(content, str):
        text.append(content)
    else:
        for block in content:
            if isinstance(block, str):
                text.append(block)
                continue
            kind = block.get("type")
            if kind == "text":
                text.append(str(block.get("text", "")))
            elif kind == "reasoning":
                value = block.get("reasoning")
                if value is None:
                    summary = block.get("summary")
                    if isinstance(summary, list):
                        value = "".join(
                            str(s.get("text", ""))  # pyright: ignore[reportUnknownMemberType,reportUnknownArgumentType]
                            for s in cast(list[Any], summary)
                            if isinstance(s, dict)
                        )
                reasoning.append(str(value or ""))
            elif kind == "thinking":
                reasoning.append(str(block.get("thinking", "")))
    extra = message.additional_kwargs.get("reasoning_content")
    if isinstance(extra, str):
        reasoning.append(extra)
    return "".join(text), "".join(reasoning)


def _messages_in(update: Any) -> list[BaseMessage]:
    """Messages written by one node update (a dict, a `Command`, or a list of them)."""
    if isinstance(update, Command):
        return _messages_in(update.update)
    if isinstance(update, list | tuple):
        found: list[BaseMessage] = []
        for item in cast(Sequence[Any], update):
            found.extend(_messages_in(item))
        return found
    if isinstance(update, Mapping):
        messages = cast(Mapping[str, Any], update).get("messages")
        if isinstance(messages, BaseMessage):
            return [messages]
        if isinstance(messages, list | tuple):
            return [m for m in cast(Sequence[Any], messages) if isinstance(m, BaseMessage)]
    return []


def _plan_output_in(update: Any) -> PlanOutput | None:
    """A `PlanOutput` structured response written by one node update."""
    if isinstance(update, Command):
        return _plan_output_in(update.update)
    if isinstance(update, Mapping):
        found = cast(Mapping[str, Any], update).get("structured_response")
        return found if isinstance(found, PlanOutput) else None
    return None


def _writes(update: Any, tool_call_id: str | None = None) -> list[tuple[Mapping[str, Any], str | None]]:
    """The state writes of one node update, each with the tool call whose result carried it (if any)."""
    if isinstance(update, Command):
        return _writes(update.update, tool_call_id)
    if isinstance(update, list | tuple):
        return [w for item in cast(Sequence[Any], update) for w in _writes(item, tool_call_id)]
    if isinstance(update, Mapping):
        calls = [m.tool_call_id for m in _messages_in(update) if isinstance(m, ToolMessage)]
        return [(cast(Mapping[str, Any], update), calls[-1] if len(calls) == 1 else tool_call_id)]
    return []


@dataclass
class _Pending:
    """A tool call being streamed: chunks are matched by index within one message."""

    id: str | None = None
    name: str | None = None
    args: str = ""


@dataclass
class StreamMapper:
    """Maps the items of one turn's `astream` to emitter calls."""

    emit: Emitter
    """Where updates go."""
    tools: ToolCalls
    """The turn's tool-call tracker (shared with the callback handler)."""
    last_finish_reason: str | None = None
    """The finish reason of the last top-level model response."""
    last_plan: tuple[PlanItem, ...] | None = None
    """The last plan sent."""
    interrupted: bool = False
    """The run paused on an interrupt (the runner then reads the interrupts from the state)."""
    turn: Turn | None = None
    """The server's turn (for projections that need the session)."""
    projections: Mapping[str, StateProjection | None] = field(default_factory=lambda: dict(DEFAULT_STATE_UPDATES))
    """How each state key's writes are shown (`state_updates`; `todos` -> the plan by default)."""
    seen: dict[str, Any] = field(default_factory=dict[str, Any])
    """The value of each projected key as last shown in the session (the `previous` of the next change)."""
    _message_id: str | None = None
    _compaction: str | None = None
    _summary_call: str | None = None  # the id of the summarization's model call streaming now
    _pending: dict[tuple[str, int], _Pending] = field(default_factory=dict[tuple[str, int], _Pending])

    async def feed(self, namespace: tuple[str, ...], mode: str, data: Any) -> None:
        """Handle one `astream` item."""
        if mode == "messages":
            message, metadata = data
            meta: Mapping[str, Any] = cast(Mapping[str, Any], metadata) if isinstance(metadata, Mapping) else {}
            if meta.get("lc_source") == SUMMARIZATION:  # the summarization middleware's model call
                if not namespace:
                    if self._compaction is None:
                        self._compaction = await self.emit.compaction(status="in_progress")
                    if isinstance(message, AIMessage):  # another call is another attempt
                        restart = self._summary_call not in (None, message.id)
                        self._summary_call = message.id
                        await self.emit.compaction_summary(self._compaction, message_parts(message)[0], restart=restart)
                return
            name: object = meta.get("lc_agent_name")
            await self._message(namespace, message, name if isinstance(name, str) else None)
        elif mode == "updates" and isinstance(data, Mapping):
            for node, update in cast(Mapping[str, Any], data).items():
                if node == "__interrupt__":
                    self.interrupted = True
                    continue
                await self._update(namespace, update, node)

    async def _message(self, namespace: tuple[str, ...], message: Any, agent: str | None = None) -> None:
        if isinstance(message, ToolMessage):
            if message.tool_call_id and self.tools.known(message.tool_call_id):
                await finish_call(self.tools, message.tool_call_id, message)
            return
        if not isinstance(message, AIMessage):  # an `AIMessageChunk` is one too
            return
        sub = bool(namespace)
        mid = message.id or ""
        if not sub and mid != self._message_id:
            self._message_id = mid
            self.emit.new_message()
        text, reasoning = message_parts(message)
        if reasoning:
            await self.emit.thought(reasoning)
        if text:
            await (self.emit.thought(text) if sub else self.emit.text(text))
        meta = _subagent_meta(namespace, agent) if sub else None
        if isinstance(message, AIMessageChunk):
            for chunk in message.tool_call_chunks:
                key = ("|".join(namespace) + "#" + mid, chunk.get("index") or 0)
                pending = self._pending.setdefault(key, _Pending())
                pending.id = pending.id or chunk.get("id")
                pending.name = pending.name or chunk.get("name")
                pending.args += chunk.get("args") or ""
                if pending.id and pending.name == PLAN_OUTPUT_TOOL and not sub:
                    await self.tools.announce(pending.id, PLAN_OUTPUT_TOOL, None, hidden=True)
                    await self._partial_plan(pending.args)
                elif pending.id and pending.name:
                    await self.tools.announce(pending.id, pending.name, pending.args, meta=meta)
        else:
            for call in message.tool_calls:
                if call["id"]:
                    hidden = call["name"] == PLAN_OUTPUT_TOOL and not sub
                    await self.tools.announce(call["id"], call["name"], call["args"], meta=meta, hidden=hidden)

    async def _update(self, namespace: tuple[str, ...], update: Any, node: str = "") -> None:
        if not namespace:
            await self._compacted(update)
        for message in _messages_in(update):
            if isinstance(message, AIMessage):
                usage = usage_from_message(message)
                if usage is not None:
                    await self.emit.usage(usage)
                if not namespace:
                    self.last_finish_reason = finish_reason(message)
                meta = _subagent_meta(namespace, None) if namespace else None
                for call in message.tool_calls:
                    if call["id"]:
                        hidden = call["name"] == PLAN_OUTPUT_TOOL and not namespace
                        await self.tools.announce(call["id"], call["name"], call["args"], meta=meta, hidden=hidden)
            elif isinstance(message, ToolMessage) and message.tool_call_id:
                await finish_call(self.tools, message.tool_call_id, message, name=message.name)
        # The state is the session's: a subagent's own writes (its `write_todos` in a subgraph)
        # stay in its tool calls and do not replace the main agent's plan or files on the client.
        if not namespace:
            await self._project(update, node)
        answer = None if namespace else _plan_output_in(update)
        if answer is not None:
            await self._set_plan(tuple(plan_items(answer) or ()))
            if answer.summary:
                self.emit.new_message()
                await self.emit.text(answer.summary)

    async def _compacted(self, update: Any) -> None:
        """A write that replaces the whole history (`RemoveMessage(REMOVE_ALL_MESSAGES)` first, as
        LangChain's `SummarizationMiddleware` does) is a compaction: core's `emit.compaction`, with the
        summary it kept."""
        messages = _messages_in(update)
        if not messages or not (isinstance(messages[0], RemoveMessage) and messages[0].id == REMOVE_ALL_MESSAGES):
            return
        summary = None
        for message in messages[1:]:
            if isinstance(message, HumanMessage) and message.additional_kwargs.get("lc_source") == SUMMARIZATION:
                text = str(message.text)
                summary = text.split("\n\n", 1)[1] if text.startswith(_SUMMARY_PREFIX) else text
                break
        cid, self._compaction, self._summary_call = self._compaction, None, None
        await self.emit.compaction(status="completed", compaction_id=cid, summary=summary)

    async def end_compaction(self, status: CompactionStatus) -> None:
        """Finish a compaction that started but never completed (the run failed or was cancelled)."""
        cid, self._compaction, self._summary_call = self._compaction, None, None
        if cid is not None:
            with contextlib.suppress(Exception):  # the client may be gone: the turn's outcome stands
                await self.emit.compaction(status=status, compaction_id=cid, error="The run stopped first.")

    async def _project(self, update: Any, node: str) -> None:
        """Show the writes of the projected state keys."""
        for written, tool_call_id in _writes(update):
            for key, value in written.items():
                projection = self.projections.get(key)
                if projection is None:
                    continue
                previous = self.seen.get(key)
                ctx = StateContext(
                    key=key,
                    node=node,
                    tool_call_id=tool_call_id,
                    previous=previous,
                    emit=self.emit,
                    tools=self.tools,
                    turn=self.turn,
                )
                await projection(value, ctx)
                both = isinstance(previous, Mapping) and isinstance(value, Mapping)
                self.seen[key] = (
                    {**cast(Mapping[str, Any], previous), **cast(Mapping[str, Any], value)} if both else value
                )

    async def _partial_plan(self, args: str) -> None:
        """The steps of a `PlanOutput` the model is still writing, as the plan."""
        steps = tuple(partial_plan(args))
        if steps:
            await self._set_plan(steps)

    async def _set_plan(self, plan: tuple[PlanItem, ...]) -> None:
        if plan != self.last_plan:
            self.last_plan = plan
            await self.emit.plan(plan)


def _subagent_meta(namespace: tuple[str, ...], agent: str | None) -> dict[str, Any]:
    """`_meta` of a subgraph's tool call: its namespace, and the subagent's name when known."""
    marker: dict[str, Any] = {"subagent": "|".join(namespace)}
    if agent:
        marker["agent"] = agent
    return {"acpkit": marker}
