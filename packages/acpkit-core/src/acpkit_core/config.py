"""What a developer configures about an ACP agent, whatever the framework.

[`AgentOptions`][acpkit_core.config.AgentOptions] gathers it; both adapters' `create_acp_agent`
and `run_acp` take the same keywords, typed by [`AgentOptionsKwargs`][acpkit_core.config.AgentOptionsKwargs],
and pass them here, so each option means the same thing everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict

from acp.schema import ToolKind

from .errors import UserError
from .runner.emitter import COALESCE_MS
from .runner.host_tools import HostTools
from .runner.protocols import CommandHandler

if TYPE_CHECKING:
    from .auth import Authentication
    from .extensions import Extensions
    from .permissions import PermissionPolicy
    from .runner.plan import PlanProvider
    from .runner.protocols import AskFallback
    from .runner.tool_presentation import ToolPresentation
    from .store import SessionStore
    from .telemetry import Telemetry
from .permissions import Mode

__all__ = [
    "AgentOptions",
    "AgentOptionsKwargs",
    "BooleanOption",
    "Command",
    "ConfigOption",
    "ModelOption",
    "SelectOption",
    "SelectValue",
    "agent_options",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelOption:
    """A model the developer offers in the `model` config option."""

    id: str
    """The framework's model name (`openai:gpt-5`, `test`)."""
    name: str | None = None
    """Name shown to the user (defaults to the id)."""
    description: str | None = None
    """One line shown to the user."""
    context_window: int | None = None
    """The model's context window in tokens (for `usage_update` when the framework does not say)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectValue:
    """One value of a select config option."""

    value: str
    """The value's id."""
    name: str
    """Name shown to the user."""
    description: str | None = None
    """One line shown to the user."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectOption:
    """A config option with a list of values."""

    id: str
    """Option id."""
    name: str
    """Name shown to the user."""
    values: Sequence[SelectValue]
    """The values to choose from."""
    default: str
    """The initial value."""
    description: str | None = None
    """One line shown to the user."""
    category: Literal["mode", "model", "model_config", "thought_level"] | None = None
    """Semantic category (UX only)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BooleanOption:
    """An on/off config option, shown only to clients that advertised boolean options."""

    id: str
    """Option id."""
    name: str
    """Name shown to the user."""
    default: bool = False
    """The initial value."""
    description: str | None = None
    """One line shown to the user."""


ConfigOption = SelectOption | BooleanOption
"""A custom config option."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Command:
    """A slash command the runner or developer registers (`/name args`)."""

    name: str
    """Name without the slash."""
    description: str
    """Shown in the client's command list."""
    handler: CommandHandler
    """Runs the command with the turn and the text after the name."""
    hint: str | None = None
    """Hint for the unstructured input, shown by the client."""


@dataclass(kw_only=True)
class AgentOptions:
    """Everything about an ACP agent that is not the framework's own agent."""

    name: str = "acpkit-agent"
    """`agentInfo.name`."""
    title: str | None = None
    """`agentInfo.title`."""
    version: str = "0.1.0"
    """`agentInfo.version`."""
    store: SessionStore | str | None = None
    """A `SessionStore`, a SQLite file path, `"memory"`, or `None` for `$ACPKIT_STATE_DIR/sessions.sqlite3`
    (else the XDG state directory)."""
    modes: Sequence[Mode] | None = None
    """Modes offered; `None` for none. `STANDARD_MODES` is the standard preset (agentic, interactive,
    readonly, planning)."""
    default_mode: str | None = None
    """Initial mode id (defaults to the first mode)."""
    models: Sequence[ModelOption] = ()
    """Models offered through the `model` config option."""
    default_model: str | None = None
    """Initial model id (defaults to the first model)."""
    config_options: Sequence[ConfigOption] = ()
    """Custom `SelectOption` / `BooleanOption`s, readable in `turn.session.config`."""
    commands: Sequence[Command] = ()
    """Custom slash `Command`s besides `/model`, `/mode`, `/tools`, `/clear`."""
    permission_policy: PermissionPolicy | None = None
    """A `PermissionPolicy`: which tools ask first (besides what the mode and the framework ask), by name
    pattern or kind."""
    tool_kinds: Mapping[str, ToolKind] = field(default_factory=dict[str, ToolKind])
    """Per-tool overrides of the tool-kind classifier (`{"lookup": "search", "mcp__db__*": "read"}`)."""
    tool_presentation: Mapping[str, ToolPresentation] = field(default_factory=dict[str, "ToolPresentation"])
    """How tool calls are shown, by tool name or glob pattern: title, kind, locations, a diff from the
    arguments, the output as code, a terminal or search results (`{"run_sql": ToolPresentation(...)}`;
    `TOOL_PRESETS` covers common file, shell and web tools). See
    [`acpkit_core.runner.tool_presentation`][acpkit_core.runner.tool_presentation]."""
    coalesce_ms: float = COALESCE_MS
    """Text and thought deltas that come within this window of the last chunk sent are merged into one
    chunk, sent at the window's end; the first delta after a pause goes at once, and deltas merge only
    within one message (0: every delta is its own chunk). See "Chunk merging" in the sessions guide."""
    write_window_ms: float = 2.0
    """Streamed updates sent within this window of the last write share one write (one system call),
    each still its own message, in order; a response or a request to the client goes at once with
    everything before it, and so does the first update after a pause (0: one write per message)."""
    allowed_paths: Sequence[str] = ()
    """Directories besides each session's cwd that client file and terminal access may touch; with
    `host_tools="server"`, the server's workspace (the only directories those tools may touch)."""
    host_tools: HostTools = "client"
    """Who serves the agent's file and terminal tools: `"client"` (what the client advertised),
    `"server"` (this machine's `allowed_paths`, under the path policy) or `"off"` (none; the agent is
    told the client has no files or terminals). See [`acpkit_core.runner.host_tools`][acpkit_core.runner.host_tools]."""
    context_window: int | None = None
    """The model's context window in tokens, for `usage_update` when the framework does not report
    one (a [`ModelOption`][acpkit_core.config.ModelOption]'s own window wins for that model)."""
    transcript_flush_ms: float = 100.0
    """How often a running turn's streamed updates are written to the store, so a crash mid-turn
    keeps the prompt (written at once) and all but the last moments of the answer."""
    max_stored_attachment: int | None = 1_000_000
    """Largest prompt attachment (characters of its wire JSON: base64 for images and audio) kept in
    the stored transcript; a larger one is replaced there by a note saying what it was. `None`:
    keep everything."""
    extensions: Extensions | None = None
    """Extension methods and notifications (`_`-prefixed) the agent serves; `None`: none (-32601)."""
    max_message_bytes: int | None = None
    """The largest JSON-RPC message (one line) accepted from the client, in bytes; a longer one is
    skipped without being kept in memory and answered -32600. `None`: the `ACPKIT_MAX_MESSAGE_BYTES`
    environment variable, else 32 MiB (see [`MAX_MESSAGE_BYTES`][acpkit_core.limits.MAX_MESSAGE_BYTES])."""
    max_prompt_bytes: int | None = None
    """The largest prompt accepted (text, base64 data and embedded resource text of all its blocks
    together), in bytes; a larger one is answered -32602 before the turn starts. `None`: the
    `ACPKIT_MAX_PROMPT_BYTES` environment variable, else 16 MiB (see
    [`MAX_PROMPT_BYTES`][acpkit_core.limits.MAX_PROMPT_BYTES])."""
    max_turn_requests: int | None = None
    """The most model requests one turn may make (a subagent's included); the turn then ends
    `max_turn_requests` with a message saying which limit stopped it and how to raise it. Both
    adapters count the same thing: pydantic-ai's request limit is set to it, and a LangGraph graph's
    model calls are counted. `None`: the `ACPKIT_MAX_TURN_REQUESTS` environment variable, else 1,000
    (see [`MAX_TURN_REQUESTS`][acpkit_core.limits.MAX_TURN_REQUESTS])."""
    auth: Authentication | None = None
    """Authentication methods advertised in `initialize` (an [`Authentication`][acpkit_core.auth.Authentication]);
    when one is required, every session request answers -32000 until one succeeds. `None`: no authentication."""
    telemetry: Telemetry | None = None
    """OpenTelemetry traces and metrics, and one log line per connection and per turn (a
    [`Telemetry`][acpkit_core.telemetry.Telemetry]).
    `None`: none, and no telemetry work at all."""
    ask_fallback: AskFallback | None = None
    """How a tool's question ([`Turn.ask`][acpkit_core.runner.protocols.Turn.ask]) reaches a client that cannot
    be asked by elicitation in the needed mode: an async `(question, turn) -> Answer | None`
    ([`AskFallback`][acpkit_core.runner.protocols.AskFallback]); `None` from it, or no fallback, asks a
    permission-style question instead."""
    plan_provider: PlanProvider | None = None
    """A plan owned by the host, not the model ([`PlanProvider`][acpkit_core.runner.plan.PlanProvider]): read when a
    session opens and around every turn, shown when it changed; with `set_plan`, the model's changes go to
    it. `None`: the model's plan (its plan tool, `todos`, a `PlanOutput` answer) is the plan."""

    def __post_init__(self) -> None:
        """Refuse a window or an interval that is not a finite number of milliseconds, 0 or more."""
        for name in _MILLISECOND_OPTIONS:
            value: object = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
                raise UserError(f"{name} must be a number of milliseconds, 0 or more (got {value!r})")


class AgentOptionsKwargs(TypedDict, total=False):
    """[`AgentOptions`][acpkit_core.config.AgentOptions] as keyword arguments of an adapter's entry points.

    Every field of `AgentOptions` but `models` (each adapter takes its own model specs), with the
    same types; an adapter's options `TypedDict` extends it and its `create_acp_agent` / `run_acp`
    take `**options: Unpack[...]`. The meaning and default of each is the `AgentOptions` field's.
    """

    name: str
    title: str | None
    version: str
    store: SessionStore | str | None
    modes: Sequence[Mode] | None
    default_mode: str | None
    default_model: str | None
    config_options: Sequence[ConfigOption]
    commands: Sequence[Command]
    permission_policy: PermissionPolicy | None
    tool_kinds: Mapping[str, ToolKind]
    tool_presentation: Mapping[str, ToolPresentation]
    coalesce_ms: float
    write_window_ms: float
    allowed_paths: Sequence[str]
    host_tools: HostTools
    context_window: int | None
    transcript_flush_ms: float
    max_stored_attachment: int | None
    extensions: Extensions | None
    max_message_bytes: int | None
    max_prompt_bytes: int | None
    max_turn_requests: int | None
    auth: Authentication | None
    telemetry: Telemetry | None
    ask_fallback: AskFallback | None
    plan_provider: PlanProvider | None


def agent_options(
    kwargs: AgentOptionsKwargs, *, models: Sequence[ModelOption] = (), default_name: str | None = None
) -> AgentOptions:
    """The `AgentOptions` an adapter's entry point was given, once it has taken its own keywords out.

    Raises `UserError` naming any keyword left that is not an option, so a misspelt option is refused
    instead of ignored.
    """
    unknown = sorted(set(kwargs) - _OPTION_NAMES)
    if unknown:
        raise UserError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"the options are {', '.join(sorted(_OPTION_NAMES | {'models'}))} and the adapter's own"
        )
    if default_name is not None and "name" not in kwargs:
        kwargs = {**kwargs, "name": default_name}
    return AgentOptions(models=tuple(models), **kwargs)


_OPTION_NAMES = frozenset(AgentOptionsKwargs.__annotations__)

_MILLISECOND_OPTIONS = ("coalesce_ms", "write_window_ms", "transcript_flush_ms")
