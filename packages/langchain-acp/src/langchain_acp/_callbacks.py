"""`AcpCallbackHandler`: LangChain callbacks -> ACP updates.

Attach it to any LangChain run (`create_agent(...).ainvoke(..., config={"callbacks": [handler]})`):
model tokens become `agent_message_chunk`, reasoning becomes `agent_thought_chunk`, and each tool
run becomes a `tool_call` that goes `in_progress`, then `completed` or `failed` with its output.

Give it an ACP connection and a session id (a hand-built server), or a connection and a
`session_id_extractor` that finds each run's session in its config, or nothing: inside a turn run
by [`LangGraphRunner`][langchain_acp.LangGraphRunner] (or a `bind_connection` block) it
reports to that turn, through the same tool-call tracker the runner uses. A `content_mapper`
decides how a streamed chunk's content becomes ACP content blocks (by default its text).

When a run it reports to on its own connection fails (a tool raised, the run was cancelled),
every tool call the run left open is closed `failed`: a parallel call whose sibling raised never
stays `in_progress`.

Every tool run passes the binding's permission gate before it is reported (`AcpToolGate`, in
`langchain_acp._gate`). `handlers()` gives two handlers: this one, and its synchronous half
(`langchain_acp._sync_handler.SyncHandler`: the model gate, and the tool events of sync tools run
in worker threads). Two, on purpose: LangChain calls every handler of a run for every streamed
token, even one that ignores model events (about 1.5 µs each), so this one carries the tool gate,
the tool reports and the fallback notices.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, TypeVar, cast
from uuid import UUID

from acp.schema import (
    AgentMessageChunk,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallUpdate,
    ToolKind,
)
from acpkit_core.permissions import PermissionPolicy, RememberedPermissions
from acpkit_core.runner.emitter import TurnEmitter
from acpkit_core.runner.permission_gate import PermissionGate
from acpkit_core.runner.tool_presentation import ToolPresentation, kind_overrides, validate_presentation
from acpkit_core.runner.tool_presenter import ToolPresenter, disk_reader
from acpkit_core.runner.types import PermissionDecision
from acpkit_core.runner.updates import MessageBlock, WireUpdate, update_from_json
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk, LLMResult
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp

from ._context import Binding, StaticClassifier, current_binding
from ._events import message_parts
from ._fallback import ModelFallbacks
from ._gate import AcpModelGate, AcpToolGate, ToolCallRefused
from ._sync_handler import SyncHandler
from ._threads import running_loop
from ._tools import finish_call

__all__ = [
    "LEFT_OPEN_TEXT",
    "AcpCallbackHandler",
    "ContentBlockMapper",
    "SessionIdExtractor",
    "SessionUpdater",
]

logger = logging.getLogger("langchain_acp")

_T = TypeVar("_T")

LEFT_OPEN_TEXT = "The run stopped before this tool call finished."
"""The closing message of a tool call a hand-built run left open (its sibling raised, the run failed or stopped)."""

ContentBlockMapper: TypeAlias = Callable[[str | list[str | dict[str, Any]]], Sequence[MessageBlock]]
"""How a streamed chunk's content (a string or LangChain content blocks) becomes ACP content blocks.

`langchain_acp.to_acp_blocks` keeps images, audio and files too; the default sends the text only.
Reasoning is sent as `agent_thought_chunk` either way.
"""

SessionIdExtractor: TypeAlias = Callable[[RunnableConfig], "str | None"]
"""Finds the ACP session id of a run in its config (`configurable`, and `metadata` with the event's metadata)."""


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


def _ignore_token(*args: Any, **kwargs: Any) -> None:
    """A model token, where the handler sends none."""


class AcpCallbackHandler(AsyncCallbackHandler):
    """Reports LangChain model tokens and tool runs as ACP session updates, and gates every tool run."""

    run_inline = True
    raise_error = True
    """Only the gate's refusal (or its failure) reaches the run; an update that could not be sent is logged."""

    def __init__(
        self,
        conn: SessionUpdater | None = None,
        session_id: str | None = None,
        *,
        cwd: str = ".",
        tool_kinds: Mapping[str, ToolKind] | None = None,
        tool_presentation: Mapping[str, ToolPresentation] | None = None,
        stream_tokens: bool = True,
        content_mapper: ContentBlockMapper | None = None,
        session_id_extractor: SessionIdExtractor | None = None,
        binding: Binding | None = None,
        fallback_notices: bool = False,
    ) -> None:
        """Report to `conn` for `session_id`, or to the current ACP turn when no connection is given.

        Args:
            conn: An ACP client connection (`acp.Client`, as `acp.run_agent` hands the agent).
            session_id: The ACP session the updates belong to.
            cwd: The session's working directory (tool locations are resolved against it).
            tool_kinds: Per-tool overrides of the tool-kind classifier.
            tool_presentation: How tool calls are shown, by tool name or pattern
                (`acpkit_core.runner.tool_presentation`; diffs read the old text from this machine's disk, under `cwd`).
            stream_tokens: Send model tokens and reasoning (turn off when something else streams them).
            content_mapper: How a streamed chunk's content becomes ACP content blocks (default: its text).
            session_id_extractor: With `conn` and no `session_id`: finds each run's session id in the
                run's config (for example `lambda config: config["configurable"].get("session_id")`),
                so one handler serves every session of the connection.
            binding: Report to this binding (used by the runner).
            fallback_notices: When a model call fails and another takes over (a fallback model,
                a retry), tell the user before the new one answers (a `Model fallback` notice).
        """
        self._conn: SessionUpdater | None = None
        if conn is not None:
            if session_id is not None:
                binding = binding_for_connection(
                    conn, session_id, cwd=cwd, tool_kinds=tool_kinds, tool_presentation=tool_presentation
                )
            elif session_id_extractor is None:
                raise ValueError(
                    "AcpCallbackHandler(conn): give the session id (session_id=...) or how to find it in each "
                    "run's config (session_id_extractor=...)"
                )
            else:
                self._conn = conn
        self._owns_binding = conn is not None
        self._binding = binding
        self.stream_tokens = stream_tokens
        self.content_mapper = content_mapper
        """How a chunk's content becomes ACP content blocks (`None`: its text)."""
        self.session_id_extractor = session_id_extractor
        """Finds a run's session id in its config (with a connection and no fixed session)."""
        self._cwd, self._tool_kinds, self._tool_presentation = cwd, tool_kinds, tool_presentation
        self._sessions: dict[str, Binding] = {}
        self._run_bindings: dict[UUID, Binding] = {}
        self._parents: dict[UUID, UUID | None] = {}
        self._roots: dict[UUID, Binding] = {}
        self._last: Binding | None = None
        self._tool_ids: dict[UUID, tuple[str, str]] = {}
        self._message_runs: set[UUID] = set()
        self._gate = AcpToolGate(lambda: self.binding, resolve=self._event_binding)
        self._sync = SyncHandler(
            self, AcpModelGate(lambda: self.binding, resolve=self._model_binding if self._conn is not None else None)
        )
        self._fallbacks = ModelFallbacks() if fallback_notices else None
        self._twin_registered = False

    def handlers(self) -> list[BaseCallbackHandler]:
        """Its synchronous half (the model gate, and a twin for tools run in worker threads), and this handler.

        This handler passes each tool run through the tool gate (`AcpToolGate`, in
        `langchain_acp._gate`), which refuses, before the tool body runs, a call the session's
        policy or mode does not allow or the user rejected. The model gate (`AcpModelGate`) stops
        the run at its next model call once the turn is cancelled.

        A sync `@tool` runs `invoke` in a thread, where LangChain would run each of this handler's
        coroutines in a new event loop of its own (about a millisecond per event), and would not
        stop the tool on a refusal. Pass `callbacks=handler.handlers()` and the twin takes those
        events to the handler's loop instead, and raises a refusal in the tool's thread.
        """
        self._twin_registered = True
        return [self._sync, self]

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
    def stream_tokens(self) -> bool:
        """Send model tokens and reasoning (off when something else streams them)."""
        return self._stream_tokens

    @stream_tokens.setter
    def stream_tokens(self, value: bool) -> None:
        self._stream_tokens = value
        # Without tokens to send, a token is nothing to do: a plain function then stands for the
        # coroutine method on this instance, which LangChain calls without making a coroutine per
        # token (it still calls every handler of a run for every token).
        if value:
            self.__dict__.pop("on_llm_new_token", None)
        else:
            self.__dict__["on_llm_new_token"] = _ignore_token

    @property
    def ignore_llm(self) -> bool:
        """Skip model events entirely when neither streaming tokens nor watching fallbacks (LangChain
        then never calls us per token)."""
        return not self.stream_tokens and self._fallbacks is None

    @property
    def ignore_chain(self) -> bool:
        """Chain events matter only with a connection of our own (to close what a failed run left open)."""
        return self._conn is None and not self._owns_binding

    async def _report(self, event: str, binding: Binding, work: Callable[[], Coroutine[Any, Any, object]]) -> None:
        """Send updates on the binding's loop; one that cannot be sent is logged and the run goes on."""
        try:
            await binding.run(work)
        except Exception as error:
            logger.warning("langchain-acp: %s could not be reported: %r", event, error)

    @property
    def binding(self) -> Binding | None:
        """Where updates go now: the fixed binding, else the current turn's (else the last run's, by session)."""
        return self._binding or current_binding.get() or self._last

    # --- which session a run reports to -------------------------------------------------------------

    def _binding_for(self, run_id: UUID) -> Binding | None:
        if self._conn is None:
            return self._binding or current_binding.get()
        return self._run_bindings.get(run_id)

    def _event_binding(
        self, run_id: UUID, parent_run_id: UUID | None, metadata: Mapping[str, Any] | None
    ) -> Binding | None:
        """The binding of a run, found now (from its config) if it was not yet."""
        if self._conn is not None and run_id not in self._run_bindings:
            self._resolve(run_id, parent_run_id, metadata)
        return self._binding_for(run_id)

    def _model_binding(
        self, run_id: UUID, parent_run_id: UUID | None, metadata: Mapping[str, Any] | None
    ) -> Binding | None:
        """The binding of a model run, found without being remembered (its end may never reach this handler)."""
        if self._conn is None:
            return self._binding or current_binding.get()
        known = self._run_bindings.get(run_id)
        if known is not None or self.session_id_extractor is None:
            return known
        session_id = self._session_id_of(metadata)
        if session_id:
            return self._session_binding(session_id)
        return self._run_bindings.get(parent_run_id) if parent_run_id is not None else None

    def _session_id_of(self, metadata: Mapping[str, Any] | None) -> str | None:
        """The session id the extractor finds in the run's config (with the event's `metadata`);
        an extractor that raises is logged and finds none (the run goes on, unreported)."""
        assert self.session_id_extractor is not None
        config = cast(RunnableConfig, dict(var_child_runnable_config.get() or {}))
        config["metadata"] = {**(config.get("metadata") or {}), **(metadata or {})}
        try:
            return self.session_id_extractor(config)
        except Exception as error:
            logger.warning("langchain-acp: the session_id_extractor raised: %r", error)
            return None

    def _session_binding(self, session_id: str) -> Binding:
        binding = self._sessions.get(session_id)
        if binding is None:
            assert self._conn is not None
            binding = self._sessions[session_id] = binding_for_connection(
                self._conn,
                session_id,
                cwd=self._cwd,
                tool_kinds=self._tool_kinds,
                tool_presentation=self._tool_presentation,
            )
        self._last = binding
        return binding

    def _resolve(self, run_id: UUID, parent_run_id: UUID | None, metadata: Mapping[str, Any] | None) -> None:
        """Extractor mode: find the run's session (its config, else its parent run's) and remember it."""
        if self._conn is None or self.session_id_extractor is None:
            return
        session_id = self._session_id_of(metadata)
        if session_id:
            binding: Binding | None = self._session_binding(session_id)
        else:
            binding = self._run_bindings.get(parent_run_id) if parent_run_id is not None else None
        if binding is None:
            logger.warning("langchain-acp: no ACP session id found for a run (session_id_extractor returned None)")
            return
        self._run_bindings[run_id] = binding
        root = parent_run_id
        while root is not None and self._parents.get(root) is not None:
            root = self._parents[root]
        if root is not None:
            self._roots.setdefault(root, binding)

    # --- runs ------------------------------------------------------------------------------------

    async def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: dict[str, Any] | Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Extractor mode: remember the run's place in the tree (to close its calls if it fails)."""
        if self._conn is not None:
            self._parents[run_id] = parent_run_id

    async def on_chain_end(
        self,
        outputs: dict[str, Any] | Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Forget the run."""
        if self._conn is not None:
            self._parents.pop(run_id, None)
            self._roots.pop(run_id, None)

    async def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """The whole run failed (a tool raised, it was cancelled): close every tool call it left open."""
        if self._conn is not None:
            self._parents.pop(run_id, None)
            root_binding = self._roots.pop(run_id, None)
        else:
            root_binding = self._binding if self._owns_binding else None
        if parent_run_id is not None or root_binding is None or isinstance(error, GraphBubbleUp):
            return
        binding = root_binding
        if binding.tools.open_ids():
            await self._report(
                "closing the tool calls left open", binding, lambda: binding.tools.close_open(LEFT_OPEN_TEXT)
            )

    async def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Extractor mode: find the model run's session; after a failed call, the fallback notice."""
        self._resolve(run_id, parent_run_id, metadata)
        await self._model_started(run_id, serialized, metadata)

    async def _model_started(self, run_id: UUID, serialized: Mapping[str, Any] | None, metadata: Any) -> None:
        if self._fallbacks is None:
            return
        binding = self._binding_for(run_id)
        if binding is None:
            return
        try:
            await self._fallbacks.started(binding, run_id, serialized, metadata)
        except Exception as error:
            logger.warning("langchain-acp: a model fallback could not be reported: %r", error)

    async def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Extractor mode: find the model run's session; after a failed call, the fallback notice."""
        self._resolve(run_id, parent_run_id, metadata)
        await self._model_started(run_id, serialized, metadata)

    async def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Forget the model run."""
        if self._fallbacks is not None:
            self._fallbacks.ended(run_id)
        self._message_runs.discard(run_id)
        self._run_bindings.pop(run_id, None)

    async def on_llm_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Forget the model run; with fallback notices, remember that it failed and why."""
        if self._fallbacks is not None:
            binding = self._binding_for(run_id)
            if binding is not None:
                self._fallbacks.failed(binding, run_id, error)
        self._message_runs.discard(run_id)
        self._run_bindings.pop(run_id, None)

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
        if not self.stream_tokens:  # not reached: the setter puts `_ignore_token` in its place
            return
        binding = self._binding_for(run_id)
        if binding is None:
            return
        if run_id not in self._message_runs:
            self._message_runs.add(run_id)
            binding.emit.new_message()
        message = chunk.message if isinstance(chunk, ChatGenerationChunk) else None
        if isinstance(message, AIMessage):  # an `AIMessageChunk` is one too
            text, reasoning = message_parts(message)
            content: str | list[str | dict[str, Any]] = message.content
        else:
            text, reasoning = (token if isinstance(token, str) else ""), ""
            content = token
        mapper = self.content_mapper
        try:
            blocks = list(mapper(content)) if mapper is not None else None
        except Exception as error:  # the user's mapper: its failure drops this chunk, not the run
            logger.warning("langchain-acp: the content_mapper raised on a chunk: %r", error)
            return

        async def send() -> None:
            if reasoning:
                await binding.emit.thought(reasoning)
            if blocks is None:
                if text:
                    await binding.emit.text(text)
                return
            for block in blocks:
                await _send_block(binding, block)

        await self._report("a model token", binding, send)

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
        """A tool starts: the gate decides it (raising `ToolCallRefused` when it may not run), then
        `tool_call` (if new) and `in_progress`."""
        binding = self._event_binding(run_id, parent_run_id, metadata)
        if binding is None:
            return
        try:
            await self._gate.on_tool_start(
                serialized,
                input_str,
                run_id=run_id,
                parent_run_id=parent_run_id,
                tags=tags,
                metadata=metadata,
                inputs=inputs,
                **kwargs,
            )
        except ToolCallRefused:
            if binding.loop is not None and binding.loop is not running_loop():
                # A sync tool in a worker thread, without the twin: LangChain runs this coroutine in
                # a loop of its own and only logs what it raises, so the tool runs anyway.
                logger.warning(
                    "langchain-acp: a sync tool the gate refused runs anyway: pass "
                    "callbacks=handler.handlers() (not [handler]) so a refusal stops it"
                )
            raise
        name = str(kwargs.get("name") or serialized.get("name") or "tool")
        tool_call_id = str(kwargs.get("tool_call_id") or run_id)
        self._tool_ids[run_id] = (tool_call_id, name)
        args = inputs if inputs is not None else input_str
        await self._report("a tool's start", binding, lambda: binding.tools.start(tool_call_id, name, args))

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
        binding = self._binding_for(run_id)
        self._run_bindings.pop(run_id, None)
        found = self._tool_ids.pop(run_id, None)
        if binding is None or found is None:
            return
        await self._report(
            "a tool's result", binding, lambda: finish_call(binding.tools, found[0], output, name=found[1])
        )

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
        binding = self._binding_for(run_id)
        self._run_bindings.pop(run_id, None)
        found = self._tool_ids.pop(run_id, None)
        if binding is None or found is None or isinstance(error, GraphBubbleUp):
            # An interrupt inside the tool (a subagent's approval) pauses it; it runs again on resume.
            return
        await self._report(
            "a tool's error", binding, lambda: binding.tools.fail(found[0], f"Error: {error}", name=found[1])
        )


async def _send_block(binding: Binding, block: MessageBlock) -> None:
    """One mapped block of the answer: plain text through the token path, anything else as its own chunk."""
    if isinstance(block, TextContentBlock) and block.annotations is None and block.field_meta is None:
        await binding.emit.text(block.text)
    elif isinstance(binding.emit, TurnEmitter):
        await binding.emit.message_block(block)
    elif binding.send is not None:
        await binding.send(AgentMessageChunk(session_update="agent_message_chunk", content=block))
    else:
        logger.warning("langchain-acp: a %s block could not be sent (the emitter takes text only)", block.type)
