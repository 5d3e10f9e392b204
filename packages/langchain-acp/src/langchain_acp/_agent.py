"""`create_acp_agent` and `run_acp`: serve a LangGraph graph over ACP in one call."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Unpack

from acpkit_core.config import AgentOptions, AgentOptionsKwargs, ModelOption, agent_options
from acpkit_core.errors import UserError
from acpkit_core.permissions import EditHook
from acpkit_core.store import PostgresStore, open_store
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Durability

from ._checkpoint import CHECKPOINT_FILE, EmbeddedCheckpointer
from ._model_middleware import check_model_middleware
from ._runner import Graph, GraphFactory, LangGraphRunner
from ._state_updates import StateProjection
from ._thinking import check_thinking_middleware

if TYPE_CHECKING:
    from acpkit_core import AcpAgent


class LangChainAcpOptions(AgentOptionsKwargs, total=False):
    """The keywords of [`create_acp_agent`][langchain_acp.create_acp_agent] and [`run_acp`][langchain_acp.run_acp].

    The LangGraph options below, plus every [`AgentOptions`][acpkit_core.config.AgentOptions] field.
    """

    graph_factory: GraphFactory
    """Instead of `graph`: builds the graph of each session from a
    [`SessionContext`][langchain_acp.SessionContext] (the session, the chosen model and the
    client's MCP tools). Default: none."""
    checkpointer: BaseCheckpointSaver[Any] | None
    """A LangGraph saver to use. Default: the graph's own, else one embedded beside the session store
    (`langgraph-checkpoints.sqlite3`; LangGraph's Postgres saver on the same database for a
    `postgresql://` store, with the `postgres` extra; in memory for the memory store)."""
    recursion_limit: int | None
    """LangGraph's recursion limit (steps of one run); reaching it ends the turn `max_turn_requests`,
    with a message naming it. Default: the graph's own (`create_agent` and DeepAgents set 9,999),
    else the larger of 9,999 and ten steps per request of `max_turn_requests` (not LangGraph's 25),
    so that the per-turn request limit is what stops a long turn."""
    edit_tool_call: EditHook | None
    """Replace a tool call's arguments when the user approves it. Default: none."""
    durability: Durability
    """When LangGraph writes checkpoints: `"exit"` (once per run), or `"async"`/`"sync"` (after every
    step); the trade-off is on the Sessions page. Default: `"exit"`."""
    state_updates: Mapping[str, StateProjection | None]
    """How writes of graph-state keys are shown: `{"files": as_tool_content(), "status": as_notice(title=...)}`
    ([State as updates](../langchain/features.md#graph-state-as-updates)); `todos` is shown as the plan
    unless mapped otherwise (`None` shows nothing). A key the graph's state does not have is refused.
    Default: `{"todos": as_plan()}`."""
    models: Sequence[ModelOption]
    """Models offered in the `model` config option. A `graph_factory` reads the choice as
    `SessionContext.model_id`; a fixed graph needs `AcpModelMiddleware` (refused without it). A prompt
    can pick one of them for itself (`_meta.acpkit.model`, `/model <id> <prompt>`). Default: none."""


__all__ = ["LangChainAcpOptions", "create_acp_agent", "create_runner", "run_acp"]

_DEFAULT_GRAPH_NAME = "LangGraph"
"""The name LangGraph gives a graph nobody named."""


def create_runner(
    graph: Graph | None = None,
    *,
    graph_factory: GraphFactory | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    options: AgentOptions | None = None,
    recursion_limit: int | None = None,
    edit_tool_call: EditHook | None = None,
    durability: Durability = "exit",
    state_updates: Mapping[str, StateProjection | None] | None = None,
) -> tuple[LangGraphRunner, AgentOptions]:
    """The runner for `graph` and the options with the session store opened (shared by server and checkpoints).

    Without an explicit `name`, the agent announces the graph's own name (`create_agent(..., name=...)`,
    `compile(name=...)`) unless it is LangGraph's default.
    """
    options = dataclasses.replace(options) if options is not None else AgentOptions()
    if options.name == AgentOptions.name and graph is not None and graph.name and graph.name != _DEFAULT_GRAPH_NAME:
        options.name = graph.name  # a graph named by its author announces itself, not a generic name
    store = open_store(options.store)
    options.store = store
    path = store.path
    embedded = EmbeddedCheckpointer(
        path.parent / CHECKPOINT_FILE if path is not None else None,
        url=store.url if isinstance(store, PostgresStore) else None,
    )
    runner = LangGraphRunner(
        graph=graph,
        graph_factory=graph_factory,
        checkpointer=checkpointer,
        embedded=embedded,
        recursion_limit=recursion_limit,
        edit_tool_call=edit_tool_call,
        durability=durability,
        state_updates=state_updates,
    )
    return runner, options


def create_acp_agent(graph: Graph | None = None, **options: Unpack[LangChainAcpOptions]) -> AcpAgent:
    """An ACP agent serving a compiled LangGraph graph (or a graph built per session by `graph_factory`).

    Args:
        graph: A compiled graph whose state has `messages` (`create_agent(...)`, a DeepAgents graph,
            `StateGraph(...).compile()`). It is never mutated.
        **options: The [`LangChainAcpOptions`][langchain_acp.LangChainAcpOptions].
    """
    from acpkit_core import AcpAgent

    graph_factory = options.pop("graph_factory", None)
    if graph is None and graph_factory is None:
        raise UserError("create_acp_agent: pass a compiled graph or `graph_factory=`")
    if graph is not None:
        check_thinking_middleware(list(graph.nodes), options.get("config_options", ()))
        check_model_middleware(list(graph.nodes), options.get("models", ()))
    checkpointer = options.pop("checkpointer", None)
    recursion_limit = options.pop("recursion_limit", None)
    edit_tool_call = options.pop("edit_tool_call", None)
    durability = options.pop("durability", "exit")
    state_updates = options.pop("state_updates", None)
    models = options.pop("models", ())
    runner, served = create_runner(
        graph,
        graph_factory=graph_factory,
        checkpointer=checkpointer,
        options=agent_options(options, models=models),
        recursion_limit=recursion_limit,
        edit_tool_call=edit_tool_call,
        durability=durability,
        state_updates=state_updates,
    )
    return AcpAgent(runner, served)


def run_acp(graph: Graph | None = None, **options: Unpack[LangChainAcpOptions]) -> None:
    """Serve `graph` over ACP on stdin/stdout until the client disconnects (see `create_acp_agent`)."""
    from acpkit_core import run_stdio

    run_stdio(create_acp_agent(graph, **options))
