"""The value types of the runner contract: what a runner and the server hand each other.

Frozen dataclasses and aliases only; the protocols that use them are in
[`acpkit_core.runner.protocols`][acpkit_core.runner.protocols].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

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

__all__ = [
    "ClientInfo",
    "ClientMcpServer",
    "CompactionStatus",
    "HistoryLog",
    "HttpMcpServer",
    "McpServer",
    "McpServerState",
    "McpServerStatus",
    "McpStreams",
    "NoticeSeverity",
    "PermissionDecision",
    "PlanItem",
    "Session",
    "SseMcpServer",
    "StdioMcpServer",
    "StopReason",
    "ToolCallContent",
    "ToolCallStatus",
    "ToolInfo",
    "ToolKind",
    "ToolListing",
    "ToolSource",
    "TurnUsage",
    "WireMcpServer",
    "mcp_servers_from_wire",
]


ToolCallContent: TypeAlias = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
"""Content of a tool call on the wire: text/content, a diff, or a terminal reference."""


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
    [`acpkit_core.runner.mcp_over_acp`][acpkit_core.runner.mcp_over_acp]). Connect it as a stdio server:
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

    ACP-transport servers (MCP over ACP) become [`ClientMcpServer`][acpkit_core.runner.types.ClientMcpServer]s
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


class HistoryLog:
    """A session's framework history as an append-only log of JSON items (one per message).

    A runner appends what a turn adds; the store writes only the items appended since the last
    save, so a turn costs what it adds, not what the session holds. Earlier items are rewritten
    only when the runner calls [`replace`][acpkit_core.runner.types.HistoryLog.replace] (or `clear`), and
    dropped from the end by [`truncate`][acpkit_core.runner.types.HistoryLog.truncate] (a rewind).

    The items read from the store are handed over once by
    [`take_loaded`][acpkit_core.runner.types.HistoryLog.take_loaded]; the runner keeps its own
    in-memory form of the log (validated messages, say) in
    [`memo`][acpkit_core.runner.types.HistoryLog.memo], which is never stored. When a turn fails or
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
        """True once [`unload`][acpkit_core.runner.types.HistoryLog.unload] was called."""
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
        """After [`truncate`][acpkit_core.runner.types.HistoryLog.truncate]: the next save first drops the stored
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
    [`history`][acpkit_core.runner.types.Session.history] (append-only) and small settings in
    [`state`][acpkit_core.runner.types.Session.state].
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

    Anything that grows with the conversation belongs in [`history`][acpkit_core.runner.types.Session.history].
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
    """The unstable surfaces the client opted into ([`acpkit_core.runner.unstable`][acpkit_core.runner.unstable])."""

    remove_file: bool = False
    """The client serves the ACP Kit extension `_acpkit/fs/remove_file` (it advertised
    `clientCapabilities._meta["acpkit.fs"] = {"removeFile": true}`): a rewind can remove a file the
    agent created."""

    def uses(self, surface: str) -> bool:
        """True when the client opted into the unstable `surface` (a name in `UNSTABLE_SURFACES`)."""
        return surface in self.unstable


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
    `usage_update`; else the developer's `context_window`, else
    [`acpkit_core.runner.prices`][acpkit_core.runner.prices])."""
    cost: float | None = None
    """The price of this response in US dollars, when the framework knows it (else looked up in
    [`acpkit_core.runner.prices`][acpkit_core.runner.prices] by `model`); summed per session into
    `usage_update.cost`."""
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
    """What [`ToolLister.list_tools`][acpkit_core.runner.protocols.ToolLister.list_tools] returns: the tools and
    notes."""

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
