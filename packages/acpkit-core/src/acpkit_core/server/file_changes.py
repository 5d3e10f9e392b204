"""The files a turn changed, recorded so that a rewind can put them back.

Two sources, whatever the runner:

- every `fs/write_text_file` the turn sends through its [`ClientHost`][acpkit_core.runner.host.ClientHost]
  ([`RecordingHost`][acpkit_core.server.file_changes.RecordingHost] reads the file first, through
  the client, unless the tool has just read it to show a diff);
- every tool call that ends `completed` carrying a `diff` (an edit tool the agent runs itself, with
  a diff in its `tool_presentation` or attached by the runner): `oldText` is the content before,
  `newText` after; a call of kind `delete` deleted the file, a diff without `oldText` created it.

Per file and turn, the content before the first change and after the last one are kept
([`FileChange`][acpkit_core.store.FileChange]). The turn recorder writes them to the store with
the transcript, every few milliseconds.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ..errors import HostError
from ..runner.host import ClientConnection, ClientHost
from ..runner.types import ClientInfo, Session
from ..store import FileChange
from ..store.base import JsonDict

__all__ = ["FileLedger", "RecordingHost"]

logger = logging.getLogger("acpkit_core.server")

_MISSING: Any = object()


@dataclass(slots=True)
class _Call:
    kind: str | None = None
    status: str | None = None
    diffs: list[JsonDict] = field(default_factory=list[JsonDict])


class FileLedger:
    """The files one turn changed: the content before its first change and after its last, per path."""

    def __init__(self, prompt_id: str) -> None:
        self.prompt_id = prompt_id
        """The turn's prompt."""
        self._changes: dict[str, tuple[str | None, str | None]] = {}
        self._dirty: dict[str, None] = {}
        self._calls: dict[str, _Call] = {}

    def knows(self, path: str) -> bool:
        """True when the turn already changed `path` (its `before` is known)."""
        return path in self._changes

    def wrote(self, path: str, before: str | None, after: str | None) -> None:
        """The turn changed `path` from `before` (`None`: absent) to `after` (`None`: deleted)."""
        kept = self._changes.get(path)
        self._changes[path] = (kept[0] if kept is not None else before, after)
        self._dirty[path] = None

    def observe(self, updates: Sequence[JsonDict]) -> None:
        """Read the turn's tool-call updates (wire JSON, in order) for completed calls that carry a diff."""
        for update in updates:
            kind = update.get("sessionUpdate")
            if kind != "tool_call" and kind != "tool_call_update":
                continue
            call_id = str(update.get("toolCallId"))
            call = self._calls.get(call_id)
            if call is None:
                call = self._calls[call_id] = _Call()
            if call.status == "done":
                continue
            if isinstance(update.get("kind"), str):
                call.kind = update["kind"]
            content: Any = update.get("content")
            if isinstance(content, list):
                items = [cast(JsonDict, c) for c in cast(list[Any], content) if isinstance(c, dict)]
                call.diffs = [c for c in items if c.get("type") == "diff"]
            status = update.get("status")
            if status == "completed":
                for diff in call.diffs:
                    self._diff(diff, deleted=call.kind == "delete")
                call.status, call.diffs = "done", []
            elif isinstance(status, str):
                call.status = status

    def _diff(self, diff: JsonDict, *, deleted: bool) -> None:
        path, old, new = diff.get("path"), diff.get("oldText"), diff.get("newText")
        if not isinstance(path, str) or not os.path.isabs(path) or not isinstance(new, str):
            return
        self.wrote(os.path.normpath(path), old if isinstance(old, str) else None, None if deleted else new)

    def unwritten(self) -> list[FileChange]:
        """The changes not written yet (a path changed again since is given again, with its new `after`)."""
        return [
            FileChange(prompt_id=self.prompt_id, path=path, before=self._changes[path][0], after=self._changes[path][1])
            for path in self._dirty
        ]

    def written(self, changes: Sequence[FileChange]) -> None:
        """`changes` are stored: forget them, unless their file changed again meanwhile. Until this is
        called (a write that failed, or was cancelled as the turn ended), they are given again."""
        for change in changes:
            if self._changes.get(change.path) == (change.before, change.after):
                self._dirty.pop(change.path, None)


class RecordingHost(ClientHost):
    """The turn's [`ClientHost`][acpkit_core.runner.host.ClientHost], recording each file it writes in a ledger."""

    def __init__(
        self,
        conn: ClientConnection | None,
        session_id: str,
        client: ClientInfo,
        *,
        cwd: str,
        roots: Sequence[str] = (),
        files: FileLedger,
    ) -> None:
        super().__init__(conn, session_id, client, cwd=cwd, roots=roots)
        self.files = files
        """Where the writes are recorded."""
        self._reads: dict[str, str | None] = {}

    @classmethod
    def of_session(
        cls,
        conn: ClientConnection | None,
        session: Session,
        client: ClientInfo,
        allowed_paths: Sequence[str],
        files: FileLedger,
    ) -> RecordingHost:
        """The recording host of `session` (its roots as `ClientHost.for_session` gives them)."""
        roots = (*session.additional_directories, *allowed_paths)
        return cls(conn, session.id, client, cwd=session.cwd, roots=roots, files=files)

    async def read_for_diff(self, path: str) -> str | None:
        """As [`ClientHost.read_for_diff`][acpkit_core.runner.host.ClientHost.read_for_diff]; a write that
        follows uses what was read as the file's content before it."""
        text = await super().read_for_diff(path)
        self._reads[self.check_path(path)] = text
        return text

    async def write_text_file(self, path: str, content: str) -> None:
        """Write through the client, recording the file's content before the turn's first write to it."""
        normal = self.check_path(path)
        before: Any = _MISSING
        if self.files.knows(normal):
            before = None  # kept from the first write
        elif normal in self._reads:
            before = self._reads.pop(normal)
        else:
            try:
                before = await super().read_for_diff(normal)
            except HostError as error:
                logger.warning("%s: not recorded for rewinding, its content could not be read: %s", normal, error)
        await super().write_text_file(normal, content)
        if before is not _MISSING:
            self.files.wrote(normal, before, content)
