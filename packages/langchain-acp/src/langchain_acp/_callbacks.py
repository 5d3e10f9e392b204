"""`AcpCallbackHandler`: LangChain callbacks -> ACP updates.

Attach it to any LangChain run (`create_agent(...).ainvoke(..., config={"callbacks": [handler]})`):
model tokens become `agent_message_chunk`, reasoning becomes `agent_thought_chunk`, and each tool
run becomes a `tool_call` that goes `in_progress`, then `completed` or `failed` with its output.

Give it an ACP connection and a session id (a hand-built server), or nothing: inside a turn run
by [`LangGraphRunner`][langchain_acp.LangGraphRunner] it reports to that turn, through the
same tool-call tracker the runner uses.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar
from uuid import UUID

from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallUpdate, ToolKind
from acpkit_core.emitter import TurnEmitter, WireUpdate, update_from_json
from acpkit_core.permissions import PermissionGate, PermissionPolicy, RememberedPermissions
from acpkit_core.presentation import (
    ToolPresentation,
    ToolPresenter,
    disk_reader,
    kind_overrides,
    validate_presentation,
)
from acpkit_core.runner import PermissionDecision
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp

from ._context import Binding, StaticClassifier, current_binding
from ._events import message_parts
from ._gate import AcpToolGate
from ._threads import ThreadToolTwin, running_loop
from ._tools import finish_call

__all__ = ["AcpCallbackHandler", "SessionUpdater", "ThreadToolEvents"]

logger = logging.getLogger("langchain_acp")

_FORWARD_TIMEOUT_S = 30.0
"""How long a worker thread waits for its tool event to be reported before going on."""

_T = TypeVar("_T")


class SessionUpdater(Protocol):
    """The part of an ACP client connection the handler needs (`acp.Client`'s `session_update`)."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Send one `session/update` notification."""
        ...


_REMEMBERED: weakref.WeakKeyDictionary[Any, dict[str, RememberedPermissions]] = weakref.WeakKeyDictionary()
"""Hand-built servers: the "always" answers of each connection's sessions (kept while the connection lives)."""


def binding_for_connection(
    conn: SessionUpdater,
    session_id: str,
    *,
    cwd: str = ".",
    tool_kinds: Mapping[str, ToolKind] | None = None,
    mcp_tools: Sequence[BaseTool] = (),
    permission_policy: PermissionPolicy | None = None,
    tool_presentation: Mapping[str, ToolPresentation] | None = None,
) -> Binding:
    """A binding that sends updates for `session_id` over an ACP connection, with its own permission gate."""

    async def send(update: Any) -> None:
        await conn.session_update(session_id=session_id, update=update)

    async def send_wire(update: WireUpdate) -> None:
        await send(update_from_json(update))

    request = getattr(conn, "request_permission", None)

    async def asker(tool_call: ToolCallUpdate, options: list[PermissionOption]) -> RequestPermissionResponse:
        assert request is not None
        return await request(session_id=session_id, tool_call=tool_call, options=options)

    try:
        remembered = _REMEMBERED.setdefault(conn, {})
    except TypeError:  # a connection object that cannot be weakly referenced: answers last one run
        remembered = {}
    emitter = TurnEmitter(send_wire)
    gate = _ConnectionGate(
        policy=permission_policy,
        remembered=remembered.get(session_id),
        asker=asker if request is not None else None,
        before_ask=emitter.flush,
    )
    gate.store, gate.session_id = remembered, session_id
    tracker = emitter.tool_calls
    tracker.classifier, tracker.cwd = StaticClassifier(cwd, kind_overrides(tool_kinds or {}, tool_presentation)), cwd
    if tool_presentation:
        validate_presentation(tool_presentation)
        tracker.presenter = ToolPresenter(tool_presentation, cwd=cwd, read_text=disk_reader(cwd))
    return Binding(
        emit=emitter,
        tools=tracker,
        gate=gate,
        send=send,
        loop=running_loop(),
        mcp_tools=tuple(mcp_tools),
        session_id=session_id,
    )


class _ConnectionGate(PermissionGate):
    """A `PermissionGate` that keeps its "always" answers for the connection's session."""

    store: dict[str, RememberedPermissions]
    session_id: str

    async def request_permission(
        self, tool_call_id: str, *, tool_name: str, title: str, kind: ToolKind = "other", raw_input: Any = None
    ) -> PermissionDecision:
        """Ask (see `PermissionGate.request_permission`) and keep the session's "always" answers."""
        decision = await super().request_permission(
            tool_call_id, tool_name=tool_name, title=title, kind=kind, raw_input=raw_input
        )
        self.store[self.session_id] = self.remembered
        return decision


class AcpCallbackHandler(AsyncCallbackHandler):
    """Reports LangChain model tokens and tool runs as ACP session updates."""

    run_inline = True
    raise_error = False

    def __init__(
        self,
        conn: SessionUpdater | None = None,
        session_id: str | None = None,
        *,
        cwd: str = ".",
        tool_kinds: Mapping[str, ToolKind] | None = None,
        tool_presentation: Mapping[str, ToolPresentation] | None = None,
        stream_tokens: bool = True,
        binding: Binding | None = None,
    ) -> None:
        """Report to `conn` for `session_id`, or to the current ACP turn when no connection is given.

        Args:
            conn: An ACP client connection (`acp.Client`, as `acp.run_agent` hands the agent).
            session_id: The ACP session the updates belong to.
            cwd: The session's working directory (tool locations are resolved against it).
            tool_kinds: Per-tool overrides of the tool-kind classifier.
            tool_presentation: How tool calls are shown, by tool name or pattern (`acpkit_core.presentation`;
                diffs read the old text from this machine's disk, under `cwd`).
            stream_tokens: Send model tokens and reasoning (turn off when something else streams them).
            binding: Report to this binding (used by the runner).
        """
        if conn is not None:
            if session_id is None:
                raise ValueError("AcpCallbackHandler(conn, session_id): a session id is needed with a connection")
            binding = binding_for_connection(
                conn, session_id, cwd=cwd, tool_kinds=tool_kinds, tool_presentation=tool_presentation
            )
        self._binding = binding
        self.stream_tokens = stream_tokens
        self._tool_ids: dict[UUID, tuple[str, str]] = {}
        self._message_runs: set[UUID] = set()
        self._thread_events = ThreadToolEvents(self)
        self._gate = AcpToolGate(lambda: self.binding)
        self._twin_registered = False

    def handlers(self) -> list[BaseCallbackHandler]:
        """The permission gate, this handler, and its twin for tools LangChain runs synchronously in worker threads.

        The gate (`AcpToolGate`, in `langchain_acp._gate`) refuses, before the tool body
        runs, a call the session's policy or mode does not allow or the user rejected.

        A sync `@tool` runs `invoke` in a thread, where LangChain would run each of this handler's
        coroutines in a new event loop of its own (about a millisecond per event). Pass
        `callbacks=handler.handlers()` and the twin forwards those events to the handler's loop
        instead. `callbacks=[handler]` alone still works, only slower with sync tools.
        """
        self._twin_registered = True
        return [self._gate, self._gate.thread_twin(), self, self._thread_events]

    @property
    def ignore_agent(self) -> bool:
        """Leave tool events raised in a thread without an event loop to the twin, when it is registered."""
        return self._twin_registered and running_loop() is None

    # Having these two makes LangChain stream model calls made with `invoke`/`ainvoke` (it looks
    # for a streaming handler), so tokens reach the editor as they come.
    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[_T]) -> AsyncIterator[_T]:
        """Pass the output through unchanged."""
        return output

    def tap_output_iter(self, run_id: UUID, output: Iterator[_T]) -> Iterator[_T]:
        """Pass the output through unchanged."""
        return output

    @property
    def ignore_llm(self) -> bool:
        """Skip model events entirely when not streaming tokens (LangChain then never calls us per token)."""
        return not self.stream_tokens

    @property
    def binding(self) -> Binding | None:
        """Where updates go now: the fixed binding, else the current turn's."""
        return self._binding or current_binding.get()

    async def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Model tokens -> `agent_message_chunk`; reasoning -> `agent_thought_chunk`."""
        binding = self.binding
        if binding is None or not self.stream_tokens:
            return
        if run_id not in self._message_runs:
            self._message_runs.add(run_id)
            binding.emit.new_message()
        message = chunk.message if isinstance(chunk, ChatGenerationChunk) else None
        if isinstance(message, AIMessage | AIMessageChunk):
            text, reasoning = message_parts(message)
        else:
            text, reasoning = (token if isinstance(token, str) else ""), ""

        async def send() -> None:
            if reasoning:
                await binding.emit.thought(reasoning)
            if text:
                await binding.emit.text(text)

        await binding.run(send)

    async def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """A tool starts: `tool_call` (if new) then `in_progress`."""
        binding = self.binding
        if binding is None:
            return
        name = str(kwargs.get("name") or serialized.get("name") or "tool")
        tool_call_id = str(kwargs.get("tool_call_id") or run_id)
        self._tool_ids[run_id] = (tool_call_id, name)
        args = inputs if inputs is not None else input_str
        await binding.run(lambda: binding.tools.start(tool_call_id, name, args))

    async def on_tool_end(
        self,
        output: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """A tool finished: `completed` (or `failed` for an error `ToolMessage`) with its output."""
        binding = self.binding
        found = self._tool_ids.pop(run_id, None)
        if binding is None or found is None:
            return
        await binding.run(lambda: finish_call(binding.tools, found[0], output, name=found[1]))

    async def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """A tool raised: `failed` with the error message (a graph interrupt is a pause, not a failure)."""
        binding = self.binding
        found = self._tool_ids.pop(run_id, None)
        if binding is None or found is None or isinstance(error, GraphBubbleUp):
            # An interrupt inside the tool (a subagent's approval) pauses it; it runs again on resume.
            return
        await binding.run(lambda: binding.tools.fail(found[0], f"Error: {error}", name=found[1]))


class ThreadToolEvents(ThreadToolTwin):
    """The synchronous twin of an [`AcpCallbackHandler`][langchain_acp.AcpCallbackHandler].

    It takes the tool events LangChain raises in worker threads (sync tools), runs the handler's
    own coroutine for each on the handler's event loop and waits for it there, so the update is
    sent, in order, before the tool body runs. Events raised where an event loop is running are
    left to the handler itself. Get it with `AcpCallbackHandler.handlers()`.
    """

    raise_error = False

    def __init__(self, owner: AcpCallbackHandler) -> None:
        """Forward to `owner`."""
        self._owner = owner

    def _forward(self, coro: Coroutine[Any, Any, None]) -> Coroutine[Any, Any, None] | None:
        binding = self._owner.binding
        loop = binding.loop if binding is not None else None
        if loop is None or loop.is_closed() or not loop.is_running():
            return coro  # nowhere to forward: LangChain runs it as it would have
        try:
            asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=_FORWARD_TIMEOUT_S)
        except Exception as error:  # an update that cannot be sent must not fail the tool
            logger.warning("langchain-acp: a tool event could not be reported: %r", error)
        return None

    def on_tool_start(
        self, serialized: dict[str, Any], input_str: str, *, run_id: UUID, **kwargs: Any
    ) -> Coroutine[Any, Any, None] | None:
        """Forward `on_tool_start`."""
        return self._forward(self._owner.on_tool_start(serialized, input_str, run_id=run_id, **kwargs))

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> Coroutine[Any, Any, None] | None:
        """Forward `on_tool_end`."""
        return self._forward(self._owner.on_tool_end(output, run_id=run_id, **kwargs))

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Coroutine[Any, Any, None] | None:
        """Forward `on_tool_error`."""
        return self._forward(self._owner.on_tool_error(error, run_id=run_id, **kwargs))
