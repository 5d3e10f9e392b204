"""Delegate to another ACP agent: a LangChain agent whose chat model is an ACP agent.

The remote agent is TinyBot (`examples/echo_runner.py`), started as a plain stdio command; an
`acpkit run` target works too (`AcpChatModel.from_target("my_agent.py")`). Its tool calls arrive
as `server_tool_call` / `server_tool_result` content blocks, its answer as `text` blocks.

Run it: `python examples/delegate_langgraph.py`
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from langchain.agents import create_agent
from langchain_acp import AcpChatModel
from langchain_core.messages import AIMessageChunk

HERE = Path(__file__).resolve().parent


async def main() -> None:
    model = AcpChatModel(command=[sys.executable, str(HERE / "echo_runner.py")])
    graph = create_agent(model)
    try:
        prompt = {"messages": [("user", f"count {HERE / 'echo_runner.py'}")]}
        # LangGraph types the input as the graph's state TypedDict; a plain dict is what it accepts
        async for chunk, _ in graph.astream(prompt, stream_mode="messages"):  # pyright: ignore[reportArgumentType]
            if not isinstance(chunk, AIMessageChunk) or isinstance(chunk.content, str):
                continue
            for block in chunk.content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "server_tool_call":
                    print(f"[remote tool call] {block['name']}")
                elif block.get("type") == "server_tool_result":
                    print(f"[remote tool result] {block['output']}")
                elif block.get("type") == "text":
                    print(block["text"], end="", flush=True)
        print()
    finally:
        await model.aclose()  # ends the remote agent's process


if __name__ == "__main__":
    asyncio.run(main())
