"""The scripted model the hand-built walkthrough of docs/langchain/middleware.md is served with in the tests.

It answers from what it was sent, so one model serves every prompt of the test:

- "tidy up ...": says which content blocks it got (and which kept their annotations), then reads
  `notes.md` and deletes `old.txt` (`r1`, `d1`);
- "read missing ...": reads `missing.txt` and `notes.md` at once (`r2`, `r3`; the first raises);
- "delete ...": deletes `old2.txt` (`d3`);
- "shout ...": calls the MCP tool `shout` (`m1`);
- after tool results: "Done.".
"""

from __future__ import annotations

from typing import Any

from fake_model import Call, FakeChatModel, Reply
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage


def _kind(block: Any) -> str:
    """`text`, `image`, ... with `annotated` in front when the block kept the client's annotations."""
    if not isinstance(block, dict):
        return "text"
    extras: Any = block.get("extras") or {}
    return ("annotated " if extras.get("annotations") else "") + str(block["type"])


def _reply(messages: list[BaseMessage]) -> Reply:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return Reply(text=f"Done: {last.content}" if last.name == "shout" else "Done.")
    assert isinstance(last, HumanMessage)
    content: list[Any] = last.content if isinstance(last.content, list) else [last.content]
    text = " ".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content).lower()
    if text.startswith("tidy up"):
        kinds = ", ".join(_kind(b) for b in content)
        return Reply(
            text=f"Got {kinds}. ",
            calls=[Call("read_notes", {"path": "notes.md"}, "r1"), Call("delete_file", {"path": "old.txt"}, "d1")],
        )
    if text.startswith("read missing"):
        return Reply(
            calls=[Call("read_notes", {"path": "missing.txt"}, "r2"), Call("read_notes", {"path": "notes.md"}, "r3")]
        )
    if text.startswith("shout"):
        return Reply(calls=[Call("shout", {"text": "hi"}, "m1")])
    if text.startswith("delete"):
        return Reply(calls=[Call("delete_file", {"path": "old2.txt"}, "d3")])
    return Reply(text="done")


def walkthrough_model(*_: Any, **__: Any) -> FakeChatModel:
    """What `init_chat_model("openai:gpt-5")` returns under the walkthrough test."""
    return FakeChatModel(script=[_reply], repeat_last=True)
