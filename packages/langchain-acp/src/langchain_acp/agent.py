"""`create_acp_agent` and `run_acp`: serve a LangGraph graph over ACP in one call."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Unpack

from acpkit_core.config import AgentOptions
from acpkit_core.errors import UserError
from acpkit_core.store import open_store
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Durability

from ._checkpoint import CHECKPOINT_FILE, EmbeddedCheckpointer
from .middleware.thinking import check_thinking_middleware
from .runner import EditHook, Graph, GraphFactory, LangGraphRunner

if TYPE_CHECKING:
    from typing import TypedDict

    from acpkit_core import AcpAgent

    class _Options(TypedDict, total=False):
        name: str
        title: str | None
        version: str
        store: Any
        modes: Any
        default_mode: str | None
        models: Any
        default_model: str | None
        config_options: Any
        commands: Any
        permission_policy: Any
        tool_kinds: Any
        coalesce_ms: float
        allowed_paths: Any
        context_window: int | None
        transcript_flush_ms: float
        max_stored_attachment: int | None
        extensions: Any


__all__ = ["create_acp_agent", "create_runner", "run_acp"]

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
    embedded = EmbeddedCheckpointer(path.parent / CHECKPOINT_FILE if path is not None else None)
    runner = LangGraphRunner(
        graph=graph,
        graph_factory=graph_factory,
        checkpointer=checkpointer,
        embedded=embedded,
        recursion_limit=recursion_limit,
        edit_tool_call=edit_tool_call,
        durability=durability,
    )
    return runner, options


def create_acp_agent(
    graph: Graph | None = None,
    *,
    graph_factory: GraphFactory | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    recursion_limit: int | None = None,
    edit_tool_call: EditHook | None = None,
    durability: Durability = "exit",
    **options: Unpack[_Options],
) -> AcpAgent:
    """An ACP agent serving a compiled LangGraph graph (or a graph built per session by `graph_factory`).

    Args:
        graph: A compiled graph whose state has `messages` (`create_agent(...)`, a DeepAgents graph,
            `StateGraph(...).compile()`). It is never mutated.
        graph_factory: Instead of `graph`: builds the graph of each session from a
            [`SessionContext`][langchain_acp.runner.SessionContext] (the session, the chosen model and
            the client's MCP tools).
        checkpointer: A LangGraph saver to use. By default the graph's own, else one embedded beside
            the session store (`langgraph-checkpoints.sqlite3`; in memory for the memory store).
        recursion_limit: LangGraph's recursion limit per run; reaching it ends the turn `max_turn_requests`.
        edit_tool_call: Replace a tool call's arguments when the user approves it.
        durability: When LangGraph writes checkpoints: `"exit"` (default: once per run), or
            `"async"`/`"sync"` (after every step); the trade-off is on the Sessions page.
        **options: [`AgentOptions`][acpkit_core.config.AgentOptions] fields (`name`, `store`, `modes`, ...).
    """
    from acpkit_core import AcpAgent

    if graph is None and graph_factory is None:
        raise UserError("create_acp_agent: pass a compiled graph or `graph_factory=`")
    if graph is not None:
        check_thinking_middleware(list(graph.nodes), options.get("config_options", ()))
    runner, agent_options = create_runner(
        graph,
        graph_factory=graph_factory,
        checkpointer=checkpointer,
        options=AgentOptions(**options),
        recursion_limit=recursion_limit,
        edit_tool_call=edit_tool_call,
        durability=durability,
    )
    return AcpAgent(runner, agent_options)


def run_acp(
    graph: Graph | None = None,
    *,
    graph_factory: GraphFactory | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    recursion_limit: int | None = None,
    edit_tool_call: EditHook | None = None,
    durability: Durability = "exit",
    **options: Unpack[_Options],
) -> None:
    """Serve `graph` over ACP on stdin/stdout until the client disconnects (see `create_acp_agent`)."""
    from acpkit_core import run_stdio

    agent = create_acp_agent(
        graph,
        graph_factory=graph_factory,
        checkpointer=checkpointer,
        recursion_limit=recursion_limit,
        edit_tool_call=edit_tool_call,
        durability=durability,
        **options,
    )
    run_stdio(agent)
