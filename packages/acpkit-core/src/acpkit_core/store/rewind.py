"""What a store keeps so a session can be rewound: a mark per prompt, and the files each turn changed.

A store that implements [`RewindStore`][acpkit_core.store.RewindStore] (the three built-in
stores do) lets `/rewind`, `/retry`, fork at a prompt and the `_acpkit/session/rewind` extension
take a session back to before any of its prompts. It keeps, per session:

- a [`PromptMark`][acpkit_core.store.PromptMark] for every prompt the runner ran, written when the
  prompt arrives: its id (the `messageId` of its user message in the transcript), a one-line
  summary, the length of the framework history and the runner's `session.state` at that moment;
- a [`FileChange`][acpkit_core.store.FileChange] for every file the agent wrote or edited during
  that prompt's turn: its content before the turn's first change and after its last.

[`rewind`][acpkit_core.store.RewindStore.rewind] then takes the session back in one transaction:
the session row and its history as the server rewound them, the transcript cut before the prompt,
and the marks and file changes of that prompt and every later one dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..runner.types import Session
from .base import JsonDict, dumps_updates

__all__ = ["FileChange", "PromptMark", "RewindStore", "cut_batches", "decode_content", "encode_content"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptMark:
    """One prompt of a session, as recorded when it arrived."""

    id: str
    """The prompt's id: the `messageId` of its `user_message_chunk`s in the transcript."""
    text: str = ""
    """A one-line summary of the prompt (for `/rewind`'s hint and pickers)."""
    history_length: int = 0
    """How many items the session's history held when the prompt arrived."""
    state: JsonDict = field(default_factory=dict[str, Any])
    """The runner's `session.state` when the prompt arrived (empty when read without it)."""
    created_at: str = ""
    """ISO 8601 time the prompt arrived (UTC)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """A file the agent wrote or edited during one prompt's turn."""

    prompt_id: str
    """The prompt whose turn changed the file."""
    path: str
    """The file's absolute path."""
    before: str | None
    """Its content before the turn's first change; `None` when it did not exist (the agent created it)."""
    after: str | None
    """Its content after the turn's last change; `None` when the agent deleted it."""


@runtime_checkable
class RewindStore(Protocol):
    """Optional on a [`SessionStore`][acpkit_core.store.SessionStore]: what rewinding needs.

    The built-in stores implement it; with a store that does not, `/rewind` and the other ways of
    going back answer that the session store cannot rewind.
    """

    async def add_prompt(self, session_id: str, mark: PromptMark, *, transcript: Sequence[JsonDict] = ()) -> None:
        """Record a prompt that has just arrived (after the ones already recorded), and append
        `transcript` (its user message) to the transcript in the same transaction."""
        ...

    async def add_file_changes(self, session_id: str, changes: Sequence[FileChange]) -> None:
        """Record file changes; a `(prompt_id, path)` already recorded keeps its `before`, takes the new `after`."""
        ...

    async def prompts(self, session_id: str) -> list[PromptMark]:
        """The session's recorded prompts, oldest first, without their `state`."""
        ...

    async def prompt(self, session_id: str, prompt_id: str) -> PromptMark | None:
        """One recorded prompt with its `state`, or `None`."""
        ...

    async def file_changes(self, session_id: str, prompt_ids: Sequence[str]) -> list[FileChange]:
        """The file changes of those prompts, in the order they were first recorded."""
        ...

    async def rewind(
        self, session: Session, *, prompt_id: str, keep_updates: int, server: JsonDict | None = None
    ) -> int:
        """Take the session back to before `prompt_id`, atomically; returns the session's new version.

        Writes the session row and its history as [`save`][acpkit_core.store.SessionStore.save]
        does (a truncated or replaced history included), keeps the first `keep_updates` updates of
        the transcript, and drops the marks and file changes of `prompt_id` and every later prompt.
        Raises `KeyError` when `prompt_id` is not a recorded prompt of the session.
        """
        ...

    async def copy_prompts(self, source_id: str, target_id: str, *, before: str | None = None) -> None:
        """Copy the marks and file changes of `source_id`'s prompts to `target_id` (a fork), all of
        them or those before the prompt `before`."""
        ...


def cut_batches(batches: Sequence[tuple[int, list[JsonDict]]], keep: int) -> tuple[list[int], tuple[int, str] | None]:
    """How to keep the first `keep` updates of a transcript stored as `(seq, updates)` batches.

    Returns the `seq`s of the batches to delete and, when one batch straddles the cut, its `seq`
    and the JSON text of the updates it keeps.
    """
    drop: list[int] = []
    rewrite: tuple[int, str] | None = None
    seen = 0
    for seq, updates in batches:
        if seen >= keep:
            drop.append(seq)
        elif seen + len(updates) > keep:
            rewrite = (seq, dumps_updates(updates[: keep - seen]))
        seen += len(updates)
    return drop, rewrite


def encode_content(text: str | None) -> bytes | None:
    """A file's content as the stores keep it: UTF-8 bytes (any string, NULs and lone surrogates included)."""
    return None if text is None else text.encode("utf-8", "surrogatepass")


def decode_content(data: bytes | None) -> str | None:
    """The content [`encode_content`][acpkit_core.store.rewind.encode_content] stored."""
    return None if data is None else bytes(data).decode("utf-8", "surrogatepass")
