"""An agent process for the rewind end-to-end test: `python lc_rewind_app.py` serves a LangGraph agent over stdio.

Its `write_file` tool writes to disk itself (as an agent's own edit tool does); the `write_file`
tool presentation shows each call as a diff, which is what a rewind restores from. The fake model
writes the files a prompt names (`write <path> <content>`, several separated by `;`), then says what
it was sent: every human message of its input and how many tool results.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).parent))

from acpkit_core.runner.tool_presets import TOOL_PRESETS
from fake_model import Call, FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_acp import run_acp
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool


def _text(message: BaseMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else str(cast(dict[str, Any], content[0])["text"])


def script(messages: list[BaseMessage]) -> Reply:
    said = [_text(m) for m in messages if isinstance(m, HumanMessage)]
    writes = sum(isinstance(m, ToolMessage) for m in messages)
    seen = Reply(text=f"prompts seen: {' | '.join(said)} · files written: {writes}")
    if isinstance(messages[-1], ToolMessage):
        return seen
    asked = [w.strip().split(" ", 2) for w in said[-1].split(";") if w.strip().startswith("write ")]
    if not asked:
        return seen
    calls = [
        Call("write_file", {"path": path, "content": content}, f"write-{len(said)}-{i}")
        for i, (_, path, content) in enumerate(asked)
    ]
    return Reply(calls=calls)


@tool
def write_file(path: str, content: str) -> str:
    """Write `content` to the file at `path` (relative to the project)."""
    Path(path).write_text(content)
    return f"wrote {path}"


graph = create_agent(FakeChatModel(script=[script], repeat_last=True), tools=[write_file])

if __name__ == "__main__":
    run_acp(graph, name="lc-rewinding-agent", tool_presentation={"write_file": TOOL_PRESETS["write_file"]})
