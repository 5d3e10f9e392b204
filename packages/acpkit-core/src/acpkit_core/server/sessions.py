"""Sessions open in this process, conversion of client inputs, and transcript replay."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..permissions import RememberedPermissions
from ..runner.tool_lifecycle import json_object
from ..runner.types import Session, WireMcpServer, mcp_servers_from_wire
from ..runner.updates import SessionUpdate, update_from_json
from ..store import PromptMark
from ..store.base import JsonDict
from .turn import ServerTurn

__all__ = [
    "LiveSession",
    "WireMcpServer",
    "compact_transcript",
    "mcp_servers_from_wire",
    "replay_json",
    "replay_updates",
]


@dataclass(kw_only=True)
class LiveSession:
    """A session open on this connection."""

    session: Session
    """The session (shared with the runner through the turn)."""
    server: JsonDict = field(default_factory=dict[str, Any])
    """Server-owned persisted JSON: `permissions` (remembered answers), `usage` (session totals)."""
    turn: ServerTurn | None = None
    """The running turn, if any."""
    reset_transcript: bool = False
    """`/clear` asked to drop the stored transcript at the end of the turn."""
    version: int = 0
    """The stored version this process's copy was read or written at."""
    prompts: list[PromptMark] | None = None
    """The session's recorded prompts (without state), once read: `/rewind`'s hint lists the last ones."""
    rewinding: bool = False
    """A rewind asked by the `_acpkit/session/rewind` extension runs now (a prompt is refused meanwhile)."""
    retry: list[JsonDict] | None = None
    """`/retry` asked to send these prompt blocks again once the current turn has ended."""
    _idle: asyncio.Event | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def idle(self) -> asyncio.Event:
        """Set when no turn is running.

        Made on first use: an event holds a queue of about 600 bytes, and most open sessions never
        run a turn in this process (10,000 idle sessions would carry 6 MB of them).
        """
        if self._idle is None:
            self._idle = asyncio.Event()
            if self.turn is None:
                self._idle.set()
        return self._idle

    @property
    def remembered(self) -> RememberedPermissions:
        """The user's "always" answers."""
        try:
            return RememberedPermissions.from_json(self.server.get("permissions"))
        except ValueError:
            return RememberedPermissions()


_CHUNKS = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})
_UPDATE_FIELDS = ("title", "kind", "status", "content", "locations", "rawInput", "rawOutput", "_meta")


def compact_transcript(updates: Sequence[JsonDict]) -> list[JsonDict]:
    """The transcript as it should be replayed.

    Consecutive text chunks of one message become one chunk, every tool call is shown once, at
    the place it started, in its final state, and so is every compaction (its summary chunks and
    later statuses folded into its first `compaction_update`, as the "session compaction" RFD
    applies them; one the transcript never saw finish is replayed as `failed`).
    """
    out: list[JsonDict] = []
    tool_calls: dict[str, JsonDict] = {}
    compactions: dict[str, JsonDict] = {}
    for update in updates:
        kind = update.get("sessionUpdate")
        if kind in _CHUNKS and out:
            last = out[-1]
            content = update.get("content", {})
            last_content = last.get("content", {})
            if (
                last.get("sessionUpdate") == kind
                and last.get("messageId") == update.get("messageId")
                and content.get("type") == "text"
                and last_content.get("type") == "text"
                and update.get("messageId") is not None
            ):
                last["content"] = {**last_content, "text": last_content.get("text", "") + content.get("text", "")}
                continue
        if kind == "tool_call":
            start = dict(update)
            tool_calls[str(update.get("toolCallId"))] = start
            out.append(start)
            continue
        if kind == "tool_call_update":
            start = tool_calls.get(str(update.get("toolCallId")))
            if start is not None:
                for key in _UPDATE_FIELDS:
                    if key in update:
                        start[key] = update[key]
                continue
        if kind in _COMPACTION_KINDS:
            _fold_compaction(out, compactions, update)
            continue
        out.append(dict(update))
    for entry in compactions.values():
        if entry.get("status") == "in_progress":
            entry.update(status="failed", error="The turn stopped before the compaction finished.")
            entry.pop("summary", None)
    return out


_COMPACTION_KINDS = frozenset({"compaction_update", "compaction_summary_chunk"})


def _fold_compaction(out: list[JsonDict], compactions: dict[str, JsonDict], update: JsonDict) -> None:
    """Apply one compaction update or summary chunk to its entity (created, in place, by the first update)."""
    cid = str(update.get("compactionId"))
    entry = compactions.get(cid)
    if update.get("sessionUpdate") == "compaction_summary_chunk":
        content = update.get("content")
        if entry is not None and isinstance(content, dict):  # a chunk before its update has no place
            entry["summary"] = [*(entry.get("summary") or []), content]
        return
    if entry is None:
        entry = compactions[cid] = {"sessionUpdate": "compaction_update", "compactionId": cid}
        out.append(entry)
    entry["status"] = update.get("status")
    for key in ("summary", "error", "_meta"):
        if key in update:
            if update[key] is None or update[key] == []:
                entry.pop(key, None)
            else:
                entry[key] = update[key]


def replay_json(updates: Sequence[JsonDict], *, compaction: bool = False) -> list[JsonDict]:
    """A stored transcript as `session/load` replays it (compacted), as wire JSON.

    Compactions are replayed only with `compaction` (the client negotiated `sessionCompaction`):
    no other client may receive them.
    """
    return [
        _raw_objects(update)
        for update in compact_transcript(updates)
        if compaction or update.get("sessionUpdate") not in _COMPACTION_KINDS
    ]


def replay_updates(session_id: str, updates: Sequence[JsonDict]) -> list[SessionUpdate]:
    """Rebuild the update models of a stored transcript (compacted; the stable kinds only)."""
    return [update_from_json(update) for update in replay_json(updates)]


def _raw_objects(update: JsonDict) -> JsonDict:
    """A stored tool-call update with `rawInput`/`rawOutput` as JSON objects (older transcripts kept strings)."""
    fixed: JsonDict | None = None
    for key, wrap in (("rawInput", "input"), ("rawOutput", "output")):
        value = update.get(key)
        if value is not None and not isinstance(value, dict):
            fixed = fixed if fixed is not None else dict(update)
            fixed[key] = json_object(value, wrap)
    return fixed if fixed is not None else update
