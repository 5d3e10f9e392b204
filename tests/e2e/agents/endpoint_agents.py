"""Agents for the custom-endpoint tests: `python endpoint_agents.py pydantic|langchain|langchain-fixed`.

Each answers `offline answer` with its own (scripted) model; on a client's endpoint (`providers/set`)
the adapter swaps in a real OpenAI model instead, named `gpt-4o-mini` as the agent's own model is.
`langchain-fixed` is a graph without `AcpModelMiddleware`: its model cannot be swapped.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    which = sys.argv[1]
    if which == "pydantic":
        from collections.abc import AsyncIterator

        from pydantic_acp import run_acp
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelMessage
        from pydantic_ai.models.function import AgentInfo, FunctionModel

        async def offline(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            yield "offline answer"

        model = FunctionModel(stream_function=offline, model_name="gpt-4o-mini")
        run_acp(Agent(model, name="endpoint-pydantic"), store="memory")
    else:
        sys.path.insert(0, str(Path(__file__).parents[2] / "langchain"))
        from acpkit_core.config import ModelOption
        from fake_model import FakeChatModel, Reply  # pyright: ignore[reportMissingImports, reportUnknownVariableType]
        from langchain.agents import create_agent
        from langchain_acp import AcpModelMiddleware, run_acp

        scripted = FakeChatModel(script=[Reply(text="offline answer")], repeat_last=True)  # pyright: ignore[reportUnknownVariableType]
        if which == "langchain":
            middleware = [AcpModelMiddleware({"gpt-4o-mini": scripted})]  # pyright: ignore[reportUnknownArgumentType]
            graph = create_agent(scripted, tools=[], middleware=middleware, name="endpoint-langchain")  # pyright: ignore[reportUnknownArgumentType]
            run_acp(graph, store="memory", models=[ModelOption(id="gpt-4o-mini", name="GPT-4o mini")])
        else:
            run_acp(create_agent(scripted, tools=[], name="endpoint-fixed"), store="memory")  # pyright: ignore[reportUnknownArgumentType]
