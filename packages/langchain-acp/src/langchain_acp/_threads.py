"""LangChain runs sync tools in worker threads: what the handlers' thread twins share."""

from __future__ import annotations

import asyncio

from langchain_core.callbacks import BaseCallbackHandler

__all__ = ["ModelAndNodeEventsOnly", "ModelEventsOnly", "ThreadToolTwin", "ToolEventsOnly", "running_loop"]


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or `None` in a worker thread."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class ToolEventsOnly:
    """A callback handler that hears tool events only (LangChain asks it through these flags)."""

    @property
    def ignore_llm(self) -> bool:
        """Not for model events."""
        return True

    @property
    def ignore_chain(self) -> bool:
        """Not for chain events."""
        return True

    @property
    def ignore_retriever(self) -> bool:
        """Not for retriever events."""
        return True

    @property
    def ignore_chat_model(self) -> bool:
        """Not for chat model events."""
        return True


class ModelAndNodeEventsOnly:
    """A callback handler that hears model and chain (graph node) events only: LangChain would
    otherwise run its coroutines for every tool, retriever, retry and custom event too."""

    @property
    def ignore_agent(self) -> bool:
        """Not for tool and agent events."""
        return True

    @property
    def ignore_retriever(self) -> bool:
        """Not for retriever events."""
        return True

    @property
    def ignore_retry(self) -> bool:
        """Not for retries."""
        return True

    @property
    def ignore_custom_event(self) -> bool:
        """Not for custom events."""
        return True


class ModelEventsOnly(ModelAndNodeEventsOnly):
    """A callback handler that hears model events only (no chain events either)."""

    @property
    def ignore_chain(self) -> bool:
        """Not for chain events."""
        return True


class ThreadToolTwin(ToolEventsOnly, BaseCallbackHandler):
    """A sync handler that takes only the tool events raised in worker threads (no running loop).

    Subclasses forward those events to their async owner's event loop; events raised where a loop
    runs belong to the owner itself.
    """

    run_inline = True

    @property
    def ignore_agent(self) -> bool:
        """Tool events where an event loop is running belong to the async owner."""
        return running_loop() is not None
