"""Taking a session's LangGraph thread back to before a prompt (`/rewind`, `/retry`, fork at a prompt).

Every run of a turn carries the prompt's id in its config metadata (`acpkit_prompt_id`), which
LangGraph's savers copy into each checkpoint's metadata. The checkpoint a prompt started from is the
parent of the oldest checkpoint its runs wrote: [`find_start`][langchain_acp._rewind.find_start]
looks it up, in the session's thread or, for a fork, in the thread of the session it was forked
from. The rewind only records it (`LangGraphSessionState.start`, saved with the rest of the rewind);
the next turn makes it the thread's newest checkpoint before it runs
([`apply_start`][langchain_acp._rewind.apply_start]): a copy of it (LangGraph's `__copy__` update)
in the session's own thread, or its values written into the fork's fresh thread. Nothing is deleted
but a fork's own thread when it starts again from its parent's.

This works with the embedded savers and with a developer's checkpointer that keeps earlier
checkpoints and their metadata (LangGraph's memory, SQLite and Postgres savers do). One that keeps
only the latest checkpoint, or drops the metadata, is refused with a message saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from acpkit_core.errors import RewindError
from acpkit_core.runner.rewind import RewindPoint
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.pregel import Pregel

__all__ = ["PROMPT_METADATA_KEY", "Start", "apply_start", "find_start"]

PROMPT_METADATA_KEY = "acpkit_prompt_id"
"""The run-config (and so checkpoint) metadata key holding the prompt's id."""

_RUN_SOURCES = frozenset({"input", "loop"})
"""Checkpoint sources a run writes (a copy or an update is `fork` or `update`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Start:
    """Where a session's thread starts from at its next turn."""

    thread: str
    """The thread holding the checkpoint (the session's own, or a parent's for a fork)."""
    checkpoint: str | None
    """The checkpoint id; `None`: an empty conversation."""

    def to_json(self) -> dict[str, Any]:
        """For `session.state`."""
        return {"thread": self.thread, "checkpoint": self.checkpoint}

    @classmethod
    def from_json(cls, raw: object) -> Start | None:
        """Read what `to_json` wrote (`None` for anything else)."""
        if not isinstance(raw, dict):
            return None
        data = cast(dict[str, Any], raw)
        thread, checkpoint = data.get("thread"), data.get("checkpoint")
        if not isinstance(thread, str) or not (checkpoint is None or isinstance(checkpoint, str)):
            return None
        return cls(thread=thread, checkpoint=checkpoint)


def _config(thread: str, checkpoint: str | None = None) -> RunnableConfig:
    configurable: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ""}
    if checkpoint is not None:
        configurable["checkpoint_id"] = checkpoint
    return {"configurable": configurable}


def _id(config: RunnableConfig | None) -> str | None:
    value = (config or {}).get("configurable", {}).get("checkpoint_id")
    return str(value) if value else None


async def find_start(saver: BaseCheckpointSaver[Any], point: RewindPoint, own_thread: str) -> Start | None:
    """The checkpoint the prompt `point.prompt_id` started from; `None` when the undone prompts wrote none.

    Searched in the threads of `point.sessions` (this session's, then those it was forked from).
    Raises `RewindError` when the checkpointer cannot give it back.
    """
    name = type(saver).__name__
    threads = list(dict.fromkeys((own_thread, *point.sessions)))
    for prompt_id in point.undone:  # the first undone prompt that wrote a checkpoint, wherever it ran
        for thread in threads:
            written: list[CheckpointTuple] = [
                saved async for saved in saver.alist(_config(thread), filter={PROMPT_METADATA_KEY: prompt_id})
            ]
            if not written:
                continue
            parent = _id(written[-1].parent_config)  # the oldest: a listing is newest first
            if parent is not None and await saver.aget_tuple(_config(thread, parent)) is None:
                raise RewindError(
                    f"the graph's checkpointer ({name}) no longer has the checkpoint prompt {point.number} started "
                    "from: it keeps only recent checkpoints"
                )
            return Start(thread=thread, checkpoint=parent)
    head = await saver.aget_tuple(_config(own_thread))
    if head is not None and PROMPT_METADATA_KEY not in head.metadata and head.metadata.get("source") in _RUN_SOURCES:
        raise RewindError(
            f"the graph's checkpointer ({name}) does not keep the runs' metadata, so the checkpoint before "
            f"prompt {point.number} cannot be found"
        )
    return None


async def apply_start(graph: Pregel[Any, Any, Any, Any], own_thread: str, start: Start) -> None:
    """Make `start` the newest checkpoint of the session's thread (before a turn runs)."""
    saver: object = graph.checkpointer  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(saver, BaseCheckpointSaver):
        return
    checkpointer = cast(BaseCheckpointSaver[Any], saver)
    if start.thread == own_thread:
        if start.checkpoint is None:
            await checkpointer.adelete_thread(own_thread)
        else:
            await graph.aupdate_state(_config(own_thread, start.checkpoint), None, as_node="__copy__")
        return
    await checkpointer.adelete_thread(own_thread)  # a fork starts again from its parent's conversation
    if start.checkpoint is not None:
        parent = await graph.aget_state(_config(start.thread, start.checkpoint))
        if parent.values:
            await graph.aupdate_state(_config(own_thread), parent.values)
