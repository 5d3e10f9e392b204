"""The `acpkit.adapters` entry point: lets `acpkit run module:graph` serve LangGraph graphs."""

from __future__ import annotations

import inspect
from typing import Any, cast

from acpkit_core.config import AgentOptions
from acpkit_core.prompt.ir import Prompt
from langgraph.pregel import Pregel

from ._runner import Graph

__all__ = ["LangChainAdapter", "adapter"]


class LangChainAdapter:
    """Serves compiled LangGraph graphs (and factories of them) for the `acpkit` command."""

    @property
    def name(self) -> str:
        """Short name."""
        return "langchain"

    @property
    def package(self) -> str:
        """The distribution to install."""
        return "langchain-acp"

    def supports(self, obj: object) -> bool:
        """A compiled graph, or a function of one argument returning one (a graph factory)."""
        if isinstance(obj, Pregel):
            return True
        if callable(obj) and not isinstance(obj, type):
            hints = inspect.signature(obj).return_annotation
            text = hints if isinstance(hints, str) else getattr(hints, "__name__", str(hints))
            return any(word in str(text) for word in ("Graph", "Pregel"))
        return False

    def describe(self, obj: object) -> str:
        """`LangGraph CompiledStateGraph 'name'`, or the factory's name."""
        if isinstance(obj, Pregel):
            graph = cast(Graph, obj)
            return f"LangGraph {type(graph).__name__} {graph.name!r}"
        return f"LangGraph graph factory {getattr(obj, '__qualname__', repr(obj))}"

    def create_agent(self, obj: object, options: AgentOptions) -> Any:
        """The `AcpAgent` serving `obj` with `options`."""
        from acpkit_core import AcpAgent

        from ._agent import create_runner

        if isinstance(obj, Pregel):
            runner, opts = create_runner(cast(Graph, obj), options=options)
        else:
            runner, opts = create_runner(graph_factory=obj, options=options)  # pyright: ignore[reportArgumentType]
        return AcpAgent(runner, opts)

    def render(self, prompt: Prompt) -> Any:
        """The `HumanMessage` the graph gets for `prompt`, as LangChain's message dict."""
        from langchain_core.messages import message_to_dict

        from ._runner import human_message

        return message_to_dict(human_message(prompt))


adapter = LangChainAdapter()
"""The adapter object named by the entry point."""
