"""One `session/prompt` from start to stop reason: the turn, the race with cancel, the record."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Sequence
from typing import Any

from acp import RequestError
from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    PromptResponse,
    ResourceContentBlock,
    SessionInfoUpdate,
    TextContentBlock,
)

from ..config import AgentOptions, Command
from ..emitter import TurnEmitter
from ..errors import AcpKitError, SessionBusyError, error_code
from ..presentation import kind_overrides, validate_presentation
from ..runner import Runner, StopReason, turn_context
from ..store.base import now_iso
from ..warmup import first_stage_done, turn_started
from . import memory
from ._boundary import TurnFailed
from ._prompt import check_prompt_size, display_line, parse_prompt, prompt_title
from .commands import match_command
from .recording import TurnRecorder, interruption_updates, new_owner
from .session_manager import SessionManager
from .sessions import LiveSession
from .turn import ServerTurn

__all__ = ["CANCEL_GRACE_S", "PromptBlock", "TurnRunner"]

logger = logging.getLogger("acpkit_core.server")

_CAUSE_LIMIT = 1000
"""How much of a failed turn's exception message (its first line) reaches the client: a provider's
missing-key message, with its advice, is about 300 characters."""

CANCEL_GRACE_S = 0.05
"""How long a cancelled runner may take to return on its own before its task is cancelled."""

PromptBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)


class TurnRunner:
    """Runs prompt turns on the connection's sessions: one at a time per session."""

    def __init__(
        self, runner: Runner, options: AgentOptions, sessions: SessionManager, commands: dict[str, Command]
    ) -> None:
        self.runner = runner
        self.options = options
        self.sessions = sessions
        self.commands = commands
        validate_presentation(options.tool_presentation)
        self._tool_kinds = kind_overrides(options.tool_kinds, options.tool_presentation)
        self._owner = new_owner()

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
        if live.turn is not None:
            raise SessionBusyError(
                f"session {session_id!r} is still running a turn; wait for its response or send session/cancel"
            )
        size = check_prompt_size(blocks, self.options.max_prompt_bytes)
        parsed = parse_prompt(blocks)
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
        )
        live.turn = turn
        live.idle.clear()
        began = memory.turn_began()
        try:
            await first_stage_done()  # what the warm-up is building, the turn would build again beside it
            return await self._run(live, turn, blocks)
        finally:
            live.turn = None
            live.reset_transcript = False
            live.idle.set()
            _release_after_big_turn(size, memory.turn_grew(began), session.history.unloaded)

    def cancel(self, session_id: str) -> None:
        """End the session's running turn with `cancelled` (nothing when none runs)."""
        live = self.sessions.open_session(session_id)
        if live is not None and live.turn is not None:
            live.turn.cancel()

    async def _run(
        self, live: LiveSession, turn: ServerTurn, blocks: Sequence[PromptBlock | dict[str, Any]]
    ) -> PromptResponse:
        session = live.session
        emitter = turn.emit
        store = self.sessions.store
        recorder = TurnRecorder(
            store,
            session.id,
            self._owner,
            emitter,
            flush_ms=self.options.transcript_flush_ms,
            max_attachment=self.options.max_stored_attachment,
        )
        try:
            began = await store.begin_turn(session.id, self._owner)
            if began.version != live.version or session.history.unloaded:
                # Another process ran turns of this session meanwhile, or the runner did not keep the history.
                await self.sessions.reload_state(live)
            if began.interrupted:
                closing = interruption_updates(await store.transcript(session.id))
                await store.append_transcript(session.id, closing)
            await emitter.user_message(blocks)
            await recorder.flush()  # the prompt is stored before the runner starts
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
            stop, failure = await self._turn_body(live, turn)
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
        if failure is not None:  # recorded, its tool calls closed: now the editor is told it failed
            raise failure
        return PromptResponse(stop_reason=stop, usage=emitter.turn_usage)

    async def _turn_body(self, live: LiveSession, turn: ServerTurn) -> tuple[StopReason, TurnFailed | None]:
        session = live.session
        emitter = turn.emit
        if session.title is None:
            title = prompt_title(turn.prompt)
            if title:
                session.title = title
                await emitter.send_unrecorded(
                    SessionInfoUpdate(session_update="session_info_update", title=title, updated_at=now_iso())
                )
        command = match_command(turn.prompt, self.commands)
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
