"""[`PydanticRunner`][pydantic_acp.PydanticRunner]: one ACP turn = one `agent.run(...)`.

The user's agent is never changed: everything ACP needs is passed per run (`model=`,
`message_history=`, `toolsets=`, `capabilities=`, `instructions=`, `usage_limits=`,
`cancellation_token=`). Events are handled inline in the run by the
[`AcpBridge`][pydantic_acp._bridge.AcpBridge] capability, so an update is on its way before the
run moves on.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import logging
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from acp.schema import StopReason
from acpkit_core.errors import UserError
from acpkit_core.runner.capabilities import RunnerCapabilities
from acpkit_core.runner.notices import notice_limit, notice_mcp_failures
from acpkit_core.runner.plan import PlanOutput
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.providers import EndpointSupport
from acpkit_core.runner.rewind import RewindPoint
from acpkit_core.runner.stop import limit_message, request_limit_message
from acpkit_core.runner.types import McpServerStatus, Session, ToolInfo, ToolListing
from pydantic_ai import CancellationToken, StructuredDict, capture_run_messages
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.capabilities import AbstractCapability, ModelFallback
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import AgentStreamEvent, ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import UsageLimits

from ._bridge import AcpBridge, ListeningAcpBridge
from ._client_tools import CLIENT_TOOL_NAMES, client_toolset
from ._compaction import compaction_watch
from ._endpoints import EndpointModels, endpoint_support, model_name
from ._events import EventProjector
from ._history import load_history, mark_prompt, rewind_history, save_history
from ._lifecycle import LifecycleCards
from ._mcp import SessionMcp
from ._modes import PLAN_OUTPUT_INSTRUCTIONS, PLAN_TOOL_NAMES, PLANNING_INSTRUCTIONS, plan_toolset
from ._render import render_prompt
from ._stop import limit_stop_reason, stop_reason_from_messages
from ._thinking import thinking_settings
from ._unstreamed import streaming_model
from ._warm import warm_up

__all__ = ["AgentFactory", "DepsFactory", "PydanticRunner"]

logger = logging.getLogger("pydantic_acp")

AnyAgent = AbstractAgent[Any, Any]

AgentFactory = Callable[[Session], AnyAgent | Awaitable[AnyAgent]]
"""Builds the agent for a session (called before each turn, so it may depend on the mode or cwd)."""

DepsFactory = Callable[[Turn], Any]
"""Builds the `deps` of a run from the turn."""

_STOPPED_TEXT = "The turn stopped before this tool call finished."

_PYDANTIC_REQUEST_LIMIT = UsageLimits().request_limit
"""pydantic-ai's default request limit (50): a `UsageLimits` that keeps it says nothing about requests."""


class _ToolsListed(Exception):
    """Raised by the listing model once it has seen the tools."""


class PydanticRunner:
    """Runs a `pydantic_ai` agent for each ACP turn (a `Runner`, `SessionHooks`, `ToolLister`, `McpLister`,
    `SessionRewinder` and `ModelEndpoints`)."""

    def __init__(
        self,
        agent: AnyAgent | None = None,
        *,
        agent_factory: AgentFactory | None = None,
        models: Mapping[str, Model | str] | None = None,
        client_tools: bool = False,
        plan_tool: bool | None = None,
        usage_limits: UsageLimits | None = None,
        model_settings: ModelSettings | None = None,
        deps_factory: DepsFactory | None = None,
        report_tool_errors: bool = True,
        connect_mcp_servers: bool = True,
        max_stored_attachment: int | None = 1_000_000,
        show_hooks: bool = False,
        fallback_models: Sequence[Model | str] = (),
        plan_output: bool = False,
    ) -> None:
        if (agent is None) == (agent_factory is None):
            raise UserError("PydanticRunner: pass exactly one of `agent` or `agent_factory=`")
        if usage_limits is not None and usage_limits.request_limit not in (None, _PYDANTIC_REQUEST_LIMIT):
            raise UserError(
                f"usage_limits=UsageLimits(request_limit={usage_limits.request_limit}): the model requests of a turn "
                f"are limited by max_turn_requests, the same option on every adapter; pass "
                f"max_turn_requests={usage_limits.request_limit} instead"
            )
        self._agent = agent
        self._agent_factory = agent_factory
        self._models: dict[str, Model | str] = dict(models or {})
        self._client_tools = client_tools
        self._plan_tool = plan_tool
        self._usage_limits = usage_limits
        self._model_settings = model_settings
        self._deps_factory = deps_factory
        self._report_tool_errors = report_tool_errors
        self._connect_mcp = connect_mcp_servers
        self._max_attachment = max_stored_attachment
        self._show_hooks = show_hooks
        self._plan_output = plan_output
        self._fallbacks = tuple(self._models.get(m, m) if isinstance(m, str) else m for m in fallback_models)
        self._mcp: dict[str, SessionMcp] = {}
        self._endpoint_models = EndpointModels()
        self._mcp_unreported: set[str] = set()
        """Sessions whose MCP servers that did not start the user has not been told of yet."""
        warm_up()

    async def agent_for(self, session: Session) -> AnyAgent:
        """The agent that serves `session` (the fixed agent, or the factory's answer)."""
        if self._agent is not None:
            return self._agent
        assert self._agent_factory is not None
        made = self._agent_factory(session)
        agent = await made if inspect.isawaitable(made) else made
        if not isinstance(cast(object, agent), AbstractAgent):
            raise UserError(f"agent_factory returned {type(agent).__name__}, expected a pydantic_ai.Agent")
        return agent

    def model_endpoints(self) -> EndpointSupport:
        """The client may route the model through its own endpoint (`providers/set`): OpenAI or Anthropic."""
        return endpoint_support(self._agent.model if self._agent is not None else None)

    def _turn_model(self, turn: Turn, agent: AnyAgent) -> Model | str | None:
        """The turn's model: the chosen one (or the agent's), on the client's endpoint when it set one."""
        model = self.model_for(turn.model_id) or agent.model
        if turn.llm_endpoint is None:
            return model
        return self._endpoint_models.model(turn.llm_endpoint, model_name(model))

    def model_for(self, model_id: str | None) -> Model | str | None:
        """The model for a `model` config value (`None`: the agent's own)."""
        if model_id is None:
            return None
        return self._models.get(model_id, model_id)

    @property
    def capabilities(self) -> RunnerCapabilities:
        """pydantic-ai takes images and audio; MCP servers over stdio, HTTP and SSE."""
        return RunnerCapabilities(
            image=True, audio=True, embedded_context=True, mcp_http=self._connect_mcp, mcp_sse=self._connect_mcp
        )

    # --- Runner ------------------------------------------------------------------------------

    async def run_turn(self, turn: Turn) -> StopReason:
        """Run the agent on the turn's prompt, streaming updates, and say why it stopped."""
        session = turn.session
        agent = await self.agent_for(session)
        if session.id in self._mcp_unreported:  # told once, on the session's first turn
            self._mcp_unreported.discard(session.id)
            await notice_mcp_failures(turn.emit, sorted(self._mcp[session.id].failures.items()))
        history = load_history(session)
        plan_output = self._plan_output and turn.plan_only and turn.output_schema is None and turn.plan.writable
        plan = self._plans(turn, plan_output)
        output_type = _output_type(turn, plan_output)
        projector = EventProjector(
            turn, hidden_tools=PLAN_TOOL_NAMES if plan else frozenset(), show_events=self._show_hooks
        )
        projector.plan_output = _is_plan(output_type if output_type is not None else agent.output_type)
        toolsets: list[AbstractToolset[Any]] = [*self._session_toolsets(session)]
        keep: set[str] = set()
        if plan:
            toolsets.append(plan_toolset(turn))
            keep.update(PLAN_TOOL_NAMES)
        if self._client_tools:
            toolsets.append(client_toolset(turn, projector))
        own_handler = agent.event_stream_handler is not None
        bridge_type = ListeningAcpBridge if own_handler else AcpBridge
        bridge = bridge_type(
            turn,
            projector,
            frozenset(keep),
            self._report_tool_errors,
            CLIENT_TOOL_NAMES if self._client_tools else frozenset(),
        )

        async def handle_events(ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
            async for event in events:
                await projector.handle(event)

        token = CancellationToken()
        watcher = asyncio.create_task(_cancel_when(turn, token))
        messages: list[ModelMessage] = []
        try:
            with capture_run_messages() as captured:
                try:
                    result = await agent.run(
                        render_prompt(turn.prompt),
                        output_type=output_type,
                        message_history=history,
                        model=streaming_model(self._turn_model(turn, agent)),
                        deps=self._deps_factory(turn) if self._deps_factory else None,
                        toolsets=toolsets,
                        capabilities=self._capabilities(turn, bridge),
                        event_stream_handler=None if own_handler else handle_events,
                        instructions=_instructions(turn, plan_output),
                        usage_limits=self._limits(turn),
                        model_settings=thinking_settings(self._model_settings, session.config),
                        cancellation_token=token,
                    )
                except BaseException as error:
                    stop = limit_stop_reason(error)
                    messages = _messages_of(error) or list(captured)
                    mark_prompt(messages[len(history) :], turn.prompt_id)
                    unstarted = projector.unstarted_ids()
                    await projector.fail_open(_STOPPED_TEXT)
                    save_history(session, history, messages, not_run=unstarted, max_attachment=self._max_attachment)
                    if stop is None:
                        raise
                    if isinstance(error, UsageLimitExceeded):
                        await notice_limit(turn.emit, _limit_stop(error, turn.max_requests))
                    return stop
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        messages = result.all_messages()
        mark_prompt(messages, turn.prompt_id)
        unstarted = projector.unstarted_ids() if turn.cancelled else ()
        save_history(session, history, messages, not_run=unstarted, max_attachment=self._max_attachment)
        output = result.output
        if isinstance(output, PlanOutput) and turn.plan.writable:  # the plan is the answer: shown as the plan
            await turn.plan.set([s.item() for s in output.steps])
            if output.summary:
                await projector.output_text(output.summary)
        elif not isinstance(output, str):
            await projector.output_text(_show(output))
        return "cancelled" if turn.cancelled else stop_reason_from_messages(messages)

    def _limits(self, turn: Turn) -> UsageLimits:
        """The developer's usage limits, with the turn's request limit (`max_turn_requests`)."""
        return dataclasses.replace(self._usage_limits or UsageLimits(), request_limit=turn.max_requests)

    def _plans(self, turn: Turn, plan_output: bool) -> bool:
        """Whether this turn offers the plan tools: `plan_tool=True`, or a plan-only mode whose answer is
        not the plan; never when a host owns the plan alone."""
        wanted = self._plan_tool if self._plan_tool is not None else turn.plan_only and not plan_output
        return wanted and turn.plan.writable

    def _capabilities(self, turn: Turn, bridge: AcpBridge) -> list[AbstractCapability[Any]]:
        capabilities: list[AbstractCapability[Any]] = [bridge, *compaction_watch(turn)]
        if self._show_hooks:
            capabilities.append(LifecycleCards(turn))
        if self._fallbacks:
            capabilities.append(ModelFallback(*(streaming_model(m) or m for m in self._fallbacks)))
        return capabilities

    # --- SessionRewinder -----------------------------------------------------------------------

    async def rewind_session(self, session: Session, point: RewindPoint) -> None:
        """Cut the message history where the prompt began (its request is marked with its id)."""
        rewind_history(session, point)

    # --- SessionHooks --------------------------------------------------------------------------

    async def open_session(self, session: Session) -> None:
        """Connect the session's MCP servers."""
        if not self._connect_mcp or not session.mcp_servers or session.id in self._mcp:
            return
        mcp = SessionMcp(session.mcp_servers, cwd=session.cwd)
        self._mcp[session.id] = mcp
        await mcp.start()
        if mcp.failures:
            self._mcp_unreported.add(session.id)

    async def close_session(self, session: Session) -> None:
        """Disconnect the session's MCP servers."""
        mcp = self._mcp.pop(session.id, None)
        self._mcp_unreported.discard(session.id)
        if mcp is not None:
            await mcp.stop()

    def _session_toolsets(self, session: Session) -> Sequence[AbstractToolset[Any]]:
        mcp = self._mcp.get(session.id)
        return mcp.toolsets if mcp is not None else ()

    # --- McpLister -----------------------------------------------------------------------------

    async def list_mcp_servers(self, turn: Turn) -> list[McpServerStatus]:
        """Each of the session's MCP servers: connected (with its tools), failed and why, or not connected."""
        session = turn.session
        if not self._connect_mcp:
            why = "The agent runs with connect_mcp_servers=False."
            return [McpServerStatus(name=s.name, state="not_connected", detail=why) for s in session.mcp_servers]
        if session.id not in self._mcp:
            await self.open_session(session)
        mcp = self._mcp.get(session.id)
        return await mcp.statuses() if mcp is not None else []

    # --- ToolLister ----------------------------------------------------------------------------

    async def list_tools(self, turn: Turn) -> ToolListing:
        """Every tool the model would be offered in this session: the agent's own, the client tools
        the client supports, the plan tool, and the tools of the session's MCP servers."""
        session = turn.session
        agent = await self.agent_for(session)
        mcp = self._mcp.get(session.id)
        toolsets: list[AbstractToolset[Any]] = [*self._session_toolsets(session)]
        plan = self._plans(turn, self._plan_output and turn.plan_only)
        if plan:
            toolsets.append(plan_toolset(turn))
        if self._client_tools:
            toolsets.append(client_toolset(turn, EventProjector(turn)))
        offered: list[tuple[str, str]] = []

        def capture(messages: list[ModelMessage], info: AgentInfo) -> Any:
            offered.extend((tool.name, _first_line(tool.description)) for tool in info.function_tools)
            raise _ToolsListed

        with contextlib.suppress(_ToolsListed):
            deps = self._deps_factory(turn) if self._deps_factory else None
            await agent.run("", model=FunctionModel(capture), deps=deps, toolsets=toolsets)
        servers, notes = await mcp.listing() if mcp is not None else ({}, [])
        if session.mcp_servers and not self._connect_mcp:
            names = ", ".join(f"`{s.name}`" for s in session.mcp_servers)
            notes.append(f"MCP servers {names} are not connected: the agent runs with connect_mcp_servers=False.")
        tools: list[ToolInfo] = []
        for name, description in offered:
            if plan and name in PLAN_TOOL_NAMES:
                tools.append(ToolInfo(name=name, description=description, source="plan"))
            elif self._client_tools and name in CLIENT_TOOL_NAMES:
                tools.append(ToolInfo(name=name, description=description, source="client"))
            elif name in servers:
                tools.append(ToolInfo(name=name, description=description, source="mcp", server=servers[name]))
            else:
                tools.append(ToolInfo(name=name, description=description))
        return ToolListing(tools=tools, notes=notes)


def _output_type(turn: Turn, plan_output: bool) -> Any:
    """The run's output type when the turn sets one: the structured answer the prompt asked for
    (`_meta.acpkit.output`), or the plan in a plan-only mode with `plan_output=True`; else `None`."""
    schema = turn.output_schema
    if schema is not None:
        return StructuredDict(dict(schema.schema), name=schema.name, description=schema.description)
    return PlanOutput if plan_output else None


def _is_plan(output_type: object) -> bool:
    return isinstance(output_type, type) and issubclass(output_type, PlanOutput)


def _instructions(turn: Turn, plan_output: bool) -> str | None:
    if not turn.plan_only:
        return None
    return PLAN_OUTPUT_INSTRUCTIONS if plan_output else PLANNING_INSTRUCTIONS


async def _cancel_when(turn: Turn, token: CancellationToken) -> None:
    await turn.wait_cancelled()
    token.cancel()


def _limit_stop(error: UsageLimitExceeded, max_requests: int) -> str:
    """What the user reads when a usage limit stopped the turn: which limit, and how to raise it."""
    if "request_limit" in error.message:
        return request_limit_message(max_requests)
    return limit_message(
        f"pydantic-ai's usage limit ({error.message})",
        "The agent's developer can change it with `create_acp_agent(usage_limits=UsageLimits(...))`",
    )


def _messages_of(error: BaseException) -> list[ModelMessage] | None:
    from pydantic_ai.exceptions import RunCancelled

    cancelled = RunCancelled.from_cancellation(error)
    return cancelled.all_messages() if cancelled is not None else None


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0]


def _show(output: object) -> str:
    try:
        from pydantic_core import to_jsonable_python

        return json.dumps(to_jsonable_python(output), indent=2)
    except Exception:
        return str(output)
