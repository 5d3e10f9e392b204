"""A model that failed and another that took over, told to the user as a notice.

LangChain's own fallback mechanisms (`ModelFallbackMiddleware` in a `create_agent` graph, a chat
model's `with_fallbacks([...])`, a retry middleware) all end one model call with an error and
start another. [`ModelFallbacks`][langchain_acp._fallback.ModelFallbacks] follows both through the
callbacks of an [`AcpCallbackHandler`][langchain_acp.AcpCallbackHandler] made with
`fallback_notices=True` (the runner's) and, when a model call starts after one failed, sends
core's fallback notice (`acpkit_core.runner.notices.notice_model_fallback`) naming the model that
failed, why, and the one tried next, before that one answers. A call that fails with nothing after
it is the turn's error, not a fallback: no notice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast
from uuid import UUID

from acpkit_core.runner.notices import notice_model_fallback

from ._context import Binding

__all__ = ["ModelFallbacks", "model_name"]


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


class ModelFallbacks:
    """The model calls of each binding's runs: which failed since the last one started, and by what."""

    def __init__(self) -> None:
        self._names: dict[UUID, str] = {}
        self._failed: dict[int, list[tuple[str, str | None]]] = {}

    async def started(
        self, binding: Binding, run_id: UUID, serialized: Mapping[str, Any] | None, metadata: Any
    ) -> None:
        """A model call starts: after a failed one (of the same binding), tell the user this one takes over."""
        name = model_name(serialized, cast(Mapping[str, Any], metadata) if isinstance(metadata, Mapping) else None)
        self._names[run_id] = name
        failed = self._failed.pop(id(binding), None)
        if not failed:
            return

        async def send() -> None:
            await notice_model_fallback(binding.emit, failed, now=name)

        await binding.run(send)

    def failed(self, binding: Binding, run_id: UUID, error: BaseException) -> None:
        """A model call failed: remember which and why (told if another call follows)."""
        detail = str(error).strip().splitlines()
        self._failed.setdefault(id(binding), []).append(
            (
                self._names.pop(run_id, "the model"),
                f"{type(error).__name__}: {detail[0]}" if detail else type(error).__name__,
            )
        )

    def ended(self, run_id: UUID) -> None:
        """A model call answered."""
        self._names.pop(run_id, None)
