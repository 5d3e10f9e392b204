"""Taking a session back to before one of its prompts: the conversation, the runner's memory, the files.

One engine for every way in: `/rewind [N]` and `/retry` (commands, `server/builtins.py`), the
`_acpkit/session/rewind` extension (`server/rewind_extension.py`) and `session/fork` at a prompt.
[`Rewinder.rewind`][acpkit_core.server.rewinding.Rewinder.rewind], in order:

1. finds the prompt among the session's recorded ones (`PromptMark`s, written as each prompt arrived);
2. puts `session.state` back as it was then, and lets the runner take its framework back
   ([`SessionRewinder`][acpkit_core.runner.rewind.SessionRewinder]) or cuts `session.history` at the
   length it had (a runner that keeps its conversation there needs nothing else);
3. reads, through the client, each file the undone turns changed: one the user changed since the
   agent's last write is left alone; the others are listed in one permission question;
4. saves the rewound session in one store transaction (transcript cut before the prompt, its marks
   and file changes dropped), then writes the files back through the client.

Nothing is changed before the last step: a refusal (a runner that cannot go back, a question
answered `cancelled`) leaves the session as it was.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    TextContentBlock,
    ToolCallLocation,
    ToolCallUpdate,
)

from ..errors import HostError, RewindError
from ..runner.host import ClientHost
from ..runner.protocols import Runner
from ..runner.rewind import RewindPoint, SessionRewinder
from ..runner.types import Session
from ..store import FileChange, PromptMark, RewindStore
from ..store.base import JsonDict
from .session_manager import SessionManager
from .sessions import LiveSession, WireMcpServer

__all__ = [
    "FileDecision",
    "FilePlan",
    "FileQuestion",
    "RewindResult",
    "Rewinder",
    "parse_prompt_number",
    "prompt_blocks",
    "rewind_hint",
    "transcript_index",
]

logger = logging.getLogger("acpkit_core.server")

FileDecision: TypeAlias = Literal["ask", "restore", "keep"]
"""What to do with the files the undone turns changed: ask the user, restore them, or leave them."""

FileQuestion: TypeAlias = Callable[[ToolCallUpdate, list[PermissionOption]], Awaitable[str | None]]
"""Asks the user a permission question; the option id chosen, `None` when it was cancelled."""

RESTORE_OPTION = "acpkit.rewind.restore"
"""Option id of "restore the files" in the rewind's permission question."""
KEEP_OPTION = "acpkit.rewind.keep"
"""Option id of "keep the files as they are"."""

_HINT_PROMPTS = 3
_HINT_TEXT = 28


def parse_prompt_number(args: str) -> int | None:
    """The `N` of `/rewind N` (`None` for a bare `/rewind`); `RewindError` for anything else."""
    text = args.strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise RewindError(f"/rewind takes a prompt number (1 for the first prompt), not {text!r}")
    return int(text)


def rewind_hint(marks: Sequence[PromptMark]) -> str:
    """The input hint of `/rewind`: the last prompts with their numbers."""
    if not marks:
        return "prompt number (no prompts yet)"
    start = max(len(marks) - _HINT_PROMPTS, 0)
    shown = [f"{start + i + 1} {_short(m.text)}" for i, m in enumerate(marks[start:])]
    return "prompt number: " + " · ".join(shown)


def _short(text: str) -> str:
    text = text or "(no text)"
    return text if len(text) <= _HINT_TEXT else text[: _HINT_TEXT - 1].rstrip() + "…"


def transcript_index(transcript: Sequence[JsonDict], prompt_id: str) -> int | None:
    """Where the prompt's user message starts in a transcript (`None` when it is not there)."""
    for i, update in enumerate(transcript):
        if update.get("sessionUpdate") == "user_message_chunk" and update.get("messageId") == prompt_id:
            return i
    return None


def prompt_blocks(transcript: Sequence[JsonDict], prompt_id: str) -> list[JsonDict]:
    """The content blocks of a prompt, as the transcript keeps them (wire JSON)."""
    return [
        u["content"]
        for u in transcript
        if u.get("sessionUpdate") == "user_message_chunk" and u.get("messageId") == prompt_id and "content" in u
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class FilePlan:
    """What a rewind does with one file."""

    path: str
    """The file."""
    action: Literal["restore", "remove", "keep"]
    """Write `content` back, remove the file (the agent created it), or leave it as it is."""
    content: str | None = None
    """What to write back (`restore`)."""
    current: str | None = None
    """What the file holds now (`None`: absent)."""
    reason: str = ""
    """Why it is left as it is (`keep`)."""


@dataclass(kw_only=True)
class RewindResult:
    """What a rewind did."""

    number: int
    """The prompt gone back to (its number: everything from it on was undone)."""
    mark: PromptMark
    """That prompt."""
    undone: int
    """How many prompts were undone."""
    blocks: list[JsonDict] = field(default_factory=list[JsonDict])
    """The content blocks of that prompt (to send it again, or edit it)."""
    transcript: list[JsonDict] = field(default_factory=list[JsonDict])
    """The transcript as it is now (what `session/load` replays)."""
    restored: list[str] = field(default_factory=list[str])
    """Files written back (or re-created)."""
    removed: list[str] = field(default_factory=list[str])
    """Files the agent created, removed."""
    kept: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """Files left as they are, with the reason."""
    files_declined: bool = False
    """The user chose to keep the files as they are."""

    def text(self) -> str:
        """The answer shown to the user."""
        label = f' ("{_short(self.mark.text)}")' if self.mark.text else ""
        prompts = "prompt" if self.undone == 1 else f"{self.undone} prompts"
        lines = [f"Rewound to before prompt {self.number}{label}: undid {prompts}."]
        if self.restored:
            lines.append("Files restored: " + ", ".join(self.restored) + ".")
        if self.removed:
            lines.append("Files the agent created, removed: " + ", ".join(self.removed) + ".")
        if self.files_declined:
            lines.append("Files left as they are, as you chose.")
        for path, reason in self.kept:
            lines.append(f"Left as it is: {path} ({reason}).")
        return "\n".join(lines)


@dataclass(slots=True)
class _Plan:
    marks: list[PromptMark]
    index: int
    mark: PromptMark
    keep_updates: int
    transcript: list[JsonDict]

    @property
    def undone(self) -> list[PromptMark]:
        return self.marks[self.index :]

    def point(self, sessions: tuple[str, ...]) -> RewindPoint:
        return RewindPoint(
            prompt_id=self.mark.id,
            number=self.index + 1,
            undone=tuple(m.id for m in self.undone),
            kept=tuple(m.id for m in self.marks[: self.index]),
            history_length=self.mark.history_length,
            sessions=sessions,
        )


class Rewinder:
    """Rewinds the sessions of one connection."""

    def __init__(self, runner: Runner, sessions: SessionManager) -> None:
        self.runner = runner
        self.sessions = sessions

    @property
    def available(self) -> bool:
        """True when the session store keeps what rewinding needs (a built-in store, or one that is a
        [`RewindStore`][acpkit_core.store.RewindStore]); the store is not opened to tell."""
        spec = self.sessions.options.store
        return spec is None or isinstance(spec, str | RewindStore)

    def _store(self) -> RewindStore:
        store = self.sessions.store
        if not isinstance(store, RewindStore):
            raise RewindError(
                f"this agent's session store ({type(store).__name__}) does not keep what going back to an "
                "earlier prompt needs"
            )
        return store

    async def marks(self, live: LiveSession) -> list[PromptMark]:
        """The session's prompts, oldest first (kept in memory once read)."""
        if live.prompts is None:
            live.prompts = await self._store().prompts(live.session.id) if self.available else []
        return live.prompts

    # --- planning ---------------------------------------------------------------------------------

    async def _plan(self, session_id: str, *, number: int | None, message_id: str | None) -> _Plan:
        store = self._store()
        marks = await store.prompts(session_id)
        if not marks:
            raise RewindError("there is no prompt to go back to: this session has none yet")
        if message_id is not None:
            index = next((i for i, m in enumerate(marks) if m.id == message_id), None)
            if index is None:
                raise RewindError(f"no prompt of this session has the message id {message_id!r}")
        elif number is not None:
            if number > len(marks):
                many = "1 prompt" if len(marks) == 1 else f"{len(marks)} prompts"
                raise RewindError(f"there is no prompt {number}: this session has {many}")
            index = number - 1
        else:
            index = len(marks) - 1
        mark = await store.prompt(session_id, marks[index].id)
        if mark is None:  # rewound meanwhile by another window
            raise RewindError(f"prompt {index + 1} is no longer part of this session")
        transcript = await self.sessions.store.transcript(session_id)
        keep = transcript_index(transcript, mark.id)
        if keep is None:
            raise RewindError(f"prompt {index + 1} is not in this session's transcript")
        return _Plan(marks=marks, index=index, mark=mark, keep_updates=keep, transcript=transcript)

    async def _lineage(self, session: Session) -> tuple[str, ...]:
        """This session's id, then the ids of the sessions it was forked from (at most 16)."""
        ids = [session.id]
        parent = session.parent_id
        while parent is not None and parent not in ids and len(ids) < 16:
            ids.append(parent)
            try:
                parent = (await self.sessions.store.get(parent)).session.parent_id
            except KeyError:  # deleted since
                break
        return tuple(ids)

    async def _take_back(self, session: Session, plan: _Plan) -> None:
        """`session` (in memory) as it was when the prompt arrived: state, and the runner's memory."""
        session.state = dict(plan.mark.state)
        point = plan.point(await self._lineage(session))
        if isinstance(self.runner, SessionRewinder):
            await self.runner.rewind_session(session, point)
        else:
            session.history.truncate(point.history_length)
            session.history.memo = None

    # --- files --------------------------------------------------------------------------------------

    async def _file_plans(self, host: ClientHost, changes: Sequence[FileChange]) -> list[FilePlan]:
        first: dict[str, FileChange] = {}
        last: dict[str, FileChange] = {}
        for change in changes:
            first.setdefault(change.path, change)
            last[change.path] = change
        plans: list[FilePlan] = []
        for path, change in first.items():
            target, expected = change.before, last[path].after
            try:
                current = await host.read_for_diff(path)
            except HostError as error:
                plans.append(FilePlan(path=path, action="keep", reason=f"it could not be read: {error}"))
                continue
            if current != expected:
                plans.append(FilePlan(path=path, action="keep", current=current, reason=_changed(expected, current)))
            elif current == target:
                continue  # already as it was
            elif target is None:
                if host.can_remove:
                    plans.append(FilePlan(path=path, action="remove", current=current))
                else:
                    reason = "the agent created it and this client cannot delete files: remove it yourself"
                    plans.append(FilePlan(path=path, action="keep", current=current, reason=reason))
            elif not host.can_write:
                reason = "this client does not let the agent write files (fs.writeTextFile)"
                plans.append(FilePlan(path=path, action="keep", current=current, reason=reason))
            else:
                plans.append(FilePlan(path=path, action="restore", content=target, current=current))
        return plans

    async def _apply_files(self, host: ClientHost, plans: Sequence[FilePlan], result: RewindResult) -> None:
        for plan in plans:
            if plan.action == "keep":
                result.kept.append((plan.path, plan.reason))
                continue
            try:
                now = await host.read_for_diff(plan.path)
                if now != plan.current:  # changed while the user was asked
                    result.kept.append((plan.path, _changed(plan.current, now)))
                elif plan.action == "remove":
                    await host.remove_file(plan.path)
                    result.removed.append(plan.path)
                else:
                    assert plan.content is not None
                    await host.write_text_file(plan.path, plan.content)
                    result.restored.append(plan.path)
            except HostError as error:
                result.kept.append((plan.path, f"it could not be restored: {error}"))

    # --- rewinding ------------------------------------------------------------------------------------

    async def rewind(
        self,
        live: LiveSession,
        *,
        number: int | None = None,
        message_id: str | None = None,
        files: FileDecision = "ask",
        ask: FileQuestion | None = None,
        commit: Callable[[Callable[[], Awaitable[int]]], Awaitable[int]] | None = None,
    ) -> RewindResult:
        """Take the open session `live` back to before a prompt (the last one by default).

        `ask` puts the question about the files to the user (`files="ask"`; without `ask` the files
        are left as they are and named). `commit` runs the store write (a turn runs it between two
        flushes of its recorder). Raises `RewindError` (nothing changed) when it cannot be done.
        """
        session = live.session
        plan = await self._plan(session.id, number=number, message_id=message_id)
        host = self.sessions.host_for(session)
        try:
            # From the session as stored: a runner that unloaded its history between turns finds it whole.
            await self.sessions.reload_state(live)
            await self._take_back(session, plan)
            changes = await self._store().file_changes(session.id, [m.id for m in plan.undone])
            result = RewindResult(
                number=plan.index + 1,
                mark=plan.mark,
                undone=len(plan.undone),
                blocks=prompt_blocks(plan.transcript, plan.mark.id),
                transcript=plan.transcript[: plan.keep_updates],
            )
            plans = await self._file_plans(host, changes) if changes and files != "keep" else []
            acting = [p for p in plans if p.action != "keep"]
            if acting and files == "ask":
                files = await self._ask(plan, acting, ask)
            if files == "keep":
                result.files_declined = bool(changes)
                plans = [p for p in plans if p.action == "keep"]

            async def write() -> int:
                store = self._store()
                return await store.rewind(
                    session, prompt_id=plan.mark.id, keep_updates=plan.keep_updates, server=live.server
                )

            live.version = await (commit(write) if commit is not None else write())
        except BaseException:
            await self.sessions.reload_state(live)  # what was changed in memory only is dropped
            raise
        await self.sessions.reload_state(live)
        live.prompts = plan.marks[: plan.index]
        await self._apply_files(host, plans, result)
        return result

    async def fork(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None,
        mcp_servers: list[WireMcpServer] | None,
        *,
        number: int | None = None,
        message_id: str | None = None,
    ) -> Session:
        """`session/fork` at a prompt: a new session holding what came before it; the files and the
        original session are left as they are."""
        await self.sessions.stored(session_id)  # another principal's session is "not found", whatever the point
        plan = await self._plan(session_id, number=number, message_id=message_id)
        session = await self.sessions.fork(session_id, cwd, additional_directories, mcp_servers)
        live = self.sessions.open_session(session.id)
        assert live is not None
        try:
            await self.rewind(live, message_id=plan.mark.id, files="keep")
        except BaseException:
            await self.sessions.delete(session.id)
            raise
        return live.session

    async def _ask(self, plan: _Plan, acting: Sequence[FilePlan], ask: FileQuestion | None) -> FileDecision:
        if ask is None:
            return "keep"
        many = "the file" if len(acting) == 1 else f"{len(acting)} files"
        content: list[ContentToolCallContent | FileEditToolCallContent] = []
        for p in acting:
            if p.action == "remove":
                line = f"{p.path}: remove it (the agent created it)"
                content.append(ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=line)))
            else:
                content.append(
                    FileEditToolCallContent(type="diff", path=p.path, old_text=p.current, new_text=p.content or "")
                )
        question = ToolCallUpdate(
            tool_call_id=f"rewind-{uuid.uuid4().hex[:12]}",
            title=f"Restore {many} the agent changed since prompt {plan.index + 1}?",
            kind="edit",
            status="pending",
            content=content,  # pyright: ignore[reportArgumentType]
            locations=[ToolCallLocation(path=p.path) for p in acting],
        )
        options = [
            PermissionOption(option_id=RESTORE_OPTION, name="Restore the files", kind="allow_once"),
            PermissionOption(option_id=KEEP_OPTION, name="Keep the files as they are", kind="reject_once"),
        ]
        chosen = await ask(question, options)
        if chosen is None:
            raise RewindError("the question about the files was cancelled: nothing was rewound")
        return "restore" if chosen == RESTORE_OPTION else "keep"


def _changed(expected: str | None, current: str | None) -> str:
    if expected is None:
        return "it was created again since the agent deleted it"
    if current is None:
        return "it was deleted since the agent's last change"
    return "it was changed since the agent's last change"
