"""Agents of both adapters for the `/mcp` tests: `python mcp_agents.py pydantic|pydantic-off|langchain|langchain-plain`.

- `pydantic`: a pydantic-ai agent that connects the editor's MCP servers;
- `pydantic-off`: the same with `connect_mcp_servers=False`;
- `langchain`: a `create_agent` graph with `AcpMcpMiddleware`;
- `langchain-plain`: a graph without it (the servers are not connected).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    which = sys.argv[1]
    if which.startswith("pydantic"):
        from pydantic_acp import run_acp
        from pydantic_ai import Agent
        from pydantic_ai.models.test import TestModel

        run_acp(Agent(TestModel(), name="mcp-pydantic"), store="memory", connect_mcp_servers=which == "pydantic")
    else:
        sys.path.insert(0, str(Path(__file__).parents[2] / "langchain"))
        from fake_model import FakeChatModel  # pyright: ignore[reportMissingImports, reportUnknownVariableType]
        from langchain.agents import create_agent
        from langchain_acp import AcpMcpMiddleware, run_acp

        middleware = [AcpMcpMiddleware()] if which == "langchain" else []
        run_acp(create_agent(FakeChatModel(), tools=[], middleware=middleware, name="mcp-langchain"), store="memory")
