"""The per-session update log: every update of a turn, numbered, so a client can reconnect and lose none.

A served agent writes each update of a running turn to the session's log with its number
(`seq`, counting up across the session's turns), along with the turn's questions to the client
and its end (the stop reason). A client that reconnects, to the same replica or another one
sharing the store, reads the log after the last number it saw and follows it until the turn
ends. The log keeps the running turn and the turn before it: when a turn begins, older entries
go ([`UpdateLogStore.log_trim`][acpkit_core.store.UpdateLogStore.log_trim]).

Answers travel the other way through a small table of named values
([`log_answer`][acpkit_core.store.UpdateLogStore.log_answer]): the answer of a re-attached client
to a question the turn asked (the turn may run on another replica), and the mark of a client
following the turn from another replica.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

__all__ = ["LOG_SCHEMA", "LogEntry", "UpdateLogStore", "cut_row", "pack_rows", "unpack_rows"]

LogEntry = tuple[int, str]
"""One entry of a session's log: its number and its JSON text."""

LOG_SCHEMA = """
CREATE TABLE IF NOT EXISTS update_log (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS update_log_answers (
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);
"""
"""The SQLite tables of the log (schema version 4).

A row of `update_log` holds a run of consecutive entries, one JSON text per line, numbered from its
`seq` ([`pack_rows`][acpkit_core.store.update_log.pack_rows]): the store writes one row per batch
of a turn's updates rather than one per update (an insert per streamed chunk was most of what the
log cost). A row of one entry, as the rows of earlier versions are, reads the same.
"""


def pack_rows(entries: Sequence[LogEntry]) -> list[LogEntry]:
    """`entries` as the rows an SQL store keeps: each run of consecutive numbers in one row, numbered by
    its first entry, one text per line.

    A text holding a line break (JSON whitespace: the log's texts are compact JSON) has it replaced by
    a space, which reads as the same JSON.
    """
    rows: list[LogEntry] = []
    first = previous = 0
    texts: list[str] = []
    for seq, text in entries:
        if "\n" in text:
            text = text.replace("\n", " ")
        if texts and seq == previous + 1:
            texts.append(text)
        else:
            if texts:
                rows.append((first, "\n".join(texts)))
            first, texts = seq, [text]
        previous = seq
    if texts:
        rows.append((first, "\n".join(texts)))
    return rows


def unpack_rows(rows: Iterable[tuple[int, str]], after: int = 0) -> list[LogEntry]:
    """The entries numbered above `after` in `rows` (made by [`pack_rows`][acpkit_core.store.update_log.pack_rows],
    in order of their first number); a number met twice is taken once, from the first row holding it."""
    entries: list[LogEntry] = []
    last = after
    for first, text in rows:
        lines = text.split("\n")
        start = max(last + 1 - first, 0)
        for offset in range(start, len(lines)):
            entries.append((first + offset, lines[offset]))
        last = max(last, first + len(lines) - 1)
    return entries


def cut_row(first: int, text: str, before: int) -> LogEntry | None:
    """What is left of the row `(first, text)` without its entries numbered below `before` (`None`: nothing)."""
    lines = text.split("\n")
    if first + len(lines) <= before:
        return None
    drop = max(before - first, 0)
    return (first + drop, "\n".join(lines[drop:]))


@runtime_checkable
class UpdateLogStore(Protocol):
    """A store that keeps each session's update log (SQLite, Postgres and memory stores do)."""

    async def log_append(self, session_id: str, entries: Sequence[LogEntry]) -> None:
        """Add entries (numbers above every one already there)."""
        ...

    async def log_read(self, session_id: str, after: int) -> list[LogEntry]:
        """The entries numbered above `after`, in order."""
        ...

    async def log_last(self, session_id: str) -> int:
        """The highest number in the log (0 when empty)."""
        ...

    async def log_trim(self, session_id: str, before: int) -> None:
        """Drop the entries numbered below `before`, and every answer."""
        ...

    async def log_answer(self, session_id: str, key: str, value: str) -> None:
        """Set a named value (an answer to a question, a follower's mark)."""
        ...

    async def log_answers(self, session_id: str) -> dict[str, str]:
        """The session's named values."""
        ...
