"""A model that failed and another that took over, told to the user as a notice.

LangChain's own fallback mechanisms (`ModelFallbackMiddleware` in a `create_agent` graph, a chat
model's `with_fallbacks([...])`, a retry middleware) all end one model call with an error and
start another. [`FallbackWatcher`][langchain_acp._fallback.FallbackWatcher] sees both in the
turn's callbacks and, when a model call starts after one failed, sends core's fallback notice
(`acpkit_core.runner.notices.notice_model_fallback`) naming the model that failed, why, and the one tried
next, before that one answers. A call that fails with nothing after it is the turn's error, not a
fallback: no notice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast
from uuid import UUID

from acpkit_core.runner.notices import notice_model_fallback
from langchain_core.callbacks import AsyncCallbackHandler

from ._context import Binding
from ._threads import ModelEventsOnly

__all__ = ["FallbackWatcher", "model_name"]


def model_name(serialized: Mapping[str, Any] | None, metadata: Mapping[str, Any] | None) -> str:
    """The name of the model a callback run is for: LangSmith's `ls_model_name`, else its class."""
    name = (metadata or {}).get("ls_model_name")
    if isinstance(name, str) and name:
        return name
    found: object = (serialized or {}).get("name")
    if not found:
        ids: object = (serialized or {}).get("id")
        found = cast(list[object], ids)[-1] if isinstance(ids, list) and ids else None
    return str(found) if found else "the model"


class FallbackWatcher(ModelEventsOnly, AsyncCallbackHandler):
    """Watches one turn's model calls and sends the fallback notice when one takes over from a failed one."""

    run_inline = True
    raise_error = False

    def __init__(self, binding: Binding) -> None:
        self._binding = binding
        self._names: dict[UUID, str] = {}
        self._failed: list[tuple[str, str | None]] = []

    async def _started(self, run_id: UUID, serialized: Mapping[str, Any] | None, metadata: Any) -> None:
        name = model_name(serialized, cast(Mapping[str, Any], metadata) if isinstance(metadata, Mapping) else None)
        self._names[run_id] = name
        if not self._failed:
            return
        failed, self._failed = self._failed, []

        async def send() -> None:
            await notice_model_fallback(self._binding.emit, failed, now=name)

        await self._binding.run(send)

    async def on_chat_model_start(
        self, serialized: dict[str, Any], messages: Any, *, run_id: UUID, metadata: Any = None, **kwargs: Any
    ) -> None:
        """A model call starts: after a failed one, tell the user this one takes over."""
        await self._started(run_id, serialized, metadata)

    async def on_llm_start(
        self, serialized: dict[str, Any], prompts: Any, *, run_id: UUID, metadata: Any = None, **kwargs: Any
    ) -> None:
        """A (completion) model call starts: as for a chat model."""
        await self._started(run_id, serialized, metadata)

    async def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """A model call failed: remember which and why (told if another call follows)."""
        detail = str(error).strip().splitlines()
        self._failed.append(
            (
                self._names.pop(run_id, "the model"),
                f"{type(error).__name__}: {detail[0]}" if detail else type(error).__name__,
            )
        )

    async def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """A model call answered."""
        self._names.pop(run_id, None)
