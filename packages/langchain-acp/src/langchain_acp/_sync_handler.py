"""The synchronous half of an `AcpCallbackHandler`: the model gate, and the tool events of worker threads.

LangChain calls every handler of a run for every streamed token, even one that ignores model
events (it makes a coroutine per handler per event, about 1.5 µs), so the handler's synchronous
duties share one handler:

- the model gate ([`AcpModelGate`][langchain_acp._gate.AcpModelGate]) on every chat model start: it
  must be synchronous, so that in a worker thread it raises before any other handler made a
  coroutine;
- the tool events LangChain raises in worker threads (sync tools): each runs the handler's own
  coroutine on the handler's event loop and waits for it there, so the gate has decided and the
  update is sent, in order, before the tool body runs; a refusal is raised in the tool's thread.
  Events raised where an event loop is running are left to the handler itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any
from uuid import UUID

from ._gate import AcpModelGate
from ._threads import ThreadToolTwin

if TYPE_CHECKING:
    from ._callbacks import AcpCallbackHandler

__all__ = ["SyncHandler"]

logger = logging.getLogger("langchain_acp")

_FORWARD_TIMEOUT_S = 30.0
"""How long a worker thread waits for its tool event to be reported before going on."""


class SyncHandler(ThreadToolTwin):
    """The synchronous half of an [`AcpCallbackHandler`][langchain_acp.AcpCallbackHandler]: its
    model gate, and its twin for tools run in worker threads. Get it with `AcpCallbackHandler.handlers()`.
    """

    raise_error = True
    """The gates' refusals stop the model call or the tool; an update that could not be sent is only logged."""

    def __init__(self, owner: AcpCallbackHandler, model_gate: AcpModelGate) -> None:
        """Forward tool events to `owner`; decide model calls with `model_gate`."""
        self._owner = owner
        self._model_gate = model_gate

    @property
    def ignore_chat_model(self) -> bool:
        """Chat model starts go to the model gate."""
        return False

    @property
    def run_inline(self) -> bool:  # pyright: ignore[reportIncompatibleVariableOverride]
        """As the model gate says (inline unless the next model call is to be stopped)."""
        return self._model_gate.run_inline

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[Any]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        """The model gate decides the call (raising when it is to be stopped)."""
        self._model_gate.on_chat_model_start(serialized, messages, run_id=run_id, **kwargs)

    def _forward(self, coro: Coroutine[Any, Any, None]) -> Coroutine[Any, Any, None] | None:
        binding = self._owner.binding
        loop = binding.loop if binding is not None else None
        if loop is None or loop.is_closed() or not loop.is_running():
            return coro  # nowhere to forward: LangChain runs it as it would have
        try:
            asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=_FORWARD_TIMEOUT_S)
        except Exception as error:  # an update that cannot be sent must not fail the tool
            logger.warning("langchain-acp: a tool event could not be reported: %r", error)
        return None

    def on_tool_start(
        self, serialized: dict[str, Any], input_str: str, *, run_id: UUID, **kwargs: Any
    ) -> Coroutine[Any, Any, None] | None:
        """Forward `on_tool_start` and wait for the gate's decision, however long the user takes
        (the run's session is found here, where its config is visible)."""
        binding = self._owner._event_binding(run_id, kwargs.get("parent_run_id"), kwargs.get("metadata"))  # pyright: ignore[reportPrivateUsage]
        loop = binding.loop if binding is not None else None
        coro = self._owner.on_tool_start(serialized, input_str, run_id=run_id, **kwargs)
        if loop is None or loop.is_closed() or not loop.is_running():
            return coro  # nowhere to forward: LangChain runs it in a loop of its own
        asyncio.run_coroutine_threadsafe(coro, loop).result()
        return None

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> Coroutine[Any, Any, None] | None:
        """Forward `on_tool_end`."""
        return self._forward(self._owner.on_tool_end(output, run_id=run_id, **kwargs))

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Coroutine[Any, Any, None] | None:
        """Forward `on_tool_error`."""
        return self._forward(self._owner.on_tool_error(error, run_id=run_id, **kwargs))
