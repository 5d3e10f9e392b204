"""Delegate to another ACP agent: a pydantic-ai agent whose model is an ACP agent.

The remote agent here is TinyBot (`examples/echo_runner.py`), started with `acpkit run`; any
stdio ACP agent works the same way (`AcpModel(["some-agent", "--acp"])`). The remote agent runs
its own tools; they arrive as native tool parts, and the answer streams as text.

Run it: `python examples/delegate_pydantic.py`
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic_acp import AcpModel
from pydantic_ai import Agent
from pydantic_ai.messages import (
    NativeToolCallPart,
    NativeToolReturnPart,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)

HERE = Path(__file__).resolve().parent


async def main() -> None:
    agent = Agent(AcpModel.from_target(f"{HERE / 'echo_runner.py'}:build_agent"))
    async with agent:  # starts nothing yet; leaving it ends the remote agent's process
        async with agent.run_stream_events(f"count {HERE / 'echo_runner.py'}") as events:
            async for event in events:
                if isinstance(event, PartStartEvent) and isinstance(event.part, NativeToolCallPart):
                    print(f"[remote tool call] {event.part.tool_name}")
                elif isinstance(event, PartStartEvent) and isinstance(event.part, NativeToolReturnPart):
                    print(f"[remote tool result] {event.part.content}")
                elif isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    print(event.part.content, end="", flush=True)
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    print(event.delta.content_delta, end="", flush=True)
        print()
        first = await agent.run("hello")
        second = await agent.run("hello again", message_history=first.all_messages())
        print(second.output)  # the remote session kept the conversation: "(message 2)"


if __name__ == "__main__":
    asyncio.run(main())
