"""The contract between the ACP server in `acpkit_core` and a framework adapter.

An adapter implements [`Runner`][acpkit_core.runner.Runner]: one `run_turn` call per
`session/prompt`. The server hands it a [`Turn`][acpkit_core.runner.Turn], which carries the
session, the parsed prompt, an [`Emitter`][acpkit_core.runner.Emitter] for updates, permissions,
the client's files and terminal, and cancellation. Everything that is ACP but not framework
specific (sessions, transcript and replay, modes, config options, commands, the stop-reason
invariants) is done by the server, once, for every runner.

Optional hooks ([`SessionHooks`][acpkit_core.runner.SessionHooks],
[`SessionDeleter`][acpkit_core.runner.SessionDeleter],
[`ToolLister`][acpkit_core.runner.ToolLister], [`McpLister`][acpkit_core.runner.McpLister]) let
a runner start per-session resources (MCP connections), forget a deleted session's data, list its
tools for `/tools` and its MCP servers for `/mcp`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

from acp.schema import (
    AcpMcpServer,
    ContentToolCallContent,
    FileEditToolCallContent,
    McpServerStdio,
    PlanEntryPriority,
    PlanEntryStatus,
    StopReason,
    TerminalToolCallContent,
    ToolCallStatus,
    ToolKind,
)
from acp.schema import HttpMcpServer as WireHttpMcpServer
from acp.schema import SseMcpServer as WireSseMcpServer

from .ir import Prompt

if TYPE_CHECKING:
    from .elicitation import Answer, Choice
    from .host import ClientHost
    from .plan import TurnPlan
    from .prompt.meta import OutputSchema
    from .providers import LlmEndpoint
    from .tool_calls import ToolCalls

__all__ = [
    "ClientInfo",
    "ClientMcpServer",
    "CompactionStatus",
    "Emitter",
    "HistoryLog",
    "HttpMcpServer",
    "McpLister",
    "McpServer",
    "McpServerState",
    "McpServerStatus",
    "McpStreams",
    "NoticeSeverity",
    "PermissionDecision",
    "PlanItem",
    "Runner",
    "Session",
    "SessionDeleter",
    "SessionHooks",
    "SseMcpServer",
    "StdioMcpServer",
    "StopReason",
    "ToolCallContent",
    "ToolCallStatus",
    "ToolInfo",
    "ToolKind",
    "ToolLister",
    "ToolListing",
    "ToolSource",
    "Turn",
    "TurnUsage",
    "WireMcpServer",
    "current_turn",
    "mcp_servers_from_wire",
]

ToolCallContent: TypeAlias = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
"""Content of a tool call on the wire: text/content, a diff, or a terminal reference."""


# --- MCP server descriptions -------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class StdioMcpServer:
    """An MCP server the client asked the agent to start as a subprocess."""

    name: str
    """Human-readable name."""
    command: str
    """Executable (absolute path, as sent by the client)."""
    args: tuple[str, ...] = ()
    """Command-line arguments."""
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    """Environment variables to set for the process."""
    transport: Literal["stdio"] = "stdio"
    """Discriminator."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpMcpServer:
    """An MCP server reachable over streamable HTTP."""

    name: str
    """Human-readable name."""
    url: str
    """Endpoint URL."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    """HTTP headers to send."""
    transport: Literal["http"] = "http"
    """Discriminator."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SseMcpServer:
    """An MCP server reachable over server-sent events."""

    name: str
    """Human-readable name."""
    url: str
    """Endpoint URL."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    """HTTP headers to send."""
    transport: Literal["sse"] = "sse"
    """Discriminator."""


McpStreams: TypeAlias = "AbstractAsyncContextManager[tuple[Any, Any]]"
"""An open connection to an MCP server: the (read, write) streams an MCP `ClientSession` takes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientMcpServer:
    """An MCP server the client serves through the ACP connection itself (MCP over ACP, unstable).

    Only a client that opted into the `mcpOverAcp` unstable surface sends one (see
    [`acpkit_core.mcp_over_acp`][acpkit_core.mcp_over_acp]). Connect it as a stdio server:
    `async with server.streams() as (read, write)` gives the streams of an MCP `ClientSession`.
    """

    name: str
    """Human-readable name."""
    server_id: str
    """The `serverId` the client gave it (opaque; routes `mcp/connect`)."""
    connector: Callable[[str], McpStreams] | None = field(default=None, compare=False, repr=False)
    """Opens a connection through the ACP connection (set by the server; `None` outside a connection)."""
    transport: Literal["acp"] = "acp"
    """Discriminator."""

    def streams(self) -> McpStreams:
        """Open a connection (`mcp/connect`, closed with `mcp/disconnect`): yields (read, write) streams.

        Raises `ConnectionError` when the description is not tied to a client connection (a session
        read back from the store, say) or the client refuses the connection.
        """
        if self.connector is None:
            raise ConnectionError(f"MCP server {self.name!r} is served over ACP and no client connection serves it")
        return self.connector(self.server_id)


McpServer: TypeAlias = StdioMcpServer | HttpMcpServer | SseMcpServer | ClientMcpServer
"""An MCP server description from `session/new`."""

WireMcpServer: TypeAlias = WireHttpMcpServer | WireSseMcpServer | AcpMcpServer | McpServerStdio
"""An MCP server as the SDK parses it from `session/new` (`mcpServers`)."""


def mcp_servers_from_wire(
    servers: Sequence[WireMcpServer] | None, *, connector: Callable[[str], McpStreams] | None = None
) -> tuple[McpServer, ...]:
    """The client's `mcpServers` as runner-side descriptions.

    ACP-transport servers (MCP over ACP) become [`ClientMcpServer`][acpkit_core.runner.ClientMcpServer]s
    opened with `connector` when it is given, and are skipped otherwise. A hand-built server calls
    it on the `mcp_servers` its `new_session` handler receives.
    """
    out: list[McpServer] = []
    for s in servers or ():
        if isinstance(s, McpServerStdio):
            out.append(
                StdioMcpServer(name=s.name, command=s.command, args=tuple(s.args), env={e.name: e.value for e in s.env})
            )
        elif isinstance(s, WireHttpMcpServer):
            out.append(HttpMcpServer(name=s.name, url=s.url, headers={h.name: h.value for h in s.headers}))
        elif isinstance(s, WireSseMcpServer):
            out.append(SseMcpServer(name=s.name, url=s.url, headers={h.name: h.value for h in s.headers}))
        elif connector is not None:
            out.append(ClientMcpServer(name=s.name, server_id=s.server_id, connector=connector))
    return tuple(out)


# --- Session -----------------------------------------------------------------------------------


class HistoryLog:
    """A session's framework history as an append-only log of JSON items (one per message).

    A runner appends what a turn adds; the store writes only the items appended since the last
    save, so a turn costs what it adds, not what the session holds. Earlier items are rewritten
    only when the runner calls [`replace`][acpkit_core.runner.HistoryLog.replace] (or `clear`), and
    dropped from the end by [`truncate`][acpkit_core.runner.HistoryLog.truncate] (a rewind).

    The items read from the store are handed over once by
    [`take_loaded`][acpkit_core.runner.HistoryLog.take_loaded]; the runner keeps its own
    in-memory form of the log (validated messages, say) in
    [`memo`][acpkit_core.runner.HistoryLog.memo], which is never stored. When a turn fails or
    cannot be saved, the server replaces the session's log with a fresh one read from the store,
    so a memo never outlives the items it stands for.
    """

    __slots__ = ("_cut", "_loaded", "_pending", "_reset", "_saved", "_unloaded", "memo")

    def __init__(self, items: Sequence[Any] = ()) -> None:
        """A log holding `items`, as read from the store."""
        self._loaded: list[Any] | None = list(items)
        self._saved = len(self._loaded)
        self._pending: list[Any] = []
        self._reset = False
        self._cut: int | None = None
        self._unloaded = False
        self.memo: Any = None
        """The runner's in-memory form of the items (never stored)."""

    def __len__(self) -> int:
        return self._saved + len(self._pending)

    def append(self, *items: Any) -> None:
        """Add JSON items at the end (stored by the next save)."""
        self._pending.extend(items)

    def replace(self, items: Sequence[Any]) -> None:
        """Rewrite the whole log with `items` (the next save drops the stored items first)."""
        self._loaded = None
        self._saved = 0
        self._pending = list(items)
        self._reset = True
        self._cut = None

    def truncate(self, count: int) -> None:
        """Keep only the first `count` items (a rewind): the next save drops the stored items after them.

        `memo` is left as it is: a runner that keeps one sets it to match.
        """
        if count < 0:
            raise ValueError(f"HistoryLog.truncate: count must be >= 0, got {count}")
        if count >= len(self):
            return
        if count >= self._saved:
            del self._pending[count - self._saved :]
            return
        if self._loaded is not None:
            del self._loaded[count:]
        self._saved = count
        self._pending = []
        self._cut = count if self._cut is None else min(self._cut, count)

    def clear(self) -> None:
        """Forget every item (`/clear`)."""
        self.replace(())
        self.memo = None

    def unload(self) -> None:
        """Keep nothing of the log in memory between turns: drop `memo`, and have the server read the
        log back from the store before the session's next turn (for a history too big to keep)."""
        self.memo = None
        self._unloaded = True

    @property
    def unloaded(self) -> bool:
        """True once [`unload`][acpkit_core.runner.HistoryLog.unload] was called."""
        return self._unloaded

    def take_loaded(self) -> list[Any] | None:
        """The items read from the store, once (`None` afterwards, or after `replace`)."""
        loaded, self._loaded = self._loaded, None
        return loaded

    @property
    def pending(self) -> Sequence[Any]:
        """Items not stored yet."""
        return self._pending

    @property
    def reset(self) -> bool:
        """True when the next save must drop the stored items first."""
        return self._reset

    @property
    def cut(self) -> int | None:
        """After [`truncate`][acpkit_core.runner.HistoryLog.truncate]: the next save first drops the stored
        items from this position on (`None`: nothing to drop)."""
        return self._cut

    def saved(self, count: int) -> None:
        """Called by the store: the first `count` pending items (and any reset or cut) are now stored."""
        self._saved += count
        del self._pending[:count]
        self._reset = False
        self._cut = None


@dataclass(kw_only=True)
class Session:
    """One ACP session as the runner sees it.

    The server owns it and persists it after every turn; a runner keeps its framework history in
    [`history`][acpkit_core.runner.Session.history] (append-only) and small settings in
    [`state`][acpkit_core.runner.Session.state].
    """

    id: str
    """The ACP session id."""
    cwd: str
    """Absolute working directory the client gave."""
    mcp_servers: tuple[McpServer, ...] = ()
    """MCP servers the client asked the agent to connect to."""
    additional_directories: tuple[str, ...] = ()
    """Directories besides `cwd` the session may touch."""
    mode_id: str | None = None
    """The current mode's id, when the agent offers modes."""
    config: dict[str, str | bool] = field(default_factory=dict[str, str | bool])
    """Current values of the session's config options (`model`, `mode`, custom ones)."""
    state: dict[str, Any] = field(default_factory=dict[str, Any])
    """Small adapter-owned JSON state, written whole with the session after a turn.

    Anything that grows with the conversation belongs in [`history`][acpkit_core.runner.Session.history].
    """
    history: HistoryLog = field(default_factory=HistoryLog, compare=False, repr=False)
    """The framework's message history, stored append-only (one JSON item per message)."""
    title: str | None = None
    """Title shown in session lists, derived from the first prompt unless set."""
    created_at: str = ""
    """ISO 8601 creation time (UTC)."""
    updated_at: str = ""
    """ISO 8601 time of the last change (UTC)."""
    parent_id: str | None = None
    """The session this one was forked from, if any."""
    agent: str | None = None
    """The name (`agentInfo.name`) of the agent that created the session, so clients sharing one store
    can tell whose session it is (sent in `session/list` as `_meta.acpkit.agent`)."""
    owner: str | None = None
    """The principal that created the session when it was served remotely (`acpkit serve` with
    tokens); `None` for local sessions. Another principal's session is "not found" to a remote
    client (list, load, resume, fork, delete, prompt)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientInfo:
    """What the client advertised in `initialize`."""

    name: str | None = None
    """The client's `clientInfo.name`, when sent."""
    read_text_file: bool = False
    """The client serves `fs/read_text_file`."""
    write_text_file: bool = False
    """The client serves `fs/write_text_file`."""
    terminal: bool = False
    """The client serves the `terminal/*` methods."""
    boolean_config_options: bool = False
    """The client can show boolean config options."""
    elicitation_form: bool = False
    """The client serves `elicitation/create` in form mode (`clientCapabilities.elicitation.form`)."""
    elicitation_url: bool = False
    """The client serves `elicitation/create` in URL mode (`clientCapabilities.elicitation.url`)."""
    auth_terminal: bool = False
    """The client can run `terminal` authentication methods (`clientCapabilities.auth.terminal`)."""
    unstable: frozenset[str] = frozenset()
    """The unstable surfaces the client opted into ([`acpkit_core.unstable`][acpkit_core.unstable])."""

    remove_file: bool = False
    """The client serves the ACP Kit extension `_acpkit/fs/remove_file` (it advertised
    `clientCapabilities._meta["acpkit.fs"] = {"removeFile": true}`): a rewind can remove a file the
    agent created."""

    def uses(self, surface: str) -> bool:
        """True when the client opted into the unstable `surface` (a name in `UNSTABLE_SURFACES`)."""
        return surface in self.unstable


# --- Values the runner hands the emitter ---------------------------------------------------------

NoticeSeverity: TypeAlias = Literal["info", "warning", "error"]
"""How much a notice matters: a hint for the client's presentation, never a failure of the turn."""

CompactionStatus: TypeAlias = Literal["in_progress", "completed", "failed", "cancelled"]
"""Where a compaction of the history stands (`compaction_update.status`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanItem:
    """One entry of a plan (the emitter always sends the complete list)."""

    content: str
    """What the step is."""
    status: PlanEntryStatus = "pending"
    """`pending`, `in_progress` or `completed`."""
    priority: PlanEntryPriority = "medium"
    """`high`, `medium` or `low`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnUsage:
    """Token usage of one model response (the emitter adds them up per turn and per session)."""

    input_tokens: int = 0
    """Input tokens."""
    output_tokens: int = 0
    """Output tokens."""
    thought_tokens: int | None = None
    """Reasoning tokens, when the framework reports them."""
    cached_read_tokens: int | None = None
    """Cache read tokens, when reported."""
    cached_write_tokens: int | None = None
    """Cache write tokens, when reported."""
    context_size: int | None = None
    """The model's context window in tokens, when the framework knows it (sent as `size` of
    `usage_update`; else the developer's `context_window`, else [`acpkit_core.prices`][acpkit_core.prices])."""
    cost: float | None = None
    """The price of this response in US dollars, when the framework knows it (else looked up in
    [`acpkit_core.prices`][acpkit_core.prices] by `model`); summed per session into `usage_update.cost`."""
    model: str | None = None
    """The model that answered, as the framework names it (`gpt-4o`), to look up its window and prices."""
    provider: str | None = None
    """Its provider (`openai`), when known: it disambiguates the lookup."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionDecision:
    """The client's answer to a permission request."""

    outcome: Literal["allow", "reject", "cancelled"]
    """`allow`, `reject`, or `cancelled` (the prompt was cancelled while asking)."""
    always: bool = False
    """The user chose an `*_always` option; the server remembers it for this session and tool."""
    option_id: str | None = None
    """The option the client selected, if any."""

    @property
    def allowed(self) -> bool:
        """True when the tool may run."""
        return self.outcome == "allow"


ToolSource: TypeAlias = Literal["agent", "client", "plan", "mcp"]
"""Where a tool comes from: the agent's own (`agent`), the client's files and terminal offered by the
adapter (`client`: `read_file`, `write_file`, `run_command`), the plan tool (`plan`: `update_plan`,
`write_todos`), or one of the session's MCP servers (`mcp`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInfo:
    """A tool as listed by `/tools`."""

    name: str
    """Tool name, as the model sees it."""
    description: str = ""
    """One-line description."""
    kind: ToolKind | None = None
    """ACP tool kind; `None` (the usual) lets the server classify the name, with the developer's
    overrides, exactly as it does for the tool's calls."""
    source: ToolSource = "agent"
    """Where the tool comes from; `/tools` groups the list by it."""
    server: str | None = None
    """The MCP server that provides the tool (`source="mcp"`)."""
    decision: Literal["allow", "ask", "deny"] | None = None
    """The runner's own rule for this tool, when it has one besides the server's (a permission
    middleware inside a LangChain graph, say); `/tools` shows the most cautious of it and the
    session's policy, mode and remembered answers."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolListing:
    """What [`ToolLister.list_tools`][acpkit_core.runner.ToolLister.list_tools] returns: the tools and notes."""

    tools: Sequence[ToolInfo] = ()
    """Every tool the model can call in the session (the mode's filter is applied by the server)."""
    notes: Sequence[str] = ()
    """Lines shown after the list, for tools that cannot be listed now (an MCP server that did not
    start, or one connected only when the first prompt arrives); never leave them out silently."""


McpServerState: TypeAlias = Literal["connected", "failed", "not_connected"]
"""Where one of the session's MCP servers stands: its tools are offered (`connected`), it did not start
(`failed`), or the runner does not connect it (`not_connected`, with the reason)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerStatus:
    """One of the session's MCP servers as `/mcp` shows it (what `McpLister.list_mcp_servers` returns)."""

    name: str
    """The server's name, as the client gave it in `mcpServers`."""
    state: McpServerState
    """`connected`, `failed` or `not_connected`."""
    detail: str | None = None
    """Why it failed or is not connected; for a connected server, anything the user should know
    about it (its tools could not be listed, or the agent does not offer them)."""
    tools: Sequence[str] = ()
    """The names of the tools it offers, when connected."""


# --- Protocols ---------------------------------------------------------------------------------


class Emitter(Protocol):
    """Sends `session/update` notifications for the current turn and records them in the transcript.

    Text and thought chunks carry a stable `messageId` per message; call
    [`new_message`][acpkit_core.runner.Emitter.new_message] when the framework starts a new one.
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

        [`TurnEmitter.notice`][acpkit_core.emitter.TurnEmitter.notice] says how it is shown (`text`:
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
        later status of the same one). [`TurnEmitter.compaction`][acpkit_core.emitter.TurnEmitter.compaction]
        says how it is shown."""
        ...

    async def compaction_summary(self, compaction_id: str, delta: str, *, restart: bool = False) -> None:
        """Stream a piece of an in-progress compaction's summary, as the framework writes it.
        [`TurnEmitter.compaction_summary`][acpkit_core.emitter.TurnEmitter.compaction_summary] says
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
        [`RewindPoint`][acpkit_core.rewind.RewindPoint] names prompts by it (mark what the turn adds to
        the framework's memory with it, when the runner rewinds the framework itself)."""
        ...

    @property
    def emit(self) -> Emitter:
        """The update emitter."""
        ...

    @property
    def tool_calls(self) -> ToolCalls:
        """The turn's tool-call lifecycle ([`ToolCalls`][acpkit_core.tool_calls.ToolCalls]).

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

        A runner that implements [`ModelEndpoints`][acpkit_core.providers.ModelEndpoints] builds its
        model on it for this turn (keeping the model's name): see [`acpkit_core.providers`][acpkit_core.providers].
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
        [`request_limit_message`][acpkit_core.stop.request_limit_message]."""
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
        """The session's plan ([`TurnPlan`][acpkit_core.plan.TurnPlan]): change it whole or one entry
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
        [`acpkit_core.elicitation`][acpkit_core.elicitation]). A `session/cancel` while it is open
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
        tools, with their [`source`][acpkit_core.runner.ToolInfo.source]. Do not filter by mode:
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
