"""The public entry points: `create_acp_agent` and `run_acp`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from acp.schema import ToolKind
from acpkit_core import AcpAgent, run_stdio
from acpkit_core.config import AgentOptions, Command, ConfigOption, Mode, ModelOption
from acpkit_core.errors import UserError
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import UsageLimits

from .runner import AgentFactory, AnyAgent, DepsFactory, PydanticRunner

if TYPE_CHECKING:
    from acpkit_core.extensions import Extensions
    from acpkit_core.permissions import PermissionPolicy
    from acpkit_core.store import SessionStore

__all__ = ["ModelSpec", "create_acp_agent", "run_acp"]

ModelSpec = ModelOption | Model | str
"""A model offered to the user: a `ModelOption`, a pydantic-ai `Model`, or a model name (`openai:gpt-5`)."""


def model_id(model: Model) -> str:
    """The id a `Model` instance is offered under: `system:model_name`."""
    return f"{model.system}:{model.model_name}"


def _models(specs: Sequence[ModelSpec]) -> tuple[list[ModelOption], dict[str, Model | str]]:
    options: list[ModelOption] = []
    by_id: dict[str, Model | str] = {}
    for spec in specs:
        if isinstance(spec, ModelOption):
            options.append(spec)
        elif isinstance(spec, Model):
            options.append(ModelOption(id=model_id(spec), name=spec.model_name))
            by_id[model_id(spec)] = spec
        else:
            options.append(ModelOption(id=spec))
    ids = [o.id for o in options]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise UserError(f"create_acp_agent(models=...): model ids must be unique, repeated: {', '.join(duplicates)}")
    return options, by_id


def create_acp_agent(
    agent: AnyAgent | None = None,
    *,
    agent_factory: AgentFactory | None = None,
    models: Sequence[ModelSpec] = (),
    client_tools: bool = False,
    plan_tool: bool | None = None,
    usage_limits: UsageLimits | None = None,
    model_settings: ModelSettings | None = None,
    deps_factory: DepsFactory | None = None,
    report_tool_errors: bool = True,
    connect_mcp_servers: bool = True,
    name: str | None = None,
    title: str | None = None,
    version: str = "0.1.0",
    store: SessionStore | str | None = None,
    modes: Sequence[Mode] | None = None,
    default_mode: str | None = None,
    default_model: str | None = None,
    config_options: Sequence[ConfigOption] = (),
    commands: Sequence[Command] = (),
    permission_policy: PermissionPolicy | None = None,
    tool_kinds: Mapping[str, ToolKind] | None = None,
    coalesce_ms: float = 0.0,
    allowed_paths: Sequence[str] = (),
    context_window: int | None = None,
    transcript_flush_ms: float = 100.0,
    max_stored_attachment: int | None = 1_000_000,
    extensions: Extensions | None = None,
) -> AcpAgent:
    """The ACP agent serving a `pydantic_ai.Agent` (for `acp.run_agent`, tests, custom transports).

    Args:
        agent: The agent to serve. It is never modified.
        agent_factory: Instead of `agent`: builds the agent for a session, before each turn.
        models: Models the user may choose in the `model` config option; `Model` instances are
            offered as `system:model_name`. The first is the default unless `default_model` says otherwise.
        client_tools: Offer `read_file`, `write_file` and `run_command` through the client.
        plan_tool: Offer the `update_plan` tool: `None` in plan-only modes only, `True` always, `False` never.
        usage_limits: Limits of each turn; hitting one ends the turn with `max_turn_requests` or `max_tokens`.
        model_settings: Model settings of each run.
        deps_factory: Builds the run's `deps` from the turn.
        report_tool_errors: A tool that raises reports a failed tool call to the model instead of ending the turn.
        connect_mcp_servers: Connect the MCP servers the client sends in `session/new`.
        name: `agentInfo.name` (default: the agent's name, else `pydantic-acp`).
        title: `agentInfo.title`.
        version: `agentInfo.version`.
        store: A session store, a SQLite path, `"memory"`, or `None` for the default SQLite file.
        modes: Session modes offered (`STANDARD_MODES` for the standard preset).
        default_mode: The initial mode id.
        default_model: The initial model id.
        config_options: Custom config options.
        commands: Custom slash commands.
        permission_policy: Which tools need the user's permission.
        tool_kinds: Per-tool overrides of the tool-kind classifier.
        coalesce_ms: Merge text deltas arriving within this many milliseconds.
        allowed_paths: Directories besides each session's cwd that client tools may touch.
        context_window: The model's context window in tokens, for `usage_update` when the model's
            profile does not give one.
        transcript_flush_ms: How often a running turn's updates are written to the store.
        max_stored_attachment: Largest prompt attachment kept in the stored transcript (`None`: all).
        extensions: Extension methods and notifications the agent serves (`acpkit_core.extensions`).
    """
    model_options, by_id = _models(models)
    runner = PydanticRunner(
        agent,
        agent_factory=agent_factory,
        models=by_id,
        client_tools=client_tools,
        plan_tool=plan_tool,
        usage_limits=usage_limits,
        model_settings=model_settings,
        deps_factory=deps_factory,
        report_tool_errors=report_tool_errors,
        connect_mcp_servers=connect_mcp_servers,
        max_stored_attachment=max_stored_attachment,
    )
    options = AgentOptions(
        name=name or (agent.name if agent is not None and agent.name else None) or "pydantic-acp",
        title=title,
        version=version,
        store=store,
        modes=modes,
        default_mode=default_mode,
        models=model_options,
        default_model=default_model,
        config_options=config_options,
        commands=commands,
        permission_policy=permission_policy,
        tool_kinds=dict(tool_kinds or {}),
        coalesce_ms=coalesce_ms,
        allowed_paths=allowed_paths,
        context_window=context_window,
        transcript_flush_ms=transcript_flush_ms,
        max_stored_attachment=max_stored_attachment,
        extensions=extensions,
    )
    return AcpAgent(runner, options)


def run_acp(agent: AnyAgent | None = None, **kwargs: Any) -> None:
    """Serve `agent` over stdio until the client disconnects (takes `create_acp_agent`'s keywords)."""
    run_stdio(create_acp_agent(agent, **kwargs))
