"""One `session/prompt` from start to stop reason: the turn, the race with cancel, the record."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from acp import RequestError
from acp.schema import (
    AudioContentBlock,
    AvailableCommandsUpdate,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    PromptResponse,
    ResourceContentBlock,
    SessionInfoUpdate,
    TextContentBlock,
)

from ..config import AgentOptions, Command
from ..errors import AcpKitError, PromptError, SessionBusyError, error_code
from ..limits import MAX_TURN_REQUESTS
from ..prompt.meta import prompt_options
from ..runner.emitter import TurnEmitter
from ..runner.plan import PLAN_STATE_KEY, PLANS_STATE_KEY, plan_from_json, plans_from_json
from ..runner.protocols import Runner, turn_context
from ..runner.tool_presentation import kind_overrides, validate_presentation
from ..runner.types import StopReason
from ..runner.updates import WireUpdate, update_to_json
from ..runner.warmup import first_stage_done, turn_started
from ..store import PromptMark, RewindStore, UpdateLogStore
from ..store.base import now_iso
from ..telemetry.lookup import observer_of
from ..telemetry.observer import ConnectionProbe, TurnProbe
from ..thinking import show_thinking
from . import memory
from ._boundary import TurnFailed
from ._prompt import check_prompt_size, display_line, parse_prompt, prompt_size, prompt_title
from .commands import available_commands, match_command
from .file_changes import FileLedger
from .prompt_response import numbered_response, prompt_response, response_usage, stored_session_cost
from .reattach import answer_resent
from .recording import TurnRecorder, interruption_updates, new_owner
from .rewinding import Rewinder, rewind_hint
from .session_manager import SessionManager
from .sessions import LiveSession
from .turn import ServerTurn
from .turn_log import LoggedClient, TurnLog, prompt_key

__all__ = ["CANCEL_GRACE_S", "PromptBlock", "TurnRunner"]

logger = logging.getLogger("acpkit_core.server")

_CAUSE_LIMIT = 1000
"""How much of a failed turn's exception message (its first line) reaches the client: a provider's
missing-key message, with its advice, is about 300 characters."""

_SUMMARY_LIMIT = 200
"""How much of a prompt its mark keeps (what `/rewind`'s hint and pickers show)."""

CANCEL_GRACE_S = 0.05
"""How long a cancelled runner may take to return on its own before its task is cancelled."""

PromptBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)


class TurnRunner:
    """Runs prompt turns on the connection's sessions: one at a time per session."""

    def __init__(
        self,
        runner: Runner,
        options: AgentOptions,
        sessions: SessionManager,
        commands: dict[str, Command],
        rewinder: Rewinder | None = None,
    ) -> None:
        self.runner = runner
        self.options = options
        self.sessions = sessions
        self.commands = commands
        self.rewinder = rewinder
        self._commands_wire: WireUpdate | None = None
        validate_presentation(options.tool_presentation)
        MAX_TURN_REQUESTS.value(options.max_turn_requests)  # a bad value stops the agent at start-up
        self._tool_kinds = kind_overrides(options.tool_kinds, options.tool_presentation)
        self.owner = new_owner()
        """This connection's turn-lease owner in the store."""
        self.connection: ConnectionProbe | None = None
        """The connection's telemetry probe (set by the transport when telemetry is on)."""
        if options.telemetry is not None:
            options.telemetry.observer()  # a missing extra or a wrong OTEL_* variable is said now, not mid-turn

    async def prompt(
        self,
        session_id: str,
        blocks: Sequence[PromptBlock | dict[str, Any]],
        meta: Mapping[str, Any] | None = None,
    ) -> PromptResponse:
        """Run one turn. Refuses a second prompt while a turn runs (`SessionBusyError`, -32600).

        `blocks` are the wire JSON blocks (or the SDK's models, where the SDK validated them first);
        they are checked against the prompt size limit, then parsed, before anything runs or is stored
        (a big prompt refused there gives its memory back as a big turn does).
        `meta` is the request's `_meta`: its `acpkit` options (a model for this prompt, a structured
        answer) are checked as strictly as the blocks ([`prompt_options`][acpkit_core.prompt.meta.prompt_options]).
        A turn whose runner raised is recorded, its tool calls closed, and then answered with
        [`TurnFailed`][acpkit_core.server._boundary.TurnFailed] (-32603, or the code the error means)
        carrying the one-line cause. `meta` is the request's `_meta` (its W3C trace context is
        continued by the turn's span when telemetry is on).
        """
        turn_started()  # the start-up warm-up begins no throwaway run beside a turn
        live = await self.sessions.live(session_id)
        if live.turn is not None or live.rewinding:
            raise SessionBusyError(
                f"session {session_id!r} is still running a turn; wait for its response or send session/cancel"
            )
        size = prompt_size(blocks)
        try:
            check_prompt_size(size, self.options.max_prompt_bytes)
            parsed = parse_prompt(blocks)
        except PromptError:
            # What the refused prompt held (its decoded text, kept alive by the error's traceback
            # until a collection) goes back to the system as an accepted big prompt's does.
            _release_after_big_turn(size, False, False)
            raise
        command = match_command(parsed, self.commands)
        prompt_id = uuid.uuid4().hex
        # A prompt the runner runs is marked, and its files recorded, so that it can be rewound.
        rewinds = command is None and self.rewinder is not None and self.rewinder.available
        session = live.session
        session_options = self.sessions.session_options
        options = prompt_options(meta, models=[m.id for m in session_options.models])
        outbox = self.sessions.outbox
        log = self._new_log(session_id, key := prompt_key(meta))
        if log is not None and key is not None:  # sent again after a reconnect: the turn it started answers
            answer = await answer_resent(self.sessions, session_id, key, wait=0.0)
            if answer is not None:
                return answer
        probe = self._probe(session_id, meta)
        send = functools.partial(outbox.send, session_id)
        emitter = TurnEmitter(
            probe.sender(send) if probe is not None else send,
            coalesce_ms=self.options.coalesce_ms,
            context_window=session_options.context_window(session, options.model),
            show_thoughts=show_thinking(session.config),
            session_cost=stored_session_cost(live.server),
            unstable=self.sessions.client.unstable,
        )
        turn = ServerTurn(
            session=session,
            prompt=parsed,
            emitter=emitter,
            client=self.sessions.client,
            conn=_logged(probe.client(outbox.conn) if probe is not None else outbox.conn, log),
            mode=session_options.mode(session),
            policy=self.options.permission_policy,
            remembered=live.remembered,
            tool_kinds=self._tool_kinds,
            tool_presentation=self.options.tool_presentation,
            allowed_paths=tuple(self.options.allowed_paths),
            max_requests=MAX_TURN_REQUESTS.value(self.options.max_turn_requests),  # `acpkit run` may set it later
            ask_fallback=self.options.ask_fallback,
            links=outbox.links,
            options=options,
            plan=plan_from_json(live.server.get(PLAN_STATE_KEY)),
            plan_provider=self.options.plan_provider,
            other_plans=plans_from_json(live.server.get(PLANS_STATE_KEY)),
            prompt_id=prompt_id,
            files=FileLedger(prompt_id) if rewinds else None,
            llm_endpoint=self.sessions.llm_endpoint,
            workspace=self.sessions.workspace,
        )
        turn.commands_update = functools.partial(self.commands_update, session_id)
        if probe is not None:
            emitter.tool_calls.observer = probe
        if self.sessions.admission is not None:
            self.sessions.admission.turn()  # a limit shared with other connections (acpkit serve's quotas)
        if log is not None:  # known to the connection at once: a client leaving before its first write detaches it
            outbox.logs[session_id] = log
        live.turn = turn
        live.idle.clear()
        began = memory.turn_began()

        on_lease = functools.partial(self._start_log, log) if log is not None else None

        async def body() -> PromptResponse:
            try:
                await first_stage_done()  # what the warm-up is building, the turn would build again beside it
                if probe is None:
                    response = await self._run(live, turn, blocks, command, on_lease)
                else:
                    response = await _observed(probe, self._run(live, turn, blocks, command, on_lease))
                if log is not None and live.retry is None:
                    # the end's number: a client's cursor after the turn (logged before the turn counts as
                    # ended: a server draining waits for that, then closes the connections)
                    response = numbered_response(response, log.last + 1)
                    await log.end({"end": response.model_dump(mode="json", by_alias=True, exclude_none=True)})
            except RequestError as exc:
                if log is not None:
                    await log.end({"error": {"code": exc.code, "message": str(exc), "data": exc.data}})
                raise
            except BaseException:
                if log is not None:
                    await log.end({"error": {"code": -32603, "message": "Internal error"}})
                raise
            finally:
                live.turn = None
                live.reset_transcript = False
                live.idle.set()
                _release_after_big_turn(size, memory.turn_grew(began), session.history.unloaded)
                if log is not None:
                    outbox.logs.pop(session_id, None)
            return response

        if log is None:
            response = await body()
        else:
            # The turn outlives its request's task: a client that drops its connection can re-attach.
            try:
                response = await asyncio.shield(asyncio.ensure_future(body()))
            except SessionBusyError:
                # A prompt sent again after a reconnect may find its first sending's turn just starting.
                if key is None or (answer := await answer_resent(self.sessions, session_id, key, wait=5.0)) is None:
                    raise
                return answer
        retry, live.retry = live.retry, None
        if retry:  # `/retry` undid the last prompt: it runs again, as this request's turn
            return await self.prompt(session_id, retry)
        return response

    def _new_log(self, session_id: str, key: str | None) -> TurnLog | None:
        """The turn's numbered log when the server keeps one (`acpkit serve` with a store that can)."""
        logs = self.sessions.turn_logs
        store = self.sessions.store
        if logs is None or not isinstance(store, UpdateLogStore):
            return None
        log = TurnLog(
            logs,
            store,
            session_id,
            cancel=functools.partial(self.cancel, session_id),
            prompt_key=key,
            flush_seconds=min(self.options.transcript_flush_ms, 50.0) / 1000.0,
        )
        log.on_takeover = self.sessions.outbox.on_takeover
        return log

    async def _start_log(self, log: TurnLog) -> None:
        try:
            await log.start()
        except BaseException:
            self.sessions.outbox.logs.pop(log.session_id, None)
            await log.end({"error": {"code": -32603, "message": "the turn could not start"}})
            raise

    @property
    def lists_prompts(self) -> bool:
        """True when `/rewind` is the built-in command (whose hint lists the session's latest prompts)."""
        command = self.commands.get("rewind")
        handler = getattr(command.handler, "__func__", None) if command is not None else None
        return self.rewinder is not None and handler is not None and handler.__name__ == "command_rewind"

    async def commands_update(self, session_id: str) -> AvailableCommandsUpdate:
        """The session's `available_commands_update` (`/rewind`'s hint lists its latest prompts)."""
        hints: dict[str, str] = {}
        live = self.sessions.open_session(session_id)
        if self.rewinder is not None and live is not None and self.lists_prompts:
            hints["rewind"] = rewind_hint(await self.rewinder.marks(live))
        return AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=available_commands(self.commands, hints)
        )

    async def _commands_json(self, live: LiveSession) -> WireUpdate:
        """`commands_update` as wire JSON, the commands other than `/rewind` built once per connection
        (sent after every prompt: its cost stays that of one hint)."""
        if self._commands_wire is None:
            self._commands_wire = update_to_json(await self.commands_update(live.session.id))
        assert self.rewinder is not None
        hint = rewind_hint(await self.rewinder.marks(live))
        commands: list[WireUpdate] = self._commands_wire["availableCommands"]
        return {
            **self._commands_wire,
            "availableCommands": [{**c, "input": {"hint": hint}} if c.get("name") == "rewind" else c for c in commands],
        }

    def _probe(self, session_id: str, meta: Mapping[str, Any] | None) -> TurnProbe | None:
        """The turn's telemetry probe; `None` (and no telemetry work) when telemetry is off."""
        observer = observer_of(self.options)
        if observer is None:
            return None
        return observer.turn(
            session_id=session_id,
            adapter=_adapter_name(self.runner),
            agent=self.options.name,
            principal=self.sessions.principal,
            connection=self.connection,
            meta=meta,
        )

    def cancel(self, session_id: str) -> None:
        """End the session's running turn with `cancelled` (nothing when none runs)."""
        live = self.sessions.open_session(session_id)
        if live is not None and live.turn is not None:
            live.turn.cancel()

    def cancel_request(self, task: asyncio.Task[Any] | None) -> bool:
        """Cancel the turn that `task` (the handler of a `session/prompt` request) runs; `False` if none."""
        for live in self.sessions.running():
            if live.turn is not None and task is not None and live.turn.request_task is task:
                live.turn.cancel()
                return True
        return False

    async def _run(
        self,
        live: LiveSession,
        turn: ServerTurn,
        blocks: Sequence[PromptBlock | dict[str, Any]],
        command: tuple[Command, str] | None,
        on_lease: Callable[[], Awaitable[None]] | None = None,
    ) -> PromptResponse:
        session = live.session
        emitter = turn.emit
        store = self.sessions.store
        recorder = TurnRecorder(
            store,
            session.id,
            self.owner,
            emitter,
            flush_ms=self.options.transcript_flush_ms,
            max_attachment=self.options.max_stored_attachment,
            files=turn.files,
        )
        turn.recorder = recorder
        try:
            began = await store.begin_turn(session.id, self.owner)
            if on_lease is not None:  # the turn holds the session now: its log starts (never beside another's)
                await on_lease()
            if began.version != live.version or session.history.unloaded:
                # Another process ran turns of this session meanwhile, or the runner did not keep the history.
                await self.sessions.reload_state(live)
            if began.interrupted:
                if (observer := observer_of(self.options)) is not None:
                    observer.record_lease_takeover()
                closing = interruption_updates(await store.transcript(session.id))
                await store.append_transcript(session.id, closing)
            await emitter.user_message(blocks, message_id=turn.prompt_id)
            # the prompt is stored before the runner starts (with its mark, when it can be rewound)
            if turn.files is not None and isinstance(store, RewindStore):
                await self._mark(live, recorder, turn)
            else:
                await recorder.flush()
        except Exception as exc:
            await recorder.abandon()
            if isinstance(exc, AcpKitError | RequestError):
                raise
            raise RequestError(
                -32603, f"The prompt could not be stored ({type(exc).__name__}: {exc}); the turn did not run."
            ) from exc
        except BaseException:
            await recorder.abandon()
            raise
        recorder.start()
        try:
            stop, failure = await self._turn_body(live, turn, command)
        finally:
            await recorder.stop()
        session.updated_at = now_iso()
        try:
            live.version = await recorder.finish(session, live.server, reset_transcript=live.reset_transcript)
        except Exception as exc:
            logger.exception("session %s: the turn could not be saved", session.id)
            await recorder.abandon()
            try:
                await self.sessions.reload_state(live)  # the next turn builds on what is stored, not on this one
            except Exception:
                self.sessions.forget(session.id)  # read again from the store on next use
            raise RequestError(
                -32603,
                f"The turn could not be saved ({type(exc).__name__}: {exc}). The session continues from its "
                "last saved turn; this turn is not part of its history.",
            ) from exc
        if turn.files is not None and self.lists_prompts:
            await self._send_commands(live, turn)
        if failure is not None:  # recorded, its tool calls closed: now the editor is told it failed
            raise failure
        return prompt_response(stop, emitter.turn_usage, self.sessions.client)

    async def _mark(self, live: LiveSession, recorder: TurnRecorder, turn: ServerTurn) -> None:
        """Store the prompt with its mark (the runner's state now): the session can go back to before it."""
        session = live.session
        text = (prompt_title(turn.prompt, _SUMMARY_LIMIT) or "").encode("utf-8", "replace").decode("utf-8")
        mark = PromptMark(
            id=turn.prompt_id,
            text=text,
            history_length=len(session.history),
            state=json.loads(json.dumps(session.state)),
            created_at=now_iso(),
        )
        await recorder.flush_prompt(mark)
        if live.prompts is not None:
            live.prompts.append(replace(mark, state={}))

    async def _send_commands(self, live: LiveSession, turn: ServerTurn) -> None:
        """Tell the client the new `/rewind` hint (never fails the turn: it is saved already)."""
        try:
            await turn.emit.send_wire(await self._commands_json(live))
        except Exception:
            logger.warning("session %s: could not send the updated commands", turn.session.id, exc_info=True)

    async def _turn_body(
        self, live: LiveSession, turn: ServerTurn, command: tuple[Command, str] | None
    ) -> tuple[StopReason, TurnFailed | None]:
        session = live.session
        emitter = turn.emit
        if session.title is None:
            title = prompt_title(turn.prompt)
            if title:
                session.title = title
                await emitter.send_unrecorded(
                    SessionInfoUpdate(session_update="session_info_update", title=title, updated_at=now_iso())
                )
        await self._refresh_plan(turn)
        work = command[0].handler(turn, command[1]) if command else self.runner.run_turn(turn)
        failure: TurnFailed | None = None
        bound = turn_context.set(turn)  # tools find the turn (`current_turn()`); tasks copy it from here
        try:
            stop = await self._race(live, turn, work)
        except TurnFailed as exc:
            stop, failure = "end_turn", exc
        finally:
            turn_context.reset(bound)
        await self._refresh_plan(turn)
        await emitter.flush()
        if emitter.tool_calls.open_ids():
            reason = (
                "Cancelled" if stop == "cancelled" else "The agent ended the turn without finishing this tool call."
            )
            await emitter.tool_calls.close_open(f"The turn failed: {failure.cause}" if failure else reason)
        live.server["permissions"] = turn.remembered.to_json()
        if turn.plan.items:
            live.server[PLAN_STATE_KEY] = turn.plan.to_json()
        else:
            live.server.pop(PLAN_STATE_KEY, None)
        if turn.plan.others:
            live.server[PLANS_STATE_KEY] = turn.plan.others_to_json()
        else:
            live.server.pop(PLANS_STATE_KEY, None)
        if emitter.turn_usage is not None:
            totals = live.server.setdefault("usage", {})
            for key, value in emitter.turn_usage.model_dump(exclude_none=True).items():
                if isinstance(value, int):
                    totals[key] = totals.get(key, 0) + value
        if emitter.turn_cost is not None:  # US dollars, the session's so far (`usage_update.cost`)
            totals = live.server.setdefault("usage", {})
            totals["cost"] = (stored_session_cost(live.server) or 0.0) + emitter.turn_cost
        return stop, failure

    async def _race(
        self,
        live: LiveSession,
        turn: ServerTurn,
        work: Awaitable[StopReason | None],
    ) -> StopReason:
        task: asyncio.Future[StopReason | None] = asyncio.ensure_future(work)
        cancelled = asyncio.ensure_future(turn.wait_cancelled())
        try:
            await asyncio.wait({task, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the server is stopping (the client went away): stop the runner too
            task.cancel()
            task.add_done_callback(_ended_unread)
            raise
        finally:
            cancelled.cancel()
        if turn.cancelled:
            # The turn's own requests still waiting for the client (a question, a file read, a
            # command) are cancelled with it: `$/cancel_request` for each.
            requests = self.sessions.outbox.requests
            if requests is not None:
                requests.cancel_session(live.session.id)
        if not task.done():
            done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
            if not done:
                task.cancel()
                await asyncio.wait({task}, timeout=1.0)
        if not task.done():
            task.add_done_callback(_ended_unread)  # it still runs (a tool ignores cancellation): no one waits
            return "cancelled"
        if task.cancelled():
            return "cancelled"
        exc = task.exception()
        if exc is not None:
            if turn.cancelled:
                return "cancelled"
            raise await self._runner_failed(live, exc)
        result = task.result()
        if turn.cancelled:
            return "cancelled"
        return result or "end_turn"

    async def _refresh_plan(self, turn: ServerTurn) -> None:
        """Show the host's plan if it changed (`PlanProvider.get_plan`); a provider that fails is logged."""
        if self.options.plan_provider is None or turn.cancelled:
            return
        try:
            await turn.plan.refresh()
        except Exception:
            logger.exception("session %s: the plan provider failed", turn.session.id)

    async def _runner_failed(self, live: LiveSession, exc: BaseException) -> TurnFailed:
        """Log the traceback, drop what the failed run left in the state, and say why in one line."""
        logger.error("session %s: the runner raised %s", live.session.id, type(exc).__name__, exc_info=exc)
        # What the failed run left in the state and history is dropped: back to the stored turn.
        await self.sessions.reload_state(live)
        lines = str(exc).strip().splitlines()
        detail = display_line(lines[0], _CAUSE_LIMIT) if lines else ""
        cause = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
        return TurnFailed(cause, session_id=live.session.id, code=error_code(exc))


async def _observed(probe: TurnProbe, work: Awaitable[PromptResponse]) -> PromptResponse:
    """Run `work` with the turn's span current; then its metrics, span end and log line."""
    stop: StopReason | None = None
    usage = None
    code: int | None = None
    try:
        with probe.current():
            response = await work
        stop, usage = response.stop_reason, response_usage(response)
        return response
    except RequestError as exc:
        code = exc.code
        raise
    except Exception:
        code = -32603
        raise
    finally:
        try:
            probe.end(stop_reason=stop, usage=usage, error_code=code)
        except Exception:  # telemetry never decides a turn's answer
            logger.exception("the turn's telemetry failed")


def _adapter_name(runner: Runner) -> str:
    """The distribution-like name of the package a runner comes from (`pydantic-acp`, `langchain-acp`)."""
    return type(runner).__module__.split(".")[0].replace("_", "-")


def _logged(conn: Any, log: TurnLog | None) -> Any:
    """The turn's client connection, its permission questions through the log when there is one."""
    return conn if log is None or conn is None else LoggedClient(conn, log)


def _ended_unread(task: asyncio.Future[Any]) -> None:
    """The end of a runner nobody waits for any more: what it raised is logged in one line, not as a
    "never retrieved" traceback (it typically fails to send updates to a client that is gone)."""
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        logger.info(
            "a stopped turn's runner ended with %s: %s", type(exc).__name__, display_line(str(exc), _CAUSE_LIMIT)
        )


def _release_after_big_turn(prompt_size: int, grown: bool, unloaded: bool) -> None:
    """Give memory back after a turn that carried a big prompt, grew the process, or unloaded its history."""
    if grown or unloaded or prompt_size >= memory.RELEASE_AFTER_BYTES:
        memory.release_memory_soon()
