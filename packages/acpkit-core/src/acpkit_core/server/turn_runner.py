"""One `session/prompt` from start to stop reason: the turn, the race with cancel, the record."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import uuid
from collections.abc import Awaitable, Sequence
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
from ..emitter import TurnEmitter, WireUpdate, update_to_json
from ..errors import AcpKitError, SessionBusyError, error_code
from ..presentation import kind_overrides, validate_presentation
from ..runner import Runner, StopReason, turn_context
from ..store import PromptMark, RewindStore
from ..store.base import now_iso
from ..warmup import first_stage_done, turn_started
from . import memory
from ._boundary import TurnFailed
from ._prompt import check_prompt_size, display_line, parse_prompt, prompt_title
from .commands import available_commands, match_command
from .file_changes import FileLedger
from .recording import TurnRecorder, interruption_updates, new_owner
from .rewinding import Rewinder, rewind_hint
from .session_manager import SessionManager
from .sessions import LiveSession
from .turn import ServerTurn

__all__ = ["CANCEL_GRACE_S", "PromptBlock", "TurnRunner"]

logger = logging.getLogger("acpkit_core.server")

_CAUSE_LIMIT = 200
"""How much of a failed turn's exception message reaches the client."""

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
        self._tool_kinds = kind_overrides(options.tool_kinds, options.tool_presentation)
        self.owner = new_owner()
        """This connection's turn-lease owner in the store."""

    async def prompt(self, session_id: str, blocks: Sequence[PromptBlock | dict[str, Any]]) -> PromptResponse:
        """Run one turn. Refuses a second prompt while a turn runs (`SessionBusyError`, -32600).

        `blocks` are the wire JSON blocks (or the SDK's models, where the SDK validated them first);
        they are checked against the prompt size limit, then parsed, before anything runs or is stored.
        A turn whose runner raised is recorded, its tool calls closed, and then answered with
        [`TurnFailed`][acpkit_core.server._boundary.TurnFailed] (-32603, or the code the error means)
        carrying the one-line cause.
        """
        turn_started()  # the start-up warm-up begins no throwaway run beside a turn
        live = await self.sessions.live(session_id)
        if live.turn is not None or live.rewinding:
            raise SessionBusyError(
                f"session {session_id!r} is still running a turn; wait for its response or send session/cancel"
            )
        size = check_prompt_size(blocks, self.options.max_prompt_bytes)
        parsed = parse_prompt(blocks)
        command = match_command(parsed, self.commands)
        prompt_id = uuid.uuid4().hex
        # A prompt the runner runs is marked, and its files recorded, so that it can be rewound.
        rewinds = command is None and self.rewinder is not None and self.rewinder.available
        session = live.session
        session_options = self.sessions.session_options
        outbox = self.sessions.outbox
        emitter = TurnEmitter(
            functools.partial(outbox.send, session_id),
            coalesce_ms=self.options.coalesce_ms,
            context_window=session_options.context_window(session),
        )
        turn = ServerTurn(
            session=session,
            prompt=parsed,
            emitter=emitter,
            client=self.sessions.client,
            conn=outbox.conn,
            mode=session_options.mode(session),
            policy=self.options.permission_policy,
            remembered=live.remembered,
            tool_kinds=self._tool_kinds,
            tool_presentation=self.options.tool_presentation,
            allowed_paths=tuple(self.options.allowed_paths),
            prompt_id=prompt_id,
            files=FileLedger(prompt_id) if rewinds else None,
        )
        turn.commands_update = functools.partial(self.commands_update, session_id)
        live.turn = turn
        live.idle.clear()
        began = memory.turn_began()
        try:
            await first_stage_done()  # what the warm-up is building, the turn would build again beside it
            response = await self._run(live, turn, blocks, command)
        finally:
            live.turn = None
            live.reset_transcript = False
            live.idle.set()
            _release_after_big_turn(size, memory.turn_grew(began), session.history.unloaded)
        retry, live.retry = live.retry, None
        if retry:  # `/retry` undid the last prompt: it runs again, as this request's turn
            return await self.prompt(session_id, retry)
        return response

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

    def cancel(self, session_id: str) -> None:
        """End the session's running turn with `cancelled` (nothing when none runs)."""
        live = self.sessions.open_session(session_id)
        if live is not None and live.turn is not None:
            live.turn.cancel()

    async def _run(
        self,
        live: LiveSession,
        turn: ServerTurn,
        blocks: Sequence[PromptBlock | dict[str, Any]],
        command: tuple[Command, str] | None,
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
            if began.version != live.version or session.history.unloaded:
                # Another process ran turns of this session meanwhile, or the runner did not keep the history.
                await self.sessions.reload_state(live)
            if began.interrupted:
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
        return PromptResponse(stop_reason=stop, usage=emitter.turn_usage)

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
            await turn.emit.flush()
            await self.sessions.outbox.send(turn.session.id, await self._commands_json(live))
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
        work = command[0].handler(turn, command[1]) if command else self.runner.run_turn(turn)
        failure: TurnFailed | None = None
        bound = turn_context.set(turn)  # tools find the turn (`current_turn()`); tasks copy it from here
        try:
            stop = await self._race(live, turn, work)
        except TurnFailed as exc:
            stop, failure = "end_turn", exc
        finally:
            turn_context.reset(bound)
        await emitter.flush()
        if emitter.tool_calls.open_ids():
            reason = (
                "Cancelled" if stop == "cancelled" else "The agent ended the turn without finishing this tool call."
            )
            await emitter.tool_calls.close_open(f"The turn failed: {failure.cause}" if failure else reason)
        live.server["permissions"] = turn.remembered.to_json()
        if emitter.turn_usage is not None:
            totals = live.server.setdefault("usage", {})
            for key, value in emitter.turn_usage.model_dump(exclude_none=True).items():
                if isinstance(value, int):
                    totals[key] = totals.get(key, 0) + value
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
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            cancelled.cancel()
        if not task.done():
            done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
            if not done:
                task.cancel()
                await asyncio.wait({task}, timeout=1.0)
        if not task.done() or task.cancelled():
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

    async def _runner_failed(self, live: LiveSession, exc: BaseException) -> TurnFailed:
        """Log the traceback, drop what the failed run left in the state, and say why in one line."""
        logger.error("session %s: the runner raised %s", live.session.id, type(exc).__name__, exc_info=exc)
        # What the failed run left in the state and history is dropped: back to the stored turn.
        await self.sessions.reload_state(live)
        lines = str(exc).strip().splitlines()
        detail = display_line(lines[0], _CAUSE_LIMIT) if lines else ""
        cause = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
        return TurnFailed(cause, session_id=live.session.id, code=error_code(exc))


def _release_after_big_turn(prompt_size: int, grown: bool, unloaded: bool) -> None:
    """Give memory back after a turn that carried a big prompt, grew the process, or unloaded its history."""
    if grown or unloaded or prompt_size >= memory.RELEASE_AFTER_BYTES:
        memory.release_memory_soon()
