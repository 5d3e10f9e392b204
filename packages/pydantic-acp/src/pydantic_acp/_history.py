"""The session's pydantic-ai message history: append-only in the store, validated once per process.

Each message is one item of the session's [`HistoryLog`][acpkit_core.runner.types.HistoryLog], as
`ModelMessagesTypeAdapter` JSON. A turn appends the messages it added (repaired); the
validated messages stay in memory (`HistoryLog.memo`) for the next turn, so a turn neither
re-reads, re-validates nor re-dumps the whole conversation (a history holding more than
`KEPT_HISTORY_CHARS` of text and attachments is the
exception: it is read back from the store at each turn rather than kept). Before it is stored,
[`repair_history`][pydantic_acp.repair_history] makes what a failed or cancelled turn
left behind acceptable to any model:

- every tool call gets an answer: a call the stopped turn never started (still waiting for its
  permission, say) a `denied` tool return saying it did not run, any other an `interrupted` one saying
  it did not finish; a tool return that answers no call of the response before it is dropped;
- empty requests and unfinished (empty) responses are dropped;
- nothing from a Python traceback is ever added.

The request that carries a turn's prompt is marked with the prompt's id (`metadata` under
[`PROMPT_ID_KEY`][pydantic_acp.PROMPT_ID_KEY], never sent to a model), so a rewind cuts the
history exactly where that prompt began ([`rewind_history`][pydantic_acp.rewind_history]), even
when a history processor rewrote the messages around it.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from acpkit_core.runner.rewind import RewindPoint
from acpkit_core.runner.tool_lifecycle import NOT_RUN_TEXT, STOPPED_TEXT
from acpkit_core.runner.types import Session
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)

__all__ = [
    "HISTORY_KEY",
    "INTERRUPTED_TOOL_TEXT",
    "KEPT_HISTORY_CHARS",
    "NOT_RUN_TOOL_TEXT",
    "PROMPT_ID_KEY",
    "cap_attachments",
    "load_history",
    "mark_prompt",
    "repair_history",
    "rewind_history",
    "save_history",
]

HISTORY_KEY = "pydantic_ai.messages"
"""Where sessions stored by older versions kept the whole history in `session.state` (read once, moved)."""

INTERRUPTED_TOOL_TEXT = STOPPED_TEXT
"""What the model is told about a tool call the turn never answered (core's `STOPPED_TEXT`)."""

NOT_RUN_TOOL_TEXT = NOT_RUN_TEXT
"""What the model is told about a tool call the stopped turn never started (core's `NOT_RUN_TEXT`)."""


PROMPT_ID_KEY = "acpkit.prompt_id"
"""The `metadata` key of the `ModelRequest` that carries a turn's prompt: the prompt's id
([`Turn.prompt_id`][acpkit_core.runner.protocols.Turn.prompt_id])."""

KEPT_HISTORY_CHARS = 4_000_000
"""A history whose text and attachments (characters of text, bytes of binary content) add up to more
is not kept in memory between turns: the server reads it back from the store before the next turn,
so a 20 MB prompt does not stay in the process for the rest of the session."""


@dataclass(slots=True)
class _Memo:
    """The validated messages of a log, and how big their text and attachments are."""

    messages: list[ModelMessage]
    size: int


def _size(messages: Sequence[ModelMessage]) -> int:
    total = 0
    for message in messages:
        for part in message.parts:
            content: object = getattr(part, "content", None)
            if isinstance(content, str):
                total += len(content)
            elif isinstance(content, list | tuple):
                for item in cast(Sequence[object], content):
                    if isinstance(item, str):
                        total += len(item)
                    elif isinstance(item, BinaryContent):
                        total += len(item.data)
    return total


def load_history(session: Session) -> list[ModelMessage]:
    """The session's messages (a new list; the messages are shared with the in-memory copy).

    Validated from the stored items on first use in a process, then kept in memory (unless over
    `KEPT_HISTORY_CHARS`).
    """
    log = session.history
    memo: Any = log.memo
    if isinstance(memo, _Memo) and len(memo.messages) == len(log):
        return list(memo.messages)
    legacy = session.state.pop(HISTORY_KEY, None)
    loaded = log.take_loaded()
    if legacy and not loaded and not len(log):
        messages = ModelMessagesTypeAdapter.validate_python(legacy)
        log.replace(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))
    else:
        messages = ModelMessagesTypeAdapter.validate_python(loaded or [])
    log.memo = _Memo(messages, _size(messages))
    return list(messages)


def save_history(
    session: Session,
    before: Sequence[ModelMessage],
    messages: Sequence[ModelMessage],
    *,
    not_run: Collection[str] = (),
    max_attachment: int | None = None,
) -> None:
    """Append to the session's history what a run added to `before` (repaired).

    `before` is what [`load_history`][pydantic_acp.load_history] gave the run and
    `messages` all the run's messages. When the run kept `before` as it was (the usual case) only
    the new messages are dumped and stored; otherwise the whole history is rewritten. A binary
    prompt attachment larger than `max_attachment` (characters of its base64) reached the model in
    its own turn; the history keeps a note in its place. `not_run` is as for
    [`repair_history`][pydantic_acp.repair_history]. A history over
    `KEPT_HISTORY_CHARS` is unloaded
    ([`HistoryLog.unload`][acpkit_core.runner.types.HistoryLog.unload]) instead of kept in memory.
    """
    log = session.history
    count = len(before)
    memo: Any = log.memo
    # The run kept `before` as it was when its messages start with the very same objects (checked
    # in C: at turn 500 the check costs microseconds, not a Python loop over the conversation).
    if len(messages) >= count and all(map(operator.is_, before, messages)):
        added = cap_attachments(repair_history(messages[count:], not_run=not_run), max_attachment)
        log.append(*ModelMessagesTypeAdapter.dump_python(added, mode="json"))
        prior = memo.size if isinstance(memo, _Memo) and len(memo.messages) == count else _size(before)
        kept = _Memo([*before, *added], prior + _size(added))
    else:
        full = cap_attachments(repair_history(messages, not_run=not_run), max_attachment)
        log.replace(ModelMessagesTypeAdapter.dump_python(full, mode="json"))
        kept = _Memo(full, _size(full))
    if kept.size > KEPT_HISTORY_CHARS:
        log.unload()
    else:
        log.memo = kept


def mark_prompt(messages: Sequence[ModelMessage], prompt_id: str) -> None:
    """Mark the request that carries the last run's prompt with `prompt_id` (in its `metadata`).

    The last run's messages are the trailing ones with the `run_id` of the last message (only they
    are looked at: the cost does not grow with the conversation); its prompt is the first of its
    requests with a user prompt part.
    """
    run_id = next((m.run_id for m in reversed(messages) if m.run_id), None)
    if run_id is None:
        return
    first: ModelRequest | None = None
    for message in reversed(messages):
        if message.run_id is not None and message.run_id != run_id:
            break
        if isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts):
            first = message
    if first is not None:
        first.metadata = {**(first.metadata or {}), PROMPT_ID_KEY: prompt_id}


def rewind_history(session: Session, point: RewindPoint) -> None:
    """Cut the session's messages where the prompt `point.prompt_id` (or a later undone one) began.

    The cut is at the first request marked with an undone prompt's id. When no message is marked
    with one, the undone turns added nothing to the history (a run that failed at once), unless no
    message is marked at all (a history from before prompts were marked): then the history is cut
    at the length it had when the prompt arrived.
    """
    messages = load_history(session)
    undone = set(point.undone)
    marks = [(m.metadata or {}).get(PROMPT_ID_KEY) if isinstance(m, ModelRequest) else None for m in messages]
    cut = next((i for i, mark in enumerate(marks) if mark in undone), None)
    if cut is None:
        if any(marks):
            return
        cut = min(point.history_length, len(messages))
    kept = messages[:cut]
    session.history.truncate(cut)
    session.history.memo = _Memo(kept, _size(kept))


def cap_attachments(messages: list[ModelMessage], limit: int | None) -> list[ModelMessage]:
    """`messages` with every binary prompt attachment over `limit` (base64 characters) replaced by a note."""
    if limit is None:
        return messages
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and any(_too_big(p, limit) for p in message.parts):
            parts = [_capped(p, limit) if isinstance(p, UserPromptPart) else p for p in message.parts]
            message = replace(message, parts=parts)
        out.append(message)
    return out


def _base64_size(content: BinaryContent) -> int:
    return (len(content.data) + 2) // 3 * 4


def _too_big(part: ModelRequestPart, limit: int) -> bool:
    if not isinstance(part, UserPromptPart) or isinstance(part.content, str):
        return False
    return any(isinstance(c, BinaryContent) and _base64_size(c) > limit for c in part.content)


def _capped(part: UserPromptPart, limit: int) -> UserPromptPart:
    if isinstance(part.content, str):
        return part
    content: list[UserContent] = []
    for item in part.content:
        if isinstance(item, BinaryContent) and _base64_size(item) > limit:
            item = (
                f"[{item.media_type} attachment of {_base64_size(item):,} base64 characters, shown in its own "
                f"turn, not kept in the history: larger than the {limit:,}-character limit]"
            )
        content.append(item)
    return replace(part, content=content)


def repair_history(messages: Sequence[ModelMessage], *, not_run: Collection[str] = ()) -> list[ModelMessage]:
    """A copy of `messages` in which every tool call is answered and nothing is empty or dangling.

    `not_run` names the calls a stopped turn never started: an unanswered one is answered as not run.
    """
    out: list[ModelMessage] = []
    pending: dict[str, str] = {}  # tool_call_id -> tool name, calls of the last response not yet answered
    for message in messages:
        if isinstance(message, ModelResponse):
            if pending:
                out.append(ModelRequest(parts=_interrupted(pending, not_run)))
                pending = {}
            if message.state != "complete":
                # An unfinished response: keep what it said, drop calls that never ran (their args may be cut off).
                kept = [p for p in message.parts if not isinstance(p, ToolCallPart)]
                message = replace(message, parts=kept, state="complete")
            if not message.parts:
                continue
            out.append(message)
            pending = {p.tool_call_id: p.tool_name for p in message.parts if isinstance(p, ToolCallPart)}
        else:
            parts: list[ModelRequestPart] = []
            for part in message.parts:
                tool_call_id = getattr(part, "tool_call_id", None)
                if isinstance(tool_call_id, str):
                    if tool_call_id not in pending:
                        continue  # answers no call of the previous response: a model would refuse it
                    del pending[tool_call_id]
                parts.append(part)
            if pending:
                parts = _interrupted(pending, not_run) + parts
                pending = {}
            if not parts:
                continue
            if parts != message.parts or message.state != "complete":
                message = replace(message, parts=parts, state="complete")
            out.append(message)
    if pending:
        out.append(ModelRequest(parts=_interrupted(pending, not_run)))
    return out


def _interrupted(pending: dict[str, str], not_run: Collection[str]) -> list[ModelRequestPart]:
    return [
        ToolReturnPart(tool_name=name, content=NOT_RUN_TOOL_TEXT, tool_call_id=call_id, outcome="denied")
        if call_id in not_run
        else ToolReturnPart(tool_name=name, content=INTERRUPTED_TOOL_TEXT, tool_call_id=call_id, outcome="interrupted")
        for call_id, name in pending.items()
    ]
