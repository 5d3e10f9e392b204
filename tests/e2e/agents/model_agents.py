"""Agents of both adapters for the per-prompt model and fallback tests: `python model_agents.py pydantic|langchain`.

Each offers two models, `base` (the default) and `fast`, which answer `<model>: <prompt>`. The
default model fails with a provider error (HTTP 503) when the prompt says `overload`; a fallback
model, `backup`, then answers `backup: <prompt>`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any


def pydantic_agent() -> None:
    from pydantic_acp import run_acp
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def said(messages: list[ModelMessage]) -> str:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        return "".join(str(p.content) for p in last.parts if isinstance(p, UserPromptPart))

    def model(name: str, *, flaky: bool = False) -> FunctionModel:
        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            text = said(messages)
            if flaky and "overload" in text:
                raise ModelHTTPError(503, name, body={"error": "overloaded"})
            yield f"{name}: {text}"

        return FunctionModel(stream_function=stream, model_name=name)

    base, fast, backup = model("base", flaky=True), model("fast"), model("backup")
    # `Model` instances are offered as `system:model_name`: `function:base`, `function:fast`
    run_acp(Agent(base, name="models-pydantic"), store="memory", models=[base, fast], fallback_models=[backup])


def langchain_agent() -> None:
    sys.path.insert(0, str(Path(__file__).parents[2] / "langchain"))
    from acpkit_core.config import ModelOption
    from fake_model import FakeChatModel, Reply  # pyright: ignore[reportMissingImports, reportUnknownVariableType]
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelFallbackMiddleware
    from langchain_acp import AcpModelMiddleware, run_acp
    from langchain_core.messages import BaseMessage, HumanMessage

    class Named(FakeChatModel):  # pyright: ignore[reportUntypedBaseClass]
        model_name: str = "fake"

    def model(name: str, *, flaky: bool = False) -> Any:
        def reply(messages: list[BaseMessage]) -> Any:
            text = next(m.text for m in reversed(messages) if isinstance(m, HumanMessage))
            if flaky and "overload" in text:
                raise RuntimeError("503 Service Unavailable: overloaded")
            return Reply(text=f"{name}: {text}")

        return Named(model_name=name, script=[reply], repeat_last=True)

    base, fast, backup = model("base", flaky=True), model("fast"), model("backup")
    graph = create_agent(
        base,
        middleware=[AcpModelMiddleware({"base": base, "fast": fast}), ModelFallbackMiddleware(backup)],
        name="models-langchain",
    )
    run_acp(graph, store="memory", models=[ModelOption(id="base"), ModelOption(id="fast")])


if __name__ == "__main__":
    pydantic_agent() if sys.argv[1] == "pydantic" else langchain_agent()
