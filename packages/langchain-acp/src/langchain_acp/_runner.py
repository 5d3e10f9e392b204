"""The LangGraph runner: one ACP turn = one run (or a few, across approvals) of a compiled graph.

[`LangGraphRunner`][langchain_acp.LangGraphRunner] implements `acpkit_core.runner.protocols.Runner`
(and the optional `SessionHooks` and `ToolLister`) for any compiled graph whose state has
`messages`: `langchain.agents.create_agent` graphs, DeepAgents graphs, hand-built `StateGraph`s.

- input: one `HumanMessage` rendered from the prompt IR;
- memory: the graph's own checkpointer, or an embedded one; the thread id is the ACP session id;
- rewind: each run's checkpoints carry the prompt's id, so `/rewind` finds where a prompt began (`_rewind`);
- streaming: `astream(stream_mode="updates", subgraphs=True)` and the run's messages as it makes
  them ([`MessageTap`][langchain_acp._message_tap.MessageTap]) through
  [`StreamMapper`][langchain_acp._events.StreamMapper], tool runs through
  [`AcpCallbackHandler`][langchain_acp.AcpCallbackHandler];
- approvals: LangChain's human-in-the-loop interrupts become permission requests;
- permissions: every tool call passes the turn's gate (`_gate`), whatever the graph's shape;
- cancellation: the server cancels the turn's task, which stops the graph; the run's next model call
  stops it too (no model call after a cancel);
- limits: a turn makes at most `turn.max_requests` model calls (`max_turn_requests`), counted at
  each model call of the run (subagents' included); the one past it ends the turn `max_turn_requests`.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias, cast

from acp.schema import StopReason
from acpkit_core.errors import RewindError, UserError
from acpkit_core.permissions import EditHook
from acpkit_core.prompt.ir import Prompt, Text
from acpkit_core.runner.capabilities import RunnerCapabilities
from acpkit_core.runner.emitter import TurnEmitter
from acpkit_core.runner.notices import notice_limit, notice_mcp_failures
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.providers import EndpointSupport
from acpkit_core.runner.rewind import RewindPoint
from acpkit_core.runner.stop import limit_message, request_limit_message, stop_reason_from_finish
from acpkit_core.runner.tool_lifecycle import ToolCalls
from acpkit_core.runner.types import McpServerStatus, Session, ToolInfo, ToolListing, ToolSource
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import GraphRecursionError
from langgraph.pregel import Pregel
from langgraph.types import Command, Durability

from ._approvals import plan_questions, resume_value, to_decision
from ._callbacks import AcpCallbackHandler
from ._checkpoint import EmbeddedCheckpointer, has_checkpointer, with_checkpointer
from ._context import Binding, current_binding
from ._endpoints import endpoint_support
from ._events import StreamMapper
from ._gate import RequestLimitReached, gated_graph
from ._history import answer_unanswered, messages_of, remember_unstarted, was_stopped
from ._mcp import MCP_SERVER_METADATA, McpTools
from ._mcp_middleware import MCP_MIDDLEWARE_NAME
from ._message_tap import MessageTap
from ._model_middleware import has_model_middleware
from ._permission_middleware import AcpPermissionMiddleware
from ._render import to_human_message
from ._rewind import PROMPT_METADATA_KEY, apply_start, find_start
from ._session import LangGraphSessionState
from ._state_updates import DEFAULT_STATE_UPDATES, StateProjection, check_state_updates
from ._stop import limit_stop_reason as _limit_stop_reason
from ._warm import warm_up

__all__ = ["Graph", "GraphFactory", "LangGraphRunner", "SessionContext", "human_message"]

DEFAULT_RECURSION_LIMIT = 9_999
"""The recursion limit of a run whose graph sets none and whose developer gave none (`create_agent`'s
and DeepAgents' own): the turn's request limit (`max_turn_requests`) is what stops a long turn."""

STEPS_PER_REQUEST = 10
"""Graph steps allowed per model request, at least, when the runner sets the recursion limit (a model
call, its tools and a few middleware nodes), so that `max_turn_requests` is reached first."""

LANGGRAPH_RECURSION_LIMIT = 25
"""LangGraph's own default recursion limit (steps of one run)."""

PLAN_TOOL_NAME = "write_todos"
"""The tool that writes a graph's `todos` (LangChain's `TodoListMiddleware`, DeepAgents): its plan tool."""

Graph: TypeAlias = Pregel[Any, Any, Any, Any]
"""A compiled LangGraph graph (`CompiledStateGraph` and anything else that is a `Pregel`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionContext:
    """What a graph factory gets to build the graph of one session."""

    session: Session
    """The ACP session (id, cwd, mode, config values)."""
    model_id: str | None = None
    """The model chosen through the `model` config option, if models are offered."""
    mcp_tools: Sequence[BaseTool] = ()
    """LangChain tools of the MCP servers the client gave for this session (already connected)."""


GraphFactory: TypeAlias = Callable[[SessionContext], "Graph | Awaitable[Graph]"]
"""Builds the graph for a session (called again when the model changes)."""


def human_message(prompt: Prompt, *, root_dir: str | None = None) -> BaseMessage:
    """The `HumanMessage` a turn adds to the graph's `messages` (paths shown relative to `root_dir`, the cwd)."""
    return to_human_message(prompt, root_dir=root_dir)


def has_messages_state(graph: Graph) -> bool:
    """True when the graph's state has a `messages` channel."""
    channels: Mapping[str, object] = graph.channels  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    return "messages" in channels


@dataclass
class LangGraphRunner:
    """Runs ACP turns on a compiled LangGraph graph (or on one built per session by a factory)."""

    graph: Graph | None = None
    """The graph to serve (exclusive with `graph_factory`)."""
    graph_factory: GraphFactory | None = None
    """Builds a graph per session (gets MCP tools and the chosen model)."""
    checkpointer: BaseCheckpointSaver[Any] | None = None
    """Saver to use instead of the graph's own or the embedded one."""
    embedded: EmbeddedCheckpointer = field(default_factory=lambda: EmbeddedCheckpointer(None))
    """The embedded saver used when neither the graph nor the developer gives one."""
    recursion_limit: int | None = None
    """LangGraph recursion limit per run (hitting it ends the turn `max_turn_requests`). `None`: the
    graph's own (`create_agent` and DeepAgents set 9,999), else the larger of 9,999 and ten steps per
    model request the turn may make (`max_turn_requests`): the turn's request limit stops it first."""
    edit_tool_call: EditHook | None = None
    """Lets the developer replace a tool call's arguments when the user approves it."""
    config: RunnableConfig | None = None
    """Extra config merged into every run (tags, metadata, callbacks)."""
    state_updates: Mapping[str, StateProjection | None] | None = None
    """How writes of graph-state keys are shown (`langchain_acp._state_updates`); `todos` is the plan
    unless mapped otherwise."""
    durability: Durability = "exit"
    """When LangGraph writes checkpoints: `"exit"` (default) once per run, when it ends or pauses;
    `"async"`/`"sync"` after every step. With `"exit"` a turn costs one checkpoint write, and a
    crash mid-turn leaves the previous turn's checkpoint (never a dangling tool call); every
    completed turn is stored before the prompt is answered in all three modes."""
    _graphs: dict[tuple[str, str | None], Graph] = field(default_factory=dict[tuple[str, str | None], Graph])
    _mcp: dict[str, McpTools] = field(default_factory=dict[str, McpTools])
    _mcp_unreported: set[str] = field(default_factory=set[str])
    _open: set[str] = field(default_factory=set[str])
    _state_seen: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    _preparing: asyncio.Future[None] | None = None

    def __post_init__(self) -> None:
        if (self.graph is None) == (self.graph_factory is None):
            raise UserError("LangGraphRunner: pass exactly one of `graph` or `graph_factory`.")
        if self.graph is not None:
            check_graph(self.graph)
            check_state_updates(self.state_updates or {}, list(cast(Mapping[str, object], self.graph.channels)))  # pyright: ignore[reportUnknownMemberType]
        if self.checkpointer is None and (self.graph is None or not has_checkpointer(self.graph)):
            self.embedded.preload()
        warm_up()

    # --- graphs -----------------------------------------------------------------------------------

    async def _saver_for(self, graph: Graph) -> BaseCheckpointSaver[Any] | None:
        if self.checkpointer is not None:
            return self.checkpointer
        if has_checkpointer(graph):
            return None
        return await self.embedded.get()

    async def graph_for(self, session: Session, model_id: str | None = None) -> Graph:
        """The graph (with a checkpointer) that runs this session's turns."""
        key = (session.id if self.graph_factory else "", model_id if self.graph_factory else None)
        cached = self._graphs.get(key)
        if cached is not None:
            return cached
        if self.graph_factory is not None:
            mcp = self._mcp.get(session.id)
            ctx = SessionContext(session=session, model_id=model_id, mcp_tools=mcp.tools if mcp else ())
            built = self.graph_factory(ctx)
            graph = await built if inspect.isawaitable(built) else built
            check_graph(graph)
            check_state_updates(self.state_updates or {}, list(cast(Mapping[str, object], graph.channels)))  # pyright: ignore[reportUnknownMemberType]
        else:
            assert self.graph is not None
            graph = self.graph
        graph = gated_graph(graph, self.edit_tool_call)
        saver = await self._saver_for(graph)
        if saver is not None:
            graph = with_checkpointer(graph, saver)
        self._graphs[key] = graph
        return graph

    @property
    def uses_mcp(self) -> bool:
        """True when the session's MCP servers reach the graph: a graph factory, or `AcpMcpMiddleware` in it."""
        return self.graph_factory is not None or (self.graph is not None and has_mcp_middleware(self.graph))

    def model_endpoints(self) -> EndpointSupport:
        """The client may route the model through its own endpoint (`providers/set`) when the graph has
        `AcpModelMiddleware`; otherwise (a fixed model, or a `graph_factory`) it is refused, saying why."""
        nodes = list(self.graph.nodes) if self.graph is not None else []
        return endpoint_support(swappable=has_model_middleware(nodes), factory=self.graph_factory is not None)

    @property
    def capabilities(self) -> RunnerCapabilities:
        """Prompt and MCP capabilities for `initialize` (HTTP and SSE MCP servers only when they are used)."""
        mcp = self.uses_mcp
        return RunnerCapabilities(image=True, audio=True, embedded_context=True, mcp_http=mcp, mcp_sse=mcp)

    # --- session hooks ----------------------------------------------------------------------------

    async def open_session(self, session: Session) -> None:
        """Connect the session's MCP servers (when a graph factory or `AcpMcpMiddleware` uses them).

        A server that fails to start leaves the session open with the other servers' tools; the
        next turn begins with an agent message naming the server and why (see `McpTools`).

        With a fixed graph, the checkpointed copy of the graph (and the embedded saver) is also
        prepared in the background, so the first prompt does not wait for it.
        """
        self._open.add(session.id)
        if self.graph is not None and self._preparing is None:
            self._preparing = asyncio.ensure_future(self._prepare(session))
        if not self.uses_mcp or not session.mcp_servers or session.id in self._mcp:
            return
        connections = McpTools(session.mcp_servers, on_error="report")
        await connections.start()
        self._mcp[session.id] = connections
        if connections.failures:
            self._mcp_unreported.add(session.id)

    async def _prepare(self, session: Session) -> None:
        try:
            await self.graph_for(session)
        except Exception:  # the first turn opens it again, and says why it fails
            log("could not prepare the graph before the first turn")

    async def close_session(self, session: Session) -> None:
        """Disconnect the session's MCP servers and forget its graph."""
        for key in [k for k in self._graphs if k[0] == session.id]:
            del self._graphs[key]
        self.embedded.forget(LangGraphSessionState.extract(session.state, session.id).thread_id)
        self._state_seen.pop(session.id, None)
        connections = self._mcp.pop(session.id, None)
        self._mcp_unreported.discard(session.id)
        if connections is not None:
            await connections.aclose()
        self._open.discard(session.id)
        if not self._open:  # the last session of this process: release the embedded saver
            if self._preparing is not None:
                await self._preparing  # never raises; its saver is closed just below
            await self._release_saver()

    async def _release_saver(self) -> None:
        """Close the embedded saver unless a session was opened meanwhile (another connection's).

        The check, dropping the graphs built on the saver and detaching it happen together, under
        the saver's lock: a turn starting meanwhile gets a saver opened afresh, never the one closing.
        """

        def in_use() -> bool:
            return bool(self._open)

        await self.embedded.aclose(unless=in_use, before=self._graphs.clear)

    async def delete_session(self, session: Session) -> None:
        """Delete the session's LangGraph thread from the checkpointer its graph runs with."""
        graph = await self.graph_for(session)
        saver: object = graph.checkpointer  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(saver, BaseCheckpointSaver):
            thread_id = LangGraphSessionState.extract(session.state, session.id).thread_id
            await cast(BaseCheckpointSaver[Any], saver).adelete_thread(thread_id)
        for key in [k for k in self._graphs if k[0] == session.id]:
            del self._graphs[key]
        if not self._open:  # no session of this process is open: release the embedded saver again
            await self._release_saver()

    async def aclose(self) -> None:
        """Close every session's resources and the embedded checkpointer."""
        if self._preparing is not None:
            await self._preparing
        for connections in list(self._mcp.values()):
            await connections.aclose()
        self._mcp.clear()
        self._mcp_unreported.clear()
        await self.embedded.aclose()

    async def list_tools(self, turn: Turn) -> ToolListing:
        """Every tool the graph's model can call in this session: the tools of its tool node(s)
        (the graph's own, middleware tools such as `write_todos`, DeepAgents' built-ins) and the
        session's MCP tools, which `AcpMcpMiddleware` adds to each model call."""
        session = turn.session
        if self.uses_mcp and session.mcp_servers and session.id not in self._mcp:
            await self.open_session(session)
        graph = await self.graph_for(session, turn.model_id)
        connections = self._mcp.get(session.id)
        mcp_tools = list(connections.tools) if connections else []
        plans = "todos" in cast(Mapping[str, object], graph.channels)  # pyright: ignore[reportUnknownMemberType]
        tools: list[ToolInfo] = []
        names: set[str] = set()

        policies = [p for m in permission_middlewares(graph) if (p := m.policy) is not None]

        def add(tool: BaseTool) -> None:
            if tool.name in names:
                return
            names.add(tool.name)
            description = (tool.description or "").strip().split("\n")[0]
            found = (tool.metadata or {}).get(MCP_SERVER_METADATA)
            server = found if isinstance(found, str) else None
            source: ToolSource = "mcp" if server else "plan" if plans and tool.name == PLAN_TOOL_NAME else "agent"
            kind = turn.classify_tool(tool.name)
            verdicts = {p.decide(tool.name, kind) for p in policies}
            decision = "deny" if "deny" in verdicts else "ask" if "ask" in verdicts else None
            info = ToolInfo(name=tool.name, description=description, source=source, server=server, decision=decision)
            tools.append(info)

        for node in graph.nodes.values():
            bound = getattr(node, "bound", None)
            tools_by_name = getattr(bound, "tools_by_name", None)
            if isinstance(tools_by_name, Mapping):
                for tool in cast(Mapping[str, BaseTool], tools_by_name).values():
                    add(tool)
        notes: list[str] = []
        if connections is not None:
            notes += [f"MCP server `{f.server}` did not start: {f.reason}" for f in connections.failures]
        unoffered = [t for t in mcp_tools if t.name not in names]
        if has_mcp_middleware(graph):
            for tool in unoffered:
                add(tool)
        elif missing := sorted({str((t.metadata or {}).get(MCP_SERVER_METADATA)) for t in unoffered}):
            servers = ", ".join(f"`{m}`" for m in missing)
            notes.append(
                f"MCP server(s) {servers} are connected but the graph does not offer their tools: put "
                "`SessionContext.mcp_tools` in the graph's tools, or add `AcpMcpMiddleware`."
            )
        if session.mcp_servers and not self.uses_mcp:
            servers = ", ".join(f"`{s.name}`" for s in session.mcp_servers)
            notes.append(
                f"MCP server(s) {servers} are not connected: the graph has no `AcpMcpMiddleware` "
                "and is not built by a `graph_factory`."
            )
        return ToolListing(tools=tools, notes=notes)

    async def list_mcp_servers(self, turn: Turn) -> list[McpServerStatus]:
        """Each of the session's MCP servers for `/mcp`: connected (with its tools and whether the graph
        offers them), failed and why, or not connected because nothing in the graph uses them."""
        session = turn.session
        if not self.uses_mcp:
            why = "The graph has no AcpMcpMiddleware and is not built by a graph_factory."
            return [McpServerStatus(name=s.name, state="not_connected", detail=why) for s in session.mcp_servers]
        if session.id not in self._mcp:
            await self.open_session(session)
        connections = self._mcp.get(session.id)
        if connections is None:
            return []
        graph = await self.graph_for(session, turn.model_id)
        offered = has_mcp_middleware(graph) or _offers(graph, connections.tools)
        failed = {f.server: f.reason for f in connections.failures}
        tools: dict[str, list[str]] = {}
        for tool in connections.tools:
            tools.setdefault(str((tool.metadata or {}).get(MCP_SERVER_METADATA)), []).append(tool.name)
        statuses: list[McpServerStatus] = []
        for server in connections.servers:
            if server.name in failed:
                detail = f"It did not start: {failed[server.name]}"
                statuses.append(McpServerStatus(name=server.name, state="failed", detail=detail))
                continue
            names = tools.get(server.name, [])
            detail = None if offered or not names else _UNOFFERED
            statuses.append(McpServerStatus(name=server.name, state="connected", tools=names, detail=detail))
        return statuses

    # --- the turn ---------------------------------------------------------------------------------

    async def run_turn(self, turn: Turn) -> StopReason:
        """Run the graph on the prompt; stream, ask, and return why it stopped."""
        session = turn.session
        self._open.add(session.id)
        if self.uses_mcp and session.mcp_servers and session.id not in self._mcp:
            await self.open_session(session)
        graph = await self.graph_for(session, turn.model_id)
        state = LangGraphSessionState.extract(session.state, session.id)
        tracker = turn.tool_calls
        connections = self._mcp.get(session.id)
        if connections is not None and session.id in self._mcp_unreported:
            self._mcp_unreported.discard(session.id)
            await _report(turn, connections)
        binding = Binding(
            emit=turn.emit,
            tools=tracker,
            turn=turn,
            gate=turn,
            send=turn.emit.send_unrecorded if isinstance(turn.emit, TurnEmitter) else None,
            loop=asyncio.get_running_loop(),
            mcp_tools=tuple(connections.tools) if connections else (),
            session_id=session.id,
        )
        handler = AcpCallbackHandler(binding=binding, stream_tokens=False, fallback_notices=True)
        mapper = StreamMapper(
            turn.emit,
            tracker,
            turn=turn,
            projections={**DEFAULT_STATE_UPDATES, **(self.state_updates or {})},
            seen=self._state_seen.setdefault(session.id, {}),
        )
        tap = MessageTap(mapper.feed)
        config: RunnableConfig = {
            **(self.config or {}),
            "configurable": {**(self.config or {}).get("configurable", {}), "thread_id": state.thread_id},
            "callbacks": [
                *handler.handlers(),
                tap,
                *cast(list[Any], (self.config or {}).get("callbacks") or []),
            ],
            # Copied into each checkpoint the turn writes: a rewind finds where the prompt started.
            "metadata": {**(self.config or {}).get("metadata", {}), PROMPT_METADATA_KEY: turn.prompt_id},
        }
        if self.recursion_limit is not None:
            config["recursion_limit"] = self.recursion_limit
        elif "recursion_limit" not in (graph.config or {}):  # LangGraph's default (25 steps) cuts agents short
            config["recursion_limit"] = max(DEFAULT_RECURSION_LIMIT, STEPS_PER_REQUEST * turn.max_requests)
        seeded = state.seeded
        if state.start is not None:  # a rewind: the thread goes on from where the prompt began
            await apply_start(graph, state.thread_id, state.start)
            seeded = seeded or state.start.thread != state.thread_id
        if session.parent_id and not seeded:
            seeded = await self._maybe_fork(graph, session, config)
        state = LangGraphSessionState(thread_id=state.thread_id, turns=state.turns + 1, seeded=seeded)
        state.store(session.state)
        # Cancellation is the server's: on `session/cancel` it cancels this task, which stops the graph.
        token = current_binding.set(binding)
        try:
            try:
                return await self._drive(graph, turn, config, mapper, tap, tracker)
            finally:  # a compaction the run started and did not finish ends with it
                tap.close()  # a stopped run's messages still on their way from a thread are not the turn's
                await mapper.end_compaction("cancelled" if turn.cancelled else "failed")
        except asyncio.CancelledError:
            remember_unstarted(session.state, tracker.unstarted_ids())
            raise
        finally:
            current_binding.reset(token)

    async def _maybe_fork(self, graph: Graph, session: Session, config: RunnableConfig) -> bool:
        """A forked session starts from its parent's conversation; True once its thread holds one."""
        current = await graph.aget_state(config)
        if current.values:
            return True
        parent = await graph.aget_state({"configurable": {"thread_id": session.parent_id}})
        if parent.values:
            await graph.aupdate_state(config, parent.values)
            return True
        return False

    async def rewind_session(self, session: Session, point: RewindPoint) -> None:
        """Record the checkpoint the prompt started from; the next turn goes on from it (see `_rewind`)."""
        graph = await self.graph_for(session)
        saver: object = graph.checkpointer  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if not isinstance(saver, BaseCheckpointSaver):
            raise RewindError("the graph runs without a checkpointer: it keeps no conversation to go back in")
        state = LangGraphSessionState.extract(session.state, session.id)
        start = await find_start(cast(BaseCheckpointSaver[Any], saver), point, state.thread_id)
        if start is not None:
            replace(state, start=start).store(session.state)

    async def _drive(
        self,
        graph: Graph,
        turn: Turn,
        config: RunnableConfig,
        mapper: StreamMapper,
        tap: MessageTap,
        tracker: ToolCalls,
    ) -> StopReason:
        state = turn.session.state
        unanswered = answer_unanswered(state, await _committed_messages(graph, config)) if was_stopped(state) else []
        run_input: Any = {"messages": [*unanswered, human_message(_asked(turn), root_dir=turn.session.cwd)]}
        while True:
            mapper.interrupted = False
            try:
                stream: Any = graph.astream(  # pyright: ignore[reportUnknownMemberType]
                    run_input,
                    config,
                    stream_mode="updates",
                    subgraphs=True,
                    durability=self.durability,
                )
                async for namespace, data in stream:
                    await tap.updates(namespace, data)
                await tap.drained()
                self.embedded.settle(_checkpointer_of(graph), str(config.get("configurable", {})["thread_id"]))
            except RequestLimitReached as reached:
                remember_unstarted(state, tracker.unstarted_ids())
                await tracker.close_open("The turn stopped at its request limit before this tool call finished.")
                await notice_limit(turn.emit, request_limit_message(reached.limit))
                return "max_turn_requests"
            except Exception as error:
                reason = _limit_stop_reason(error)
                remember_unstarted(state, tracker.unstarted_ids())
                if reason is None:
                    await tracker.close_open(f"Failed: {error}")
                    raise
                await tracker.close_open(str(error))
                if isinstance(error, GraphRecursionError):
                    await notice_limit(turn.emit, _recursion_message(graph, config))
                return reason
            if not mapper.interrupted:  # reading the state back costs a whole checkpoint: only when paused
                return stop_reason_from_finish(mapper.last_finish_reason)
            snapshot = await graph.aget_state(config)
            if not snapshot.interrupts:
                return stop_reason_from_finish(mapper.last_finish_reason)
            messages = cast(Sequence[Any], (snapshot.values or {}).get("messages") or [])
            asks = plan_questions(snapshot.interrupts, messages, tracker.pending())
            if asks is None:
                turn.emit.new_message()
                values = "; ".join(repr(i.value) for i in snapshot.interrupts)
                await turn.emit.text(f"The agent paused for input this editor cannot give ({values}).")
                return "end_turn"
            decisions: dict[str, dict[str, Any]] = {}
            for ask in asks:
                await tracker.announce(ask.tool_call_id, ask.name, ask.args)
                kind = turn.classify_tool(ask.name, ask.args)
                decision = await turn.request_permission(
                    ask.tool_call_id,
                    tool_name=ask.name,
                    title=tracker.title_for(ask.name, ask.args),
                    kind=kind,
                    raw_input=ask.args,
                )
                if decision.outcome == "cancelled":
                    remember_unstarted(state, tracker.unstarted_ids())
                    await tracker.close_open("Cancelled")
                    return "cancelled"
                edited = self.edit_tool_call(ask.name, ask.args, decision) if self.edit_tool_call else None
                decisions[ask.tool_call_id] = to_decision(decision, edited_args=edited, name=ask.name)
            run_input = Command(resume=resume_value(asks, decisions))


def _recursion_message(graph: Graph, config: RunnableConfig) -> str:
    """What the user reads when LangGraph's recursion limit stopped the turn."""
    limit = config.get("recursion_limit") or (graph.config or {}).get("recursion_limit") or LANGGRAPH_RECURSION_LIMIT
    return limit_message(
        f"the graph ran {limit} steps, LangGraph's recursion limit for one run",
        "The agent's developer can raise it with `create_acp_agent(recursion_limit=...)`",
    )


_UNOFFERED = (
    "The graph does not offer its tools: put `SessionContext.mcp_tools` in the graph's tools, "
    "or add `AcpMcpMiddleware`."
)


def _offers(graph: Graph, tools: Sequence[BaseTool]) -> bool:
    """True when the graph's tool nodes hold every one of `tools` (a factory put `SessionContext.mcp_tools` there)."""
    held: set[str] = set()
    for node in graph.nodes.values():
        by_name = getattr(getattr(node, "bound", None), "tools_by_name", None)
        if isinstance(by_name, Mapping):
            held.update(cast(Mapping[str, BaseTool], by_name))
    return all(t.name in held for t in tools)


def _asked(turn: Turn) -> Prompt:
    """The turn's prompt, with the words asking for the structured answer the prompt's `_meta` asked
    for (`turn.output_schema`) when its text does not carry them already."""
    output = turn.output_schema
    if output is None:
        return turn.prompt
    words = output.instructions()
    if any(isinstance(p, Text) and words in p.text for p in turn.prompt):
        return turn.prompt
    return Prompt((*turn.prompt.parts, Text(text=words)))


def _checkpointer_of(graph: Graph) -> object:
    saver: object = graph.checkpointer  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    return cast(object, saver)


async def _committed_messages(graph: Graph, config: RunnableConfig) -> list[BaseMessage]:
    """The thread's messages as its last checkpoint has them (without the writes of a step that was
    stopped midway, which `aget_state` shows but a new run does not start from)."""
    saver: object = graph.checkpointer  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(saver, BaseCheckpointSaver):
        return messages_of((await graph.aget_state(config)).values)
    saved = await cast(BaseCheckpointSaver[Any], saver).aget_tuple(config)
    return messages_of(saved.checkpoint["channel_values"] if saved is not None else None)


async def _report(turn: Turn, connections: McpTools) -> None:
    """Tell the user, as a notice, which MCP servers failed to start (core's `notice_mcp_failures`)."""
    failures = [(f.server, f.reason) for f in connections.failures]
    await notice_mcp_failures(turn.emit, failures, text=connections.notice())


def permission_middlewares(graph: Graph) -> list[AcpPermissionMiddleware]:
    """The `AcpPermissionMiddleware`s of a `create_agent` graph (their policies apply besides the server's)."""
    found: list[AcpPermissionMiddleware] = []
    for node in graph.nodes.values():
        owner = getattr(getattr(getattr(node, "bound", None), "afunc", None), "__self__", None)
        if isinstance(owner, AcpPermissionMiddleware) and owner not in found:
            found.append(owner)
    return found


def has_mcp_middleware(graph: Graph) -> bool:
    """True when `graph` was built by `create_agent` with an `AcpMcpMiddleware`."""
    prefix = MCP_MIDDLEWARE_NAME + "."
    return any(name.startswith(prefix) for name in graph.nodes)


def check_graph(graph: object) -> None:
    """Raise `UserError` unless `graph` is a compiled graph with `messages` in its state."""
    if not isinstance(graph, Pregel):
        raise UserError(
            f"expected a compiled LangGraph graph (for example from `create_agent` or `StateGraph.compile()`), "
            f"got {type(graph).__name__}"
        )
    if not has_messages_state(cast(Graph, graph)):
        raise UserError("the graph's state has no `messages` key: ACP turns are added to `messages`")


def log(message: str) -> None:
    """Write a diagnostic line to stderr (stdout carries ACP)."""
    print(f"langchain-acp: {message}", file=sys.stderr)
