"""The contract between the ACP server in `acpkit_core` and a framework adapter.

An adapter implements [`Runner`][acpkit_core.runner.protocols.Runner]: one `run_turn` call per
`session/prompt`. The server hands it a [`Turn`][acpkit_core.runner.protocols.Turn], which carries the
session, the parsed prompt, an [`Emitter`][acpkit_core.runner.protocols.Emitter] for updates, permissions,
the client's files and terminal, and cancellation. Everything that is ACP but not framework
specific (sessions, transcript and replay, modes, config options, commands, the stop-reason
invariants) is done by the server, once, for every runner.

Optional hooks ([`SessionHooks`][acpkit_core.runner.protocols.SessionHooks],
[`SessionDeleter`][acpkit_core.runner.protocols.SessionDeleter],
[`ToolLister`][acpkit_core.runner.protocols.ToolLister], [`McpLister`][acpkit_core.runner.protocols.McpLister]) let
a runner start per-session resources (MCP connections), forget a deleted session's data, list its
tools for `/tools` and its MCP servers for `/mcp`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from acp.schema import (
    StopReason,
    ToolCallStatus,
    ToolKind,
)

from ..prompt.ir import Prompt
from .elicitation import Answer, Question

if TYPE_CHECKING:
    from ..prompt.meta import OutputSchema
    from .elicitation import Answer, Choice
    from .host import ClientHost
    from .plan import TurnPlan
    from .providers import LlmEndpoint
    from .tool_lifecycle import ToolCalls
from .types import (
    ClientInfo,
    CompactionStatus,
    McpServerStatus,
    NoticeSeverity,
    PermissionDecision,
    PlanItem,
    Session,
    ToolCallContent,
    ToolInfo,
    ToolListing,
    TurnUsage,
)

__all__ = [
    "AskFallback",
    "Emitter",
    "McpLister",
    "Runner",
    "SessionDeleter",
    "SessionHooks",
    "ToolLister",
    "Turn",
    "current_turn",
]


AskFallback: TypeAlias = "Callable[[Question, Turn], Awaitable[Answer | None]]"
"""`AgentOptions.ask_fallback`: answers a question the client cannot be asked by elicitation (its
own way: an extension request, a message, a default), or returns `None` for the built-in
permission-style question. A cancelled turn gives up the question at once (`cancelled`)."""


# --- MCP server descriptions -------------------------------------------------------------------


# --- Session -----------------------------------------------------------------------------------


# --- Values the runner hands the emitter ---------------------------------------------------------


# --- Protocols ---------------------------------------------------------------------------------


class Emitter(Protocol):
    """Sends `session/update` notifications for the current turn and records them in the transcript.

    Text and thought chunks carry a stable `messageId` per message; call
    [`new_message`][acpkit_core.runner.protocols.Emitter.new_message] when the framework starts a new one.
    """

    def new_message(self) -> None:
        """Start a new agent message: the next chunks carry a fresh `messageId`."""
        ...

    async def text(self, delta: str) -> None:
        """Stream a piece of the agent's answer (`agent_message_chunk`)."""
        ...

    async def thought(self, delta: str) -> None:
        """Stream a piece of the agent's reasoning (`agent_thought_chunk`)."""
        ...

    async def tool_call(
        self,
        tool_call_id: str,
        *,
        title: str,
        kind: ToolKind = "other",
        status: ToolCallStatus = "pending",
        raw_input: Any = None,
        locations: Sequence[tuple[str, int | None]] = (),
        content: Sequence[ToolCallContent] = (),
        meta: Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        """Announce a tool call (`tool_call`). Locations are `(absolute path, 1-based line or None)`;
        `name` is the tool's programmatic name (sent where the client negotiated `toolCallName`)."""
        ...

    async def tool_call_update(
        self,
        tool_call_id: str,
        *,
        status: ToolCallStatus | None = None,
        title: str | None = None,
        kind: ToolKind | None = None,
        raw_input: Any = None,
        raw_output: Any = None,
        locations: Sequence[tuple[str, int | None]] | None = None,
        content: Sequence[ToolCallContent] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Update a tool call (`tool_call_update`); only the fields given are sent."""
        ...

    async def plan(self, items: Sequence[PlanItem]) -> None:
        """Send the complete plan (`plan`). An identical plan sent twice in a row is sent once."""
        ...

    async def usage(self, usage: TurnUsage) -> None:
        """Record one model response's usage and send `usage_update`."""
        ...

    async def session_info(self, *, title: str | None = None, meta: Mapping[str, Any] | None = None) -> None:
        """Send `session_info_update` (the session's title and/or its `_meta`), stamped now.

        Not part of the transcript. A runner that changes the title also sets `session.title`, which
        is stored with the session (`session/list` shows it).
        """
        ...

    async def notice(
        self,
        title: str,
        *,
        description: str | None = None,
        severity: NoticeSeverity = "info",
        text: str | None = None,
    ) -> None:
        """Tell the user something that is neither the answer nor a tool call (a model fallback, a
        server that did not start, a limit reached): advisory, live only, never replayed by `session/load`.

        [`TurnEmitter.notice`][acpkit_core.runner.emitter.TurnEmitter.notice] says how it is shown (`text`:
        what a client without notices reads instead of the title and description).
        """
        ...

    async def compaction(
        self,
        *,
        status: CompactionStatus = "completed",
        compaction_id: str | None = None,
        summary: str | None = None,
        error: str | None = None,
        removed: int | None = None,
    ) -> str:
        """Tell the client the framework compacted the history (returns the compaction's id, to send a
        later status of the same one). [`TurnEmitter.compaction`][acpkit_core.runner.emitter.TurnEmitter.compaction]
        says how it is shown."""
        ...

    async def compaction_summary(self, compaction_id: str, delta: str, *, restart: bool = False) -> None:
        """Stream a piece of an in-progress compaction's summary, as the framework writes it.
        [`TurnEmitter.compaction_summary`][acpkit_core.runner.emitter.TurnEmitter.compaction_summary] says
        how it is shown."""
        ...


class Turn(Protocol):
    """Everything a runner gets for one `session/prompt`."""

    @property
    def session(self) -> Session:
        """The session; `session.state` is persisted after the turn."""
        ...

    @property
    def prompt(self) -> Prompt:
        """The parsed prompt."""
        ...

    @property
    def prompt_id(self) -> str:
        """This prompt's id: the `messageId` of its user message in the transcript. A
        [`RewindPoint`][acpkit_core.runner.rewind.RewindPoint] names prompts by it (mark what the turn adds to
        the framework's memory with it, when the runner rewinds the framework itself)."""
        ...

    @property
    def emit(self) -> Emitter:
        """The update emitter."""
        ...

    @property
    def tool_calls(self) -> ToolCalls:
        """The turn's tool-call lifecycle ([`ToolCalls`][acpkit_core.runner.tool_lifecycle.ToolCalls]).

        Report tool calls through it (announce, start, attach, finish): each transition is sent
        once and in order, and the server closes every call left open when the turn ends.
        """
        ...

    @property
    def client(self) -> ClientInfo:
        """What the client advertised."""
        ...

    @property
    def host(self) -> ClientHost:
        """The client's files and terminal (methods raise `HostUnavailableError` if not advertised)."""
        ...

    @property
    def model_id(self) -> str | None:
        """The model this prompt runs with, if models are offered: the prompt's own choice
        (`_meta.acpkit.model`, or `/model <id> <prompt>`), else the session's `model` config option."""
        ...

    @property
    def llm_endpoint(self) -> LlmEndpoint | None:
        """The model endpoint the client set (`providers/set`, an unstable surface), `None` when it set none.

        A runner that implements [`ModelEndpoints`][acpkit_core.runner.providers.ModelEndpoints] builds its
        model on it for this turn (keeping the model's name): see
        [`acpkit_core.runner.providers`][acpkit_core.runner.providers].
        """
        ...

    @property
    def output_schema(self) -> OutputSchema | None:
        """The structured answer this prompt asked for (`_meta.acpkit.output`), `None` for a free answer.

        A runner that honours it answers with one JSON object validating against the schema, as the
        turn's whole text (see [`acpkit_core.prompt.meta`][acpkit_core.prompt.meta]).
        """
        ...

    @property
    def max_requests(self) -> int:
        """The most model requests this turn may make (`AgentOptions.max_turn_requests`, its subagents'
        included). A runner that reaches it ends the turn `max_turn_requests` with
        [`request_limit_message`][acpkit_core.runner.stop.request_limit_message]."""
        ...

    @property
    def cancelled(self) -> bool:
        """True once `session/cancel` (or `session/close`) arrived for this turn."""
        ...

    async def wait_cancelled(self) -> None:
        """Return when the turn is cancelled (for racing against a framework call)."""
        ...

    def classify_tool(self, name: str, args: Mapping[str, Any] | None = None) -> ToolKind:
        """The ACP tool kind of a tool, with the developer's per-tool overrides applied."""
        ...

    def tool_locations(self, args: Mapping[str, Any] | None) -> list[tuple[str, int | None]]:
        """Locations `(absolute path, line)` from path-like arguments, resolved against `cwd`."""
        ...

    def tool_allowed(self, name: str, kind: ToolKind) -> bool:
        """False when the current mode hides this tool (for example `readonly` and an `edit` tool)."""
        ...

    def needs_permission(self, name: str, kind: ToolKind) -> bool:
        """True when the policy or the mode says to ask before running this tool (and no `always` answer covers it)."""
        ...

    def refusal(self, name: str, kind: ToolKind) -> str:
        """Why this tool may not run, naming what refused it (the agent's policy, the session's mode, the
        user's "always reject"): what the model reads for a call refused without asking."""
        ...

    async def authorize_tool(
        self,
        tool_call_id: str,
        *,
        tool_name: str,
        title: str,
        kind: ToolKind = "other",
        raw_input: Any = None,
    ) -> PermissionDecision:
        """The gate a tool call passes before it runs: `allow` at once, `reject` for a denied or hidden tool,
        else the client's answer to a `session/request_permission`.

        The answer is kept for `tool_call_id` (asking twice about one call asks once) and an `always`
        answer is remembered for the session. Run the tool only when the decision is `allowed`.
        """
        ...

    async def request_permission(
        self,
        tool_call_id: str,
        *,
        tool_name: str,
        title: str,
        kind: ToolKind = "other",
        raw_input: Any = None,
    ) -> PermissionDecision:
        """Ask the client (`session/request_permission`) with the tool call's own id.

        An `always` answer is remembered per session and tool. A `cancelled` outcome marks the turn cancelled.
        """
        ...

    @property
    def plan_only(self) -> bool:
        """True when the current mode lets the model plan but not run mutating tools."""
        ...

    @property
    def plan(self) -> TurnPlan:
        """The session's plan ([`TurnPlan`][acpkit_core.runner.plan.TurnPlan]): change it whole or one entry
        at a time; it is kept with the session and sent to the client on every change."""
        ...

    async def ask(
        self,
        question: str,
        *,
        choices: Sequence[str | Choice] | None = None,
        default: str | None = None,
        tool_call_id: str | None = None,
        url: str | None = None,
        elicitation_id: str | None = None,
    ) -> Answer:
        """Ask the user a question: pick one of `choices`, type a line of text when `choices` is
        `None`, or (with `url`) agree to open a link for something that must not pass through the
        editor, such as a sign-in.

        Through `elicitation/create` (form or URL mode) when the client supports the mode, else
        through `AgentOptions.ask_fallback` or a permission-style question (see
        [`acpkit_core.runner.elicitation`][acpkit_core.runner.elicitation]). A `session/cancel` while it is open
        answers `cancelled` at once. `tool_call_id` ties the question to the tool call asking it.
        An accepted link's `Answer.elicitation_id` goes to `complete_url` once the interaction is over.
        """
        ...

    async def complete_url(self, elicitation_id: str) -> bool:
        """Tell the client an accepted link's out-of-band interaction is over (`elicitation/complete`).

        `False`, and nothing sent, when the id is not an accepted link still open on this connection.
        Works after the turn too, while the connection lasts.
        """
        ...


turn_context: ContextVar[Turn | None] = ContextVar("acpkit_current_turn", default=None)
"""Holds the running turn; the server sets it around each turn (read it with `current_turn()`)."""


def current_turn() -> Turn | None:
    """The turn running in this context (the server sets it around `run_turn`), `None` outside one.

    Tools called by the framework during the turn see it (asyncio tasks and worker threads copy the
    context), which is how an adapter's hook such as `ask_user` finds the turn.
    """
    return turn_context.get()


@runtime_checkable
class Runner(Protocol):
    """What an adapter implements: run one turn and say why it stopped."""

    async def run_turn(self, turn: Turn) -> StopReason:
        """Run the framework on `turn.prompt`, stream updates through `turn.emit`, and return the stop reason.

        Return `cancelled` (or just return; the server knows) when `turn.cancelled` became true.
        """
        ...


@runtime_checkable
class SessionHooks(Protocol):
    """Optional: per-session resources (for example MCP connections)."""

    async def open_session(self, session: Session) -> None:
        """Called when a session is created, loaded, resumed or forked in this process."""
        ...

    async def close_session(self, session: Session) -> None:
        """Called when a session is closed or the connection ends."""
        ...


@runtime_checkable
class SessionDeleter(Protocol):
    """Optional: forget what the runner keeps about a session outside `session.state` (checkpoints, files)."""

    async def delete_session(self, session: Session) -> None:
        """Called by `session/delete` after the session is closed, before the store forgets it."""
        ...


@runtime_checkable
class ToolLister(Protocol):
    """Optional: lets `/tools` list the tools the model can call.

    A runner that does not implement it still gets `/tools`, which then says the agent does not
    list its tools.
    """

    async def list_tools(self, turn: Turn) -> Sequence[ToolInfo] | ToolListing:
        """Every tool the model would be offered in `turn.session` now, whatever the mode.

        Include the adapter's own tools (client tools, the plan tool) and the session's MCP
        tools, with their [`source`][acpkit_core.runner.types.ToolInfo.source]. Do not filter by mode:
        the server shows, for each tool, its kind and whether the current mode and permission
        policy let it run. Called by the `/tools` command, on a turn that runs no model; the
        turn gives the client's capabilities (`turn.host.can_read`, ...) and `turn.plan_only`.
        """
        ...


@runtime_checkable
class McpLister(Protocol):
    """Optional: lets `/mcp` say, for each of the session's MCP servers, whether it is connected and what it offers.

    A runner that does not implement it still gets `/mcp`, which then lists the servers the client
    gave and says the agent does not report on them.
    """

    async def list_mcp_servers(self, turn: Turn) -> Sequence[McpServerStatus]:
        """The state of each of `turn.session.mcp_servers` (by name) now.

        A server left out is shown as not connected. Called by the `/mcp` command, on a turn that
        runs no model.
        """
        ...


CommandHandler: TypeAlias = Callable[[Turn, str], Awaitable[StopReason | None]]
"""A slash-command handler: given the turn and the text after `/name `, returns a stop reason or `None` (`end_turn`)."""
