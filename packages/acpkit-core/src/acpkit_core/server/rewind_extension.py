"""Rewinding for clients that can show it: two extension methods and the fork point in `_meta`.

Advertised in `initialize` as `agentCapabilities._meta["acpkit.rewind"]`:

```json
{"methods": ["acpkit/session/prompts", "acpkit/session/rewind"], "forkMeta": "acpkit.fork"}
```

- `_acpkit/session/prompts` `{"sessionId"}` answers `{"prompts": [{"number", "messageId", "text",
  "createdAt"}]}`: the prompts a session can go back to, oldest first;
- `_acpkit/session/rewind` `{"sessionId", "prompt"?: N, "messageId"?: id, "restoreFiles"?: bool,
  "transcript"?: bool}` takes the session back to before that prompt (the last one when neither is
  given). Without `restoreFiles` the agent asks about the files with one `session/request_permission`;
  `true` restores them, `false` leaves them. The answer says what was done (`message`, `prompt` with
  its content blocks, `undone`, `files`), and with `"transcript": true` holds the rewound transcript
  as `session/load` would replay it (`transcript`, a list of `sessionUpdate` objects);
- `session/fork` with `_meta: {"acpkit.fork": {"prompt": N}}` (or `{"messageId": id}`) forks the
  session at that prompt: the new session holds what came before it; the original is left intact.

A rewind is refused (-32600) while a turn of the session runs, here or in another process.
"""

from __future__ import annotations

from typing import Any

from acp import RequestError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import SessionBusyError
from ..runner.rewind import FORK_META_KEY, PROMPTS_METHOD, REWIND_META_KEY, REWIND_METHOD
from .rewinding import Rewinder, RewindResult
from .session_manager import SessionManager
from .sessions import replay_json

__all__ = [
    "FORK_META_KEY",
    "PROMPTS_METHOD",
    "REWIND_META_KEY",
    "REWIND_METHOD",
    "ForkPoint",
    "RewindExtension",
    "fork_point",
]


class _Params(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    session_id: str = Field(alias="sessionId")


class _RewindParams(_Params):
    prompt: int | None = Field(default=None, ge=1)
    message_id: str | None = Field(default=None, alias="messageId")
    restore_files: bool | None = Field(default=None, alias="restoreFiles")
    transcript: bool = False


class ForkPoint(BaseModel):
    """Where `session/fork` forks: `{"prompt": N}` or `{"messageId": id}` under `_meta["acpkit.fork"]`."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    prompt: int | None = Field(default=None, ge=1)
    """The prompt's number (the fork holds the prompts before it)."""
    message_id: str | None = Field(default=None, alias="messageId")
    """The prompt's message id."""


def fork_point(meta: dict[str, Any]) -> ForkPoint | None:
    """The fork point in a `session/fork` request's `_meta` (`None` for a plain fork); -32602 when malformed."""
    raw = meta.get(FORK_META_KEY)
    if raw is None:
        return None
    try:
        point = ForkPoint.model_validate(raw)
    except ValidationError as exc:
        raise RequestError.invalid_params({"_meta": FORK_META_KEY, "details": _problems(exc)}) from None
    if (point.prompt is None) == (point.message_id is None):
        raise RequestError.invalid_params(
            {"_meta": FORK_META_KEY, "details": "give one of `prompt` (a number) or `messageId`"}
        )
    return point


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors())


def capabilities() -> dict[str, Any]:
    """What `initialize` advertises under `agentCapabilities._meta`."""
    return {REWIND_META_KEY: {"methods": [PROMPTS_METHOD, REWIND_METHOD], "forkMeta": FORK_META_KEY}}


class RewindExtension:
    """Serves the rewind extension methods of one connection."""

    def __init__(self, rewinder: Rewinder, sessions: SessionManager, owner: str) -> None:
        self.rewinder = rewinder
        self.sessions = sessions
        self.owner = owner
        """The turn-lease owner of this connection (a rewind holds the session's lease, as a turn does)."""

    def serves(self, method: str) -> bool:
        """True for the methods of this extension (when the store can rewind)."""
        return method in (PROMPTS_METHOD, REWIND_METHOD) and self.rewinder.available

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run one of the methods."""
        if method == PROMPTS_METHOD:
            return await self._prompts(_validated(_Params, method, params))
        return await self._rewind(_validated(_RewindParams, method, params))

    async def _prompts(self, params: _Params) -> dict[str, Any]:
        live = await self.sessions.live(params.session_id)
        live.prompts = None  # as stored now: another window may have added some
        marks = await self.rewinder.marks(live)
        return {
            "prompts": [
                {"number": i + 1, "messageId": m.id, "text": m.text, "createdAt": m.created_at}
                for i, m in enumerate(marks)
            ]
        }

    async def _rewind(self, params: _RewindParams) -> dict[str, Any]:
        if params.prompt is not None and params.message_id is not None:
            raise RequestError.invalid_params({"details": "give `prompt` or `messageId`, not both"})
        session_id = params.session_id
        live = await self.sessions.live(session_id)
        if live.turn is not None or live.rewinding:
            raise SessionBusyError(
                f"session {session_id!r} is running a turn: wait for it to end (or cancel it), then rewind"
            )
        store = self.sessions.store
        live.rewinding = True
        try:
            began = await store.begin_turn(session_id, self.owner)  # no other process runs a turn meanwhile
            try:
                if began.version != live.version:
                    await self.sessions.reload_state(live)
                # (a turn a dead process left unfinished is the last prompt: any rewind cuts it away)
                files = "ask" if params.restore_files is None else "restore" if params.restore_files else "keep"
                result = await self.rewinder.rewind(
                    live, number=params.prompt, message_id=params.message_id, files=files, ask=self._asker(session_id)
                )
            finally:
                await store.end_turn(session_id, self.owner)
        finally:
            live.rewinding = False
        compaction = "sessionCompaction" in self.sessions.client.unstable
        return _answer(result, transcript=params.transcript, compaction=compaction)

    def _asker(self, session_id: str) -> Any:
        async def ask(card: Any, options: Any) -> str | None:
            conn = self.sessions.outbox.conn
            if conn is None:
                return None
            response = await conn.request_permission(session_id=session_id, tool_call=card, options=options)
            outcome = response.outcome
            return outcome.option_id if outcome.outcome == "selected" else None

        return ask


def _answer(result: RewindResult, *, transcript: bool, compaction: bool) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "message": result.text(),
        "prompt": {
            "number": result.number,
            "messageId": result.mark.id,
            "text": result.mark.text,
            "content": result.blocks,
        },
        "undone": result.undone,
        "files": {
            "restored": result.restored,
            "removed": result.removed,
            "kept": [{"path": path, "reason": reason} for path, reason in result.kept],
            "declined": result.files_declined,
        },
    }
    if transcript:
        answer["transcript"] = replay_json(result.transcript, compaction=compaction)
    return answer


def _validated(model: type[_Params], method: str, params: dict[str, Any]) -> Any:
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise RequestError.invalid_params({"method": f"_{method}", "details": _problems(exc)}) from None
