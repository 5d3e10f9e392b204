"""The permission and mode gate on every tool a served graph runs, whatever the graph's shape.

The rules live in core ([`PermissionGate`][acpkit_core.runner.permission_gate.PermissionGate], reached
through the turn); this module only hooks LangChain's tool execution to them, in two places:

- [`gated_graph`][langchain_acp._gate.gated_graph]: the runner's copy of the graph gets a gate
  around every `ToolNode` it contains (`create_agent`, a hand-written `StateGraph` with a
  `ToolNode`, DeepAgents' main agent). A refused call gets an error `ToolMessage` and never runs;
  an approved call runs with the arguments the edit hook returns, if any.
- [`AcpToolGate`][langchain_acp._gate.AcpToolGate]: the tool start callback of every tool run
  of the turn (the runner's `AcpCallbackHandler` calls it first for each tool, and its twin for
  sync tools in worker threads), including tools no `ToolNode` of the graph holds (a DeepAgents
  subagent's, a tool called from a custom node). A call the gate has not already let through is
  decided there; a refusal raises [`ToolCallRefused`][langchain_acp._gate.ToolCallRefused] before
  the tool body runs (a `ToolNode` turns it into an error `ToolMessage`).

A call is asked about once: the gate keeps the answer per tool call id, so the ACP middleware, a
human-in-the-loop interrupt, the tool node and the callback never ask twice.

[`AcpModelGate`][langchain_acp._gate.AcpModelGate] does for model calls what the tool gate does for
tools: once the turn is cancelled, the run's next model call (in any node, subgraph or subagent)
stops the run before the model is asked anything, so a cancelled turn never pays for another
model request, even when a tool ignored the cancellation and the graph went on. It also counts the
turn's model calls: the one past the turn's `max_requests` stops the run
([`RequestLimitReached`][langchain_acp._gate.RequestLimitReached]) before it is made.
"""

from __future__ import annotations

import asyncio
import copy
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias, cast
from uuid import UUID

from acpkit_core.permissions import EditHook
from acpkit_core.runner.types import PermissionDecision
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langchain_core.tools import ToolException
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolInvocationError
from langgraph.pregel import Pregel
from langgraph.types import Command

from ._context import Binding, current_binding
from ._history import NOT_RUN_TEXT
from ._threads import ModelEventsOnly, ToolEventsOnly, running_loop

__all__ = [
    "AcpModelGate",
    "AcpToolGate",
    "RequestLimitReached",
    "RunResolver",
    "ToolCallRefused",
    "authorize",
    "gated_graph",
    "refusal_text",
]

RunResolver: TypeAlias = Callable[[UUID, UUID | None, Mapping[str, Any] | None], Binding | None]
"""Finds the binding of one run from its id, its parent's and its metadata."""

_Handler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
_Wrapper = Callable[[ToolCallRequest, _Handler], Awaitable[ToolMessage | Command[Any]]]


def refusal_text(name: str, decision: PermissionDecision, *, refused_by_rules: str | None) -> str:
    """What the model reads for a call that did not run (`refused_by_rules`: why the rules refuse it, if they do)."""
    if decision.outcome == "cancelled":
        return NOT_RUN_TEXT
    if refused_by_rules is not None:
        return refused_by_rules
    return f"The user rejected the call to `{name}`; do not retry it unless asked."


class ToolCallRefused(ToolInvocationError):
    """Raised (from a tool's start callback) for a call the permission gate refused: the tool does not run."""

    def __init__(self, message: str) -> None:  # pyright: ignore[reportMissingSuperCall]
        """Refuse with `message` (what the model reads)."""
        self.message = message
        self.tool_name = ""
        self.tool_kwargs = {}
        self.filtered_errors = None
        ToolException.__init__(self, message)


async def authorize(
    binding: Binding, tool_call_id: str, name: str, args: Mapping[str, Any]
) -> tuple[PermissionDecision, str | None]:
    """Pass one call through the gate: the decision and, when it may not run, what the model reads.

    A refused call is closed (`failed`) on the client with that text.
    """
    gate = binding.gate
    classifier = binding.tools.classifier
    kind = classifier.classify_tool(name, args)
    title = binding.tools.title_for(name, args)
    decision = await gate.authorize_tool(tool_call_id, tool_name=name, title=title, kind=kind, raw_input=dict(args))
    if decision.allowed:
        return decision, None
    by_rules = None if gate.tool_allowed(name, kind) else gate.refusal(name, kind)
    text = refusal_text(name, decision, refused_by_rules=by_rules)
    await binding.tools.fail(tool_call_id, text, name=name)
    return decision, text


def _gate_wrapper(inner: _Wrapper | None, edit: EditHook | None) -> _Wrapper:
    async def gate(request: ToolCallRequest, execute: _Handler) -> ToolMessage | Command[Any]:
        binding = current_binding.get()
        call = request.tool_call
        if binding is not None and call.get("id"):
            tool_call_id = str(call["id"])
            decision, refused = await authorize(binding, tool_call_id, call["name"], call["args"])
            if refused is not None:
                return ToolMessage(content=refused, name=call["name"], tool_call_id=tool_call_id, status="error")
            new_args = edit(call["name"], call["args"], decision) if edit is not None else None
            if new_args is not None:
                request = request.override(tool_call={**call, "args": dict(new_args)})
        return await (inner(request, execute) if inner is not None else execute(request))

    return gate


def gated_graph(graph: Pregel[Any, Any, Any, Any], edit: EditHook | None = None) -> Pregel[Any, Any, Any, Any]:
    """A copy of `graph` whose `ToolNode`s pass every call through the turn's gate (the graph is not changed).

    The gate is the outermost wrapper of each tool call, so the user's own `wrap_tool_call`
    middleware only sees calls that may run.
    """
    nodes: dict[str, Any] = {}
    for name, node in graph.nodes.items():
        bound: object = getattr(node, "bound", None)
        if isinstance(bound, ToolNode):
            gated = copy.copy(bound)
            inner = cast(_Wrapper | None, getattr(bound, "_awrap_tool_call", None))
            if inner is None and getattr(bound, "_wrap_tool_call", None) is not None:
                continue  # a sync-only wrapper: the callback gate still refuses before the tool body runs
            gated._awrap_tool_call = _gate_wrapper(inner, edit)  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
            # `ToolNode` keeps its run methods bound to itself at construction: bind them to the copy.
            gated.func = gated._func  # pyright: ignore[reportPrivateUsage]
            gated.afunc = gated._afunc  # pyright: ignore[reportPrivateUsage]
            nodes[name] = node.copy({"bound": gated})
    if not nodes:
        return graph
    return graph.copy(update={"nodes": {**graph.nodes, **nodes}})


class AcpToolGate(ToolEventsOnly, AsyncCallbackHandler):
    """Refuses, before the tool body runs, every tool run of the turn the gate does not allow.

    [`AcpCallbackHandler`][langchain_acp.AcpCallbackHandler] runs its `on_tool_start` before
    reporting each tool run (the runner's handler, and a hand-built server's), so it reaches tools
    in subgraphs and custom nodes too; on its own in a run's callbacks it gates the tools run
    where an event loop is running.
    """

    run_inline = True
    raise_error = True

    def __init__(
        self, binding: Callable[[], Binding | None] = current_binding.get, *, resolve: RunResolver | None = None
    ) -> None:
        """Gate the tools of the binding `binding()` returns (by default the running turn's).

        `resolve(run_id, parent_run_id, metadata)`, when given, finds the binding of each tool run
        instead (a handler serving several sessions); `binding()` then only gives the event loop.
        """
        self.binding = binding
        """Returns the binding whose gate decides (and whose event loop runs it)."""
        self.resolve = resolve
        """Finds the binding of one tool run, when the runs of several sessions pass here."""

    def binding_for(
        self, run_id: UUID, parent_run_id: UUID | None, metadata: Mapping[str, Any] | None
    ) -> Binding | None:
        """The binding of one tool run."""
        if self.resolve is not None:
            return self.resolve(run_id, parent_run_id, metadata)
        return self.binding()

    @property
    def ignore_agent(self) -> bool:
        """Tool events raised in a worker thread (sync tools) are left to `AcpCallbackHandler`'s twin."""
        return running_loop() is None

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
        """Decide the call (unless already decided); raise `ToolCallRefused` when it may not run."""
        binding = self.binding_for(run_id, parent_run_id, metadata)
        if binding is None:
            return
        name = str(kwargs.get("name") or serialized.get("name") or "tool")
        tool_call_id = str(kwargs.get("tool_call_id") or run_id)
        args: Mapping[str, Any] = inputs if inputs is not None else {"input": input_str}
        refused: list[str] = []

        async def decide() -> None:
            if not binding.tools.known(tool_call_id):
                await binding.tools.announce(tool_call_id, name, args)
            _, text = await authorize(binding, tool_call_id, name, args)
            if text is not None:
                refused.append(text)

        await binding.run(decide)
        if refused:
            raise ToolCallRefused(refused[0])


_CHECKED_RUNS = 256
"""Model runs the model gate remembers having decided (LangChain re-reads `run_inline` between the
inline and the gathered handlers of one event, so a handler whose answer changed meanwhile hears it twice)."""


class RequestLimitReached(BaseException):
    """Raised at a turn's model call past its request limit, before the call is made.

    A `BaseException`, as `asyncio.CancelledError` is: no tool's or middleware's error handling (a
    retry, a fallback model, a tool node's error message) takes it for a failure to recover from.
    """

    def __init__(self, limit: int) -> None:
        """The turn may make `limit` model requests."""
        super().__init__(f"the turn's request limit of {limit} model requests was reached")
        self.limit = limit
        """The limit reached."""


class AcpModelGate(ModelEventsOnly, BaseCallbackHandler):
    """Stops the run at its next chat model call once the turn is cancelled, or when the call would
    pass the turn's request limit: the model is not called.

    It raises `asyncio.CancelledError` (a cancel) or
    [`RequestLimitReached`][langchain_acp._gate.RequestLimitReached] from the model's start
    callback, which no tool's or middleware's error handling takes for a failure to recover from:
    the run ends as if its task had been cancelled, and the turn ends `cancelled` (or
    `max_turn_requests`). A sync handler: in a worker thread (a sync node's model) LangChain calls it
    in place, and it comes first among the run's handlers, so it raises before any other made a
    coroutine. On the event loop it runs inline while the next call may be made; once that call is
    to be stopped it runs with the handlers LangChain gathers after the inline ones, so that
    raising leaves no other handler's coroutine unawaited.
    """

    raise_error = True

    def __init__(
        self, binding: Callable[[], Binding | None] = current_binding.get, *, resolve: RunResolver | None = None
    ) -> None:
        """Watch the turn of the binding `binding()` returns (or `resolve(...)` finds for each run)."""
        self.binding = binding
        """Returns the binding whose turn is watched."""
        self.resolve = resolve
        """Finds the binding of one model run, when the runs of several sessions pass here."""
        self._requests: dict[int, int] = {}
        self._checked: OrderedDict[UUID, None] = OrderedDict()

    @property
    def ignore_llm(self) -> bool:
        """Not for a model's tokens and end (only a chat model's start)."""
        return True

    @property
    def run_inline(self) -> bool:  # pyright: ignore[reportIncompatibleVariableOverride]
        """Inline while the turn's next model call may be made; gathered once it is to be stopped
        (and always when the runs of several sessions pass here)."""
        if self.resolve is not None:
            return False
        binding = self.binding()
        return binding is None or self._stop(binding) is None

    def _stop(self, binding: Binding) -> BaseException | None:
        """What stops the turn's next model call, if anything."""
        if binding.gate.cancelled:
            return asyncio.CancelledError("the turn was cancelled: no more model calls")
        turn = binding.turn
        if turn is not None and self._requests.get(id(binding), 0) >= turn.max_requests:
            return RequestLimitReached(turn.max_requests)
        return None

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Raise `asyncio.CancelledError` when the run's turn is cancelled, `RequestLimitReached` when
        this call would pass the turn's request limit; else count the call (a served turn's)."""
        if run_id in self._checked:  # LangChain may hand one event to a handler twice: the first decides
            return
        self._checked[run_id] = None
        if len(self._checked) > _CHECKED_RUNS:
            self._checked.popitem(last=False)
        binding = self.resolve(run_id, parent_run_id, metadata) if self.resolve is not None else self.binding()
        if binding is None:
            return
        stop = self._stop(binding)
        if stop is not None:
            raise stop
        if binding.turn is not None:  # a hand-built server's run has no turn: no request limit
            self._requests[id(binding)] = self._requests.get(id(binding), 0) + 1
