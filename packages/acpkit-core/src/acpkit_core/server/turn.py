"""The concrete [`Turn`][acpkit_core.runner.protocols.Turn] the server hands a runner."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallUpdate, ToolKind

from ..permissions import PermissionPolicy, RememberedPermissions
from ..prompt.ir import Prompt
from ..prompt.meta import OutputSchema, PromptOptions
from ..runner.elicitation import Answer, Choice, Elicitor, Question, UrlElicitations
from ..runner.emitter import TurnEmitter
from ..runner.host import ClientConnection, ClientHost
from ..runner.permission_gate import PermissionGate
from ..runner.plan import PlanChange, PlanContent, PlanProvider, TurnPlan
from ..runner.protocols import AskFallback
from ..runner.providers import LlmEndpoint
from ..runner.tool_classification import classify_tool, tool_locations
from ..runner.tool_lifecycle import ToolCalls
from ..runner.tool_presentation import ToolPresentation
from ..runner.tool_presenter import ToolPresenter
from ..runner.types import ClientInfo, PermissionDecision, PlanItem, Session
from .file_changes import FileLedger, RecordingHost
from .flush_first import FlushFirst

if TYPE_CHECKING:
    from acp import Client
    from acp.schema import AvailableCommandsUpdate

    from ..permissions import Mode
    from .recording import TurnRecorder

__all__ = ["ServerTurn"]


class ServerTurn:
    """One `session/prompt`: the session, the prompt, the emitter, permissions, host and cancellation."""

    def __init__(
        self,
        *,
        session: Session,
        prompt: Prompt,
        emitter: TurnEmitter,
        client: ClientInfo,
        conn: Client | None,
        mode: Mode | None,
        policy: PermissionPolicy | None,
        remembered: RememberedPermissions,
        tool_kinds: Mapping[str, ToolKind],
        tool_presentation: Mapping[str, ToolPresentation] | None = None,
        allowed_paths: tuple[str, ...] = (),
        max_requests: int = 1000,
        ask_fallback: AskFallback | None = None,
        links: UrlElicitations | None = None,
        options: PromptOptions | None = None,
        plan: Sequence[PlanItem] = (),
        plan_provider: PlanProvider | None = None,
        other_plans: Sequence[PlanContent] = (),
        prompt_id: str = "",
        files: FileLedger | None = None,
        llm_endpoint: LlmEndpoint | None = None,
        workspace: ClientConnection | None = None,
    ) -> None:
        self._session = session
        self._llm_endpoint = llm_endpoint
        self._max_requests = max_requests
        self._prompt = prompt
        self._options = options or PromptOptions()
        self._prompt_id = prompt_id or uuid.uuid4().hex
        self.files = files
        """Records the files the turn changes (`None`: a command's turn, or a store that cannot rewind)."""
        self.recorder: TurnRecorder | None = None
        """Writes the turn to the store as it runs (set by the server)."""
        self.commands_update: Callable[[], Awaitable[AvailableCommandsUpdate]] | None = None
        """Builds the session's `available_commands_update` (its `/rewind` hint lists the latest prompts)."""
        self._emit = emitter
        self._client = client
        self._conn = conn
        tools: ClientConnection | None = workspace if workspace is not None else conn
        self._tools = FlushFirst(tools, emitter.flush) if tools is not None else None
        """Where the host's file and terminal requests go: the client, or the server's workspace (after
        the text waiting to be merged, `FlushFirst`)."""
        self._mode = mode
        self._tool_kinds = tool_kinds
        self._allowed_paths = allowed_paths
        self._host: ClientHost | None = None
        self._cancel = asyncio.Event()
        self.request_task = asyncio.current_task()
        """The task answering this turn's `session/prompt` request (a `$/cancel_request` for it cancels the turn)."""
        self._plan = TurnPlan(
            session,
            plan,
            self._send_plan,
            provider=plan_provider,
            others=other_plans,
            operations=emitter if emitter.uses("planOperations") else None,
        )
        emitter.plan_state = self._plan
        emitter.tool_calls.classifier = self
        emitter.tool_calls.cwd = session.cwd
        if tool_presentation:
            emitter.tool_calls.presenter = ToolPresenter(
                tool_presentation, cwd=session.cwd, read_text=self._read_for_diff
            )
        self.gate = PermissionGate(
            policy=policy,
            mode=mode,
            remembered=remembered,
            asker=self._ask_client if conn is not None else None,
            before_ask=emitter.flush,
            cancelled=self._cancel,
        )
        """The turn's permission and mode gate."""
        self.elicitor = Elicitor(
            conn=conn,
            session_id=session.id,
            form=client.elicitation_form,
            cancelled=self._cancel,
            before_ask=emitter.flush,
            send=emitter.send_unrecorded,
            url=client.elicitation_url,
            fallback=self._bound(ask_fallback),
            links=links,
        )
        """Asks the turn's questions (`ask`)."""

    def _bound(self, fallback: AskFallback | None) -> Callable[[Question], Awaitable[Answer | None]] | None:
        """The developer's fallback, given this turn."""
        if fallback is None:
            return None

        def ask(question: Question) -> Awaitable[Answer | None]:
            return fallback(question, self)

        return ask

    async def _send_plan(self, items: Sequence[PlanItem], change: PlanChange) -> None:
        await self._emit.send_plan(items)

    async def _read_for_diff(self, path: str) -> str | None:
        return await self.host.read_for_diff(path)

    async def _ask_client(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        assert self._conn is not None
        return await self._conn.request_permission(session_id=self._session.id, tool_call=tool_call, options=options)

    @property
    def remembered(self) -> RememberedPermissions:
        """The session's "always" answers, updated by this turn."""
        return self.gate.remembered

    @remembered.setter
    def remembered(self, value: RememberedPermissions) -> None:
        self.gate.remembered = value

    # --- data ----------------------------------------------------------------------------------

    @property
    def session(self) -> Session:
        """The session; `session.state` is persisted after the turn."""
        return self._session

    @property
    def prompt(self) -> Prompt:
        """The parsed prompt."""
        return self._prompt

    @property
    def prompt_id(self) -> str:
        """This prompt's id (the `messageId` of its user message in the transcript)."""
        return self._prompt_id

    @property
    def emit(self) -> TurnEmitter:
        """The update emitter."""
        return self._emit

    @property
    def tool_calls(self) -> ToolCalls:
        """The turn's tool calls: announce, start, attach, finish; the server closes what is left open."""
        return self._emit.tool_calls

    @property
    def client(self) -> ClientInfo:
        """What the client advertised."""
        return self._client

    @property
    def host(self) -> ClientHost:
        """The client's files and terminals, limited to the session's directories."""
        if self._host is None:
            if self.files is None:
                self._host = ClientHost.for_session(self._tools, self._session, self._client, self._allowed_paths)
            else:
                self._host = RecordingHost.of_session(
                    self._tools, self._session, self._client, self._allowed_paths, self.files
                )
        return self._host

    @property
    def model_id(self) -> str | None:
        """This prompt's model: its own choice, else the session's `model` config option."""
        if self._options.model is not None:
            return self._options.model
        value = self._session.config.get("model")
        return value if isinstance(value, str) else None

    @property
    def llm_endpoint(self) -> LlmEndpoint | None:
        """The model endpoint the client set on this connection (`providers/set`, unstable), if any."""
        return self._llm_endpoint

    @property
    def max_requests(self) -> int:
        """The most model requests this turn may make (`AgentOptions.max_turn_requests`)."""
        return self._max_requests

    @property
    def output_schema(self) -> OutputSchema | None:
        """The structured answer this prompt asked for (`_meta.acpkit.output`)."""
        return self._options.output

    def run_as(self, prompt: Prompt, *, model: str | None = None) -> None:
        """Run this turn on `prompt` instead (a command that hands the rest of its text to the runner),
        with `model` for this prompt only when given."""
        self._prompt = prompt
        if model is not None:
            self._options = PromptOptions(model=model, output=self._options.output)

    @property
    def plan_only(self) -> bool:
        """True in a mode that plans without running mutating tools."""
        return self._mode is not None and self._mode.plan_only

    @property
    def plan(self) -> TurnPlan:
        """The session's plan."""
        return self._plan

    # --- cancellation ---------------------------------------------------------------------------

    @property
    def cancelled(self) -> bool:
        """True once the turn was cancelled."""
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Mark the turn cancelled (from `session/cancel`, `session/close`, or a cancelled permission)."""
        self.gate.cancel()

    async def wait_cancelled(self) -> None:
        """Return when the turn is cancelled."""
        await self._cancel.wait()

    # --- tools ------------------------------------------------------------------------------------

    def classify_tool(self, name: str, args: Mapping[str, Any] | None = None) -> ToolKind:
        """The tool's ACP kind, with per-tool overrides (`tool_kinds`, then `tool_presentation` kinds)."""
        return classify_tool(name, args, self._tool_kinds)

    def tool_locations(self, args: Mapping[str, Any] | None) -> list[tuple[str, int | None]]:
        """Locations named by path-like arguments, resolved against the session's cwd.

        Paths outside the session's directories that do not exist (virtual files) are left out.
        """
        session = self._session
        roots = (session.cwd, *session.additional_directories, *self._allowed_paths)
        return tool_locations(args, session.cwd, roots=roots)

    def tool_allowed(self, name: str, kind: ToolKind) -> bool:
        """False when the current mode hides tools of this kind or the policy denies the tool."""
        return self.gate.tool_allowed(name, kind)

    def refusal(self, name: str, kind: ToolKind) -> str:
        """Why this tool may not run, naming what refused it: the policy, the mode or the user."""
        return self.gate.refusal(name, kind)

    def needs_permission(self, name: str, kind: ToolKind) -> bool:
        """True unless every rule (policy, mode, remembered answers) lets this tool run without asking.

        A tool the policy denies or the user rejected "always" also needs permission: the runner then
        calls `request_permission`, which answers `reject` without asking the client.
        """
        return self.gate.needs_permission(name, kind)

    async def authorize_tool(
        self, tool_call_id: str, *, tool_name: str, title: str, kind: ToolKind = "other", raw_input: Any = None
    ) -> PermissionDecision:
        """May this call run now? Asks only when the rules say `ask`; one answer per tool call id."""
        return await self.gate.authorize_tool(
            tool_call_id, tool_name=tool_name, title=title, kind=kind, raw_input=raw_input
        )

    async def request_permission(
        self,
        tool_call_id: str,
        *,
        tool_name: str,
        title: str,
        kind: ToolKind = "other",
        raw_input: Any = None,
    ) -> PermissionDecision:
        """Ask the client with the tool call's own id; remembers "always" answers; a cancel ends the turn."""
        return await self.gate.request_permission(
            tool_call_id, tool_name=tool_name, title=title, kind=kind, raw_input=raw_input
        )

    # --- questions ----------------------------------------------------------------------------------

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
        """Ask the user (elicitation, else the fallback); `cancelled` when the turn is."""
        return await self.elicitor.ask(
            question,
            choices=choices,
            default=default,
            tool_call_id=tool_call_id,
            url=url,
            elicitation_id=elicitation_id,
        )

    async def complete_url(self, elicitation_id: str) -> bool:
        """`elicitation/complete` for an accepted link question (`False`: not open on this connection)."""
        return await self.elicitor.complete_url(elicitation_id)
