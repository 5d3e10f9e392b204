"""The messages of a run, handed to the turn's mapper from the run's own callbacks.

LangGraph's `stream_mode="messages"` is a callback handler that puts each model chunk on the
stream's queue from another loop pass (`call_soon_threadsafe`), and `astream` wakes its reader
for each one: about 40% of what a streamed token costs LangGraph. The runner streams only the
`updates` of its graph and takes the messages here instead, in the task that made them, with the
same rules as LangGraph's handler:

- a chat model's chunks as they stream, unless its run is tagged `nostream`;
- a model's final message when it was not streamed (the model answered in one piece);
- the messages a graph node returns (a tool node's `ToolMessage`s, a message a node writes),
  except those it was given or that were already handed over (by id);
- each with the namespace of the graph that ran it (`()` for the top-level graph, a subgraph's
  `("node:task-id", ...)`), and the run's metadata (`lc_source`, `langgraph_node`, tags).

Messages are handed over one at a time, in the order the run made them; a run's parallel
branches take turns.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast
from uuid import UUID, uuid4

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, LLMResult
from langgraph.constants import TAG_HIDDEN, TAG_NOSTREAM
from langgraph.types import Command

from ._threads import ModelAndNodeEventsOnly, running_loop

__all__ = ["MessageTap", "graph_namespace"]

Feed = Callable[[tuple[str, ...], str, Any], Awaitable[None]]
"""Where messages go: `(namespace, "messages", (message, metadata))`, as `StreamMapper.feed` takes them."""

_NS_SEP = "|"  # LangGraph's separator of checkpoint namespace segments
_PUSH = "__pregel_push"  # the first segment of a `@task` call's `langgraph_path`

_Meta = tuple[tuple[str, ...], dict[str, Any]]


def graph_namespace(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """The namespace of the graph a run belongs to, from its run metadata: the checkpoint
    namespace without the task's own segment (nor one per enclosing `@task` call)."""
    ns = tuple(str(metadata.get("langgraph_checkpoint_ns", "")).split(_NS_SEP))
    path = metadata.get("langgraph_path", ())
    drop = 1
    while isinstance(path, tuple) and len(cast(tuple[Any, ...], path)) == 4:
        head, inner, _, called = cast(tuple[Any, Any, Any, Any], path)
        if head != _PUSH or called is not True:
            break
        drop += 1
        path = inner
    return ns[:-drop]


def _values(obj: Any) -> Sequence[Any]:
    """The top-level values of a node's input or output (a dict, a pydantic model, a dataclass)."""
    if isinstance(obj, Mapping):
        return list(cast(Mapping[str, Any], obj).values())
    fields: Any = getattr(obj.__class__, "model_fields", None) or getattr(obj, "__dataclass_fields__", None)
    if isinstance(fields, Mapping) and not isinstance(obj, type):
        return [getattr(obj, name) for name in cast(Mapping[str, Any], fields)]
    return ()


def _ids_in(inputs: Any) -> set[str]:
    """The ids of the messages in a node's input."""
    ids: set[str] = set()
    for value in _values(inputs):
        items = (
            [value]
            if isinstance(value, BaseMessage)
            else cast(Sequence[Any], value)
            if isinstance(value, Sequence) and not isinstance(value, str)
            else ()
        )
        ids.update(m.id for m in items if isinstance(m, BaseMessage) and m.id is not None)
    return ids


def _messages_of(response: Any) -> list[BaseMessage]:
    """The messages a node returned (alone, in a list, in its state values, in `Command` updates)."""
    if isinstance(response, Command):
        return _messages_of(response.update)
    if isinstance(response, BaseMessage):
        return [response]
    if isinstance(response, Sequence) and not isinstance(response, str):
        items = cast(Sequence[Any], response)
        if any(isinstance(item, Command) for item in items):
            return [m for item in items for m in _messages_of(item)]
        return [item for item in items if isinstance(item, BaseMessage)]
    found: list[BaseMessage] = []
    for value in _values(response):
        if isinstance(value, BaseMessage):
            found.append(value)
        elif isinstance(value, Sequence) and not isinstance(value, str):
            found.extend(item for item in cast(Sequence[Any], value) if isinstance(item, BaseMessage))
    return found


class _Runs:
    """Which runs are followed, and which messages were handed over (shared by a tap and its twin)."""

    def __init__(self) -> None:
        self.runs: dict[UUID, _Meta] = {}
        """The model runs followed."""
        self.nodes: dict[UUID, tuple[_Meta, Any]] = {}
        """The graph nodes running, with their input."""
        self.seen: set[str] = set()
        """The ids of the messages handed over."""

    def fresh(self, message: BaseMessage, *, dedupe: bool) -> bool:
        """True when `message` is to be handed over (and now counts as handed over)."""
        if dedupe and message.id in self.seen:
            return False
        if message.id is None:
            message.id = str(uuid4())
        self.seen.add(message.id)
        return True

    def model_started(self, run_id: UUID, tags: list[str] | None, metadata: dict[str, Any] | None) -> None:
        if metadata and (not tags or TAG_NOSTREAM not in tags):
            user_tags = [t for t in tags or () if not t.startswith("seq:step")]  # LangGraph's bookkeeping
            if user_tags:
                metadata = {**metadata, "tags": user_tags}
            self.runs[run_id] = (graph_namespace(metadata), metadata)

    def token(self, run_id: UUID, chunk: Any) -> tuple[_Meta, BaseMessage] | None:
        meta = self.runs.get(run_id)
        if meta is None or not isinstance(chunk, ChatGenerationChunk):
            return None
        self.fresh(chunk.message, dedupe=False)
        return meta, chunk.message

    def model_ended(self, run_id: UUID, response: LLMResult) -> list[tuple[_Meta, BaseMessage]]:
        meta = self.runs.pop(run_id, None)
        if meta is None or not response.generations or not response.generations[0]:
            return []
        generation = response.generations[0][0]
        if isinstance(generation, ChatGeneration) and self.fresh(generation.message, dedupe=True):
            return [(meta, generation.message)]
        return []

    def node_started(
        self, run_id: UUID, inputs: Any, tags: list[str] | None, metadata: dict[str, Any] | None, name: Any
    ) -> None:
        if metadata and name == metadata.get("langgraph_node") and (not tags or TAG_HIDDEN not in tags):
            self.nodes[run_id] = ((graph_namespace(metadata), metadata), inputs)

    def node_ended(self, run_id: UUID, outputs: Any) -> list[tuple[_Meta, BaseMessage]]:
        found = self.nodes.pop(run_id, None)
        if found is None:
            return []
        meta, inputs = found
        given: set[str] | None = None
        fresh: list[tuple[_Meta, BaseMessage]] = []
        for message in _messages_of(outputs):
            # A message the node was given is not its own (a node may return the history it kept).
            # Only a message with an id not handed over yet can be one: the node's input is read
            # then, once (a tool's result has no id yet; a model's answer was handed over as it streamed).
            if message.id is not None and message.id not in self.seen:
                given = _ids_in(inputs) if given is None else given
                if message.id in given:
                    continue
            if self.fresh(message, dedupe=True):
                fresh.append((meta, message))
        return fresh


class _ByThread:
    """An event with two bodies: a coroutine where an event loop runs (LangChain awaits it in the
    run's task) and a plain function in a worker thread (a sync node, a sync model call), where
    LangChain would run a coroutine in an event loop of its own, about a millisecond an event."""

    def __init__(self, on_loop: Callable[..., Awaitable[None]], in_thread: Callable[..., None]) -> None:
        self._on_loop, self._in_thread = on_loop, in_thread

    def __get__(self, tap: MessageTap | None, owner: type[MessageTap]) -> Any:
        if tap is None:
            return self
        return (self._on_loop if running_loop() is not None else self._in_thread).__get__(tap, owner)


class MessageTap(ModelAndNodeEventsOnly, BaseCallbackHandler):
    """Hands a run's messages to `feed` as they are made (see the module); the runner feeds the
    items of its stream's `updates` through `updates`, in turn with them."""

    run_inline = True
    """In the run's own task, in order."""
    raise_error = True
    """A message that could not be handed over fails the run, as it would fail the stream."""

    def __init__(self, feed: Feed) -> None:
        """Hand every message of the runs this handler sees to `feed`, on the loop running now."""
        self._feed = feed
        self._loop = asyncio.get_running_loop()
        self._lock = asyncio.Lock()
        self._runs = _Runs()
        self._forwarded: set[concurrent.futures.Future[None]] = set()
        self._closed = False

    async def _give(self, namespace: tuple[str, ...], mode: str, data: Any) -> None:
        """One item to `feed`, in turn (the lock serves its waiters first come, first served)."""
        await self._lock.acquire()
        try:
            await self._feed(namespace, mode, data)
        finally:
            self._lock.release()

    async def updates(self, namespace: tuple[str, ...], data: Any) -> None:
        """Hand over one item of the stream's `updates`, in turn with the messages."""
        await self._give(namespace, "updates", data)

    async def drained(self) -> None:
        """Wait until every message handed over from another thread or loop has been fed."""
        while self._forwarded:
            try:
                future = self._forwarded.pop()
            except KeyError:  # done meanwhile (its done callback took it)
                break
            await asyncio.wrap_future(future)

    def close(self) -> None:
        """Drop what is still being handed over from another thread or loop (the turn is over)."""
        self._closed = True
        while self._forwarded:
            with contextlib.suppress(KeyError):  # taken meanwhile by `drained` or its done callback
                self._forwarded.pop().cancel()

    async def _hand(self, found: list[tuple[_Meta, BaseMessage]]) -> None:
        if asyncio.get_running_loop() is not self._loop:  # a loop of the run's own (`asyncio.run` in a node)
            self._forward(found)
            return
        for meta, message in found:
            await self._give(meta[0], "messages", (message, meta[1]))

    def _forward(self, found: list[tuple[_Meta, BaseMessage]]) -> None:
        """Hand messages over from another thread or loop without waiting (the tap's loop may be
        waiting for the caller): each in a task of the tap's loop, started in order, fed in turn."""
        if self._closed:  # a sync node's thread goes on after its run was stopped
            return
        for meta, message in found:
            future = asyncio.run_coroutine_threadsafe(self._give(meta[0], "messages", (message, meta[1])), self._loop)
            self._forwarded.add(future)
            future.add_done_callback(self._forwarded.discard)

    # Having these two makes LangChain stream model calls made with `invoke`/`ainvoke`.
    def tap_output_aiter(self, run_id: UUID, output: Any) -> Any:
        """Pass the output through unchanged."""
        return output

    def tap_output_iter(self, run_id: UUID, output: Any) -> Any:
        """Pass the output through unchanged."""
        return output

    # --- the events: what each does is `_Runs`'s; where the messages go depends on the thread ---

    def _model_started(
        self, serialized: Any, messages: Any, *, run_id: UUID, tags: Any = None, metadata: Any = None, **kw: Any
    ) -> None:
        self._runs.model_started(run_id, tags, metadata)

    async def _model_started_on_loop(self, *args: Any, **kwargs: Any) -> None:
        self._model_started(*args, **kwargs)

    async def _token_on_loop(self, token: Any, *, chunk: Any = None, run_id: UUID, **kwargs: Any) -> None:
        found = self._runs.token(run_id, chunk)
        if found is not None:
            await self._hand([found])

    def _token_in_thread(self, token: Any, *, chunk: Any = None, run_id: UUID, **kwargs: Any) -> None:
        found = self._runs.token(run_id, chunk)
        if found is not None:
            self._forward([found])

    async def _model_ended_on_loop(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        await self._hand(self._runs.model_ended(run_id, response))

    def _model_ended_in_thread(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self._forward(self._runs.model_ended(run_id, response))

    def _forget(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._runs.runs.pop(run_id, None)
        self._runs.nodes.pop(run_id, None)

    async def _forget_on_loop(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._forget(error, run_id=run_id)

    def _node_started(
        self, serialized: Any, inputs: Any, *, run_id: UUID, tags: Any = None, metadata: Any = None, **kwargs: Any
    ) -> None:
        self._runs.node_started(run_id, inputs, tags, metadata, kwargs.get("name"))

    async def _node_started_on_loop(self, *args: Any, **kwargs: Any) -> None:
        self._node_started(*args, **kwargs)

    async def _node_ended_on_loop(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        await self._hand(self._runs.node_ended(run_id, outputs))

    def _node_ended_in_thread(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._forward(self._runs.node_ended(run_id, outputs))

    on_chat_model_start = _ByThread(_model_started_on_loop, _model_started)  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    """Follow the model run unless it is tagged `nostream`."""
    on_llm_new_token = _ByThread(_token_on_loop, _token_in_thread)  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    """A streamed chunk of a followed model run."""
    on_llm_end = _ByThread(_model_ended_on_loop, _model_ended_in_thread)  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    """A model's whole message, when it was not streamed."""
    on_llm_error = _ByThread(_forget_on_loop, _forget)  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    """Forget the failed model run."""
    on_chain_start = _ByThread(_node_started_on_loop, _node_started)  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    """Follow a graph node; the messages it is given are not its own."""
    on_chain_end = _ByThread(_node_ended_on_loop, _node_ended_in_thread)  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    """The messages a node returned, unless handed over already."""
    on_chain_error = _ByThread(_forget_on_loop, _forget)  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    """Forget the failed node."""
