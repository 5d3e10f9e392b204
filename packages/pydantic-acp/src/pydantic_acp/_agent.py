"""The public entry points: `create_acp_agent` and `run_acp`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from acpkit_core import AcpAgent, run_stdio
from acpkit_core.config import AgentOptionsKwargs, ModelOption, agent_options
from acpkit_core.errors import UserError
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import UsageLimits

from ._runner import AgentFactory, AnyAgent, DepsFactory, PydanticRunner

__all__ = ["ModelSpec", "PydanticAcpOptions", "create_acp_agent", "run_acp"]

ModelSpec = ModelOption | Model | str | tuple[ModelOption, Model]
"""A model offered to the user: a `ModelOption`, a pydantic-ai `Model` (offered as `system:model_name`),
a model name (`openai:gpt-5`), or a `(ModelOption, Model)` pair: that model, offered under the
option's id, name and description."""


def model_id(model: Model) -> str:
    """The id a `Model` instance is offered under: `system:model_name`."""
    return f"{model.system}:{model.model_name}"


def _models(specs: Sequence[ModelSpec]) -> tuple[list[ModelOption], dict[str, Model | str]]:
    options: list[ModelOption] = []
    by_id: dict[str, Model | str] = {}
    for spec in specs:
        if isinstance(spec, tuple):
            option, model = spec
            if not isinstance(option, ModelOption) or not isinstance(model, Model):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise UserError(f"create_acp_agent(models=...): a pair is (ModelOption, Model), got {spec!r}")
            options.append(option)
            by_id[option.id] = model
        elif isinstance(spec, ModelOption):
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


class PydanticAcpOptions(AgentOptionsKwargs, total=False):
    """The keywords of [`create_acp_agent`][pydantic_acp.create_acp_agent] and [`run_acp`][pydantic_acp.run_acp].

    The pydantic-ai options below, plus every [`AgentOptions`][acpkit_core.config.AgentOptions]
    field (`name` defaults to the agent's name, else `pydantic-acp`).
    """

    agent_factory: AgentFactory
    """Instead of `agent`: `(session) -> Agent` (or an awaitable), called before each turn, so the agent
    may depend on the session's cwd, mode or config. Default: none."""
    models: Sequence[ModelSpec]
    """Models offered in the `model` config option: model names (`"openai:gpt-5"`), `Model` instances
    (offered as `system:model_name`), `ModelOption`s, or `(ModelOption, Model)` pairs (a `Model`
    instance under an id, name and description of your choosing); the first is the default. Default: none."""
    client_tools: bool
    """Offer `read_file`, `write_file` and `run_command` through the client. Default: `False`."""
    plan_tool: bool | None
    """Offer the plan tools (`update_plan`, `update_plan_step`): `None` in plan-only modes only,
    `True` always, `False` never. Default: `None`."""
    plan_output: bool
    """In a plan-only mode, the model answers with the plan itself (a `PlanOutput`: steps and a
    summary) instead of calling `update_plan`: the steps are shown as the plan while the model writes
    them, the summary as the answer. Default: `False`."""
    usage_limits: UsageLimits | None
    """`UsageLimits` of each turn (tool calls, tokens); hitting one ends the turn `max_turn_requests`
    (tool calls) or `max_tokens` (token limits), with a message naming it. The model requests of a
    turn are limited by `max_turn_requests` (one option for every adapter), never by this one's
    `request_limit`: set to anything but pydantic-ai's default, it is refused. Default: none."""
    model_settings: ModelSettings | None
    """`ModelSettings` of each run. Default: none."""
    deps_factory: DepsFactory | None
    """`(turn) -> deps` for agents with dependencies. Default: none."""
    report_tool_errors: bool
    """A tool that raises becomes a failed tool call the model reads (`ValueError: ...`); `False` ends
    the turn instead. Default: `True`."""
    connect_mcp_servers: bool
    """Connect the MCP servers the client sends in `session/new`. Default: `True`."""
    fallback_models: Sequence[Model | str]
    """Models to try, in order, when the turn's model fails with a provider error (pydantic-ai's
    `ModelFallback` capability, added to each run): a model id of `models`, a model name or a `Model`.
    The user sees a notice naming the model that failed, why, and the one that answered.
    Default: none."""
    show_hooks: bool
    """Show the run's lifecycle as tool-call cards: history rewritten by history processors, provider
    compaction, and the `CustomEvent`s / `CapabilityEvent`s hooks, tools and capabilities emit.
    Default: `False`."""


def create_acp_agent(agent: AnyAgent | None = None, **options: Unpack[PydanticAcpOptions]) -> AcpAgent:
    """The ACP agent serving a `pydantic_ai.Agent` (for `acp.run_agent`, tests, custom transports).

    Args:
        agent: The agent to serve. It is never modified.
        **options: The [`PydanticAcpOptions`][pydantic_acp.PydanticAcpOptions].
    """
    model_options, by_id = _models(options.pop("models", ()))
    runner = PydanticRunner(
        agent,
        agent_factory=options.pop("agent_factory", None),
        models=by_id,
        client_tools=options.pop("client_tools", False),
        plan_tool=options.pop("plan_tool", None),
        usage_limits=options.pop("usage_limits", None),
        model_settings=options.pop("model_settings", None),
        deps_factory=options.pop("deps_factory", None),
        report_tool_errors=options.pop("report_tool_errors", True),
        connect_mcp_servers=options.pop("connect_mcp_servers", True),
        max_stored_attachment=options.get("max_stored_attachment", 1_000_000),
        show_hooks=options.pop("show_hooks", False),
        fallback_models=options.pop("fallback_models", ()),
        plan_output=options.pop("plan_output", False),
    )
    name = (agent.name if agent is not None else None) or "pydantic-acp"
    return AcpAgent(runner, agent_options(options, models=model_options, default_name=name))


def run_acp(agent: AnyAgent | None = None, **options: Unpack[PydanticAcpOptions]) -> None:
    """Serve `agent` over stdio until the client disconnects (takes `create_acp_agent`'s keywords)."""
    run_stdio(create_acp_agent(agent, **options))
