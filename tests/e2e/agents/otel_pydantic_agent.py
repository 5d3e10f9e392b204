"""An `acpkit run --otel` target: a pydantic-ai agent with its own instrumentation on (the global provider)."""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.capabilities.instrumentation import Instrumentation
from pydantic_ai.models.test import TestModel

agent = Agent(
    TestModel(call_tools=["lookup"], custom_output_text="found it"), name="finder", capabilities=[Instrumentation()]
)


@agent.tool_plain
def lookup(query: str) -> str:
    """Look something up."""
    return f"result for {query}"
