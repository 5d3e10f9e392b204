"""An agent process for the restart and stdio tests: a fake model that answers with what it remembers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).parent))

from fake_model import FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_acp import run_acp
from langchain_core.messages import BaseMessage, HumanMessage


def recall(messages: list[BaseMessage]) -> Reply:
    said = [
        str(m.content if isinstance(m.content, str) else cast(dict[str, Any], m.content[0])["text"])
        for m in messages
        if isinstance(m, HumanMessage)
    ]  # type: ignore[index]
    return Reply(text=f"turn {len(said)}: " + " | ".join(said))


graph = create_agent(FakeChatModel(script=[recall], repeat_last=True), tools=[])

if __name__ == "__main__":
    run_acp(graph, name="lc-test-agent")
