"""Agents of both adapters for the MCP-over-ACP tests: `python mcp_acp_agents.py pydantic|langchain`.

Each connects the session's MCP servers with its adapter's loader, calls `lookup_word` with
`{"word": "ketchup"}` on the first model request, and answers with what the tool returned.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent

if __name__ == "__main__":
    which = sys.argv[1]
    if which == "pydantic":
        from collections.abc import AsyncIterator

        from pydantic_acp import run_acp
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
        from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
            returns = [
                p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
            ]
            if not returns and "lookup_word" in [t.name for t in info.function_tools]:
                yield {1: DeltaToolCall(name="lookup_word", json_args='{"word": "ketchup"}', tool_call_id="m1")}
            elif returns:
                yield f"The MCP server said: {returns[-1].model_response_str()}"
            else:
                yield "No MCP server offers lookup_word."

        run_acp(Agent(FunctionModel(stream_function=stream), name="mcp-acp-pydantic"), store="memory")
    else:
        sys.path.insert(0, str(HERE.parents[1] / "langchain"))
        from fake_model import Call, FakeChatModel, Reply  # pyright: ignore[reportMissingImports, reportUnknownVariableType]
        from langchain.agents import create_agent
        from langchain_acp import AcpMcpMiddleware, run_acp
        from langchain_core.messages import BaseMessage, ToolMessage

        def answer(messages: list[BaseMessage]) -> Any:
            said = next(m for m in reversed(messages) if isinstance(m, ToolMessage))
            return Reply(text=f"The MCP server said: {said.content}")  # pyright: ignore[reportUnknownVariableType]

        model = FakeChatModel(script=[Reply(calls=[Call("lookup_word", {"word": "ketchup"}, "m1")]), answer])  # pyright: ignore[reportUnknownVariableType]
        graph = create_agent(model, tools=[], middleware=[AcpMcpMiddleware()], name="mcp-acp-langchain")  # pyright: ignore[reportUnknownArgumentType]
        run_acp(graph, store="memory")
