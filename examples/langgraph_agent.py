"""A LangGraph agent served over ACP: `acpkit run examples/langgraph_agent.py` (serves `graph`).

Offline by default: a scripted chat model streams its thinking and text, writes a plan with
`write_todos`, reads a file through the editor, and asks permission before writing one. The
tools of the MCP servers the editor passes are offered to the model too. Set
`ACPKIT_MODEL` (for example `openai:gpt-4o`, with `OPENAI_API_KEY`) to use a real model instead.

Run it directly with `python examples/langgraph_agent.py`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

from acpkit_core.config import STANDARD_MODES
from acpkit_core.errors import HostError
from acpkit_core.permissions import PermissionPolicy
from langchain.agents import create_agent
from langchain.agents.middleware import TodoListMiddleware
from langchain_acp import (
    AcpMcpMiddleware,
    AcpModeMiddleware,
    AcpPermissionMiddleware,
    client_host,
    current_acp,
    run_acp,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import ToolException, tool


def _absolute(path: str) -> str:
    binding = current_acp()
    cwd = binding.turn.session.cwd if binding is not None and binding.turn is not None else os.getcwd()
    return str(Path(cwd, path))


@tool
async def read_file(path: str) -> str:
    """Read a text file (through the editor, so unsaved changes are seen)."""
    try:
        return await client_host().read_text_file(_absolute(path))
    except HostError as exc:  # the model sees the error and can re-plan; the tool call shows `failed`
        raise ToolException(str(exc)) from exc


@tool
async def write_file(path: str, content: str) -> str:
    """Write a text file through the editor."""
    try:
        await client_host().write_text_file(_absolute(path), content)
    except HostError as exc:
        raise ToolException(str(exc)) from exc
    return f"wrote {len(content)} characters to {path}"


read_file.handle_tool_error = True
write_file.handle_tool_error = True


class ScriptedModel(BaseChatModel):
    """A stand-in model: plans, reads README.md, writes acpkit-notes.md, then summarises."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self

    def _step(self, messages: list[BaseMessage]) -> list[AIMessageChunk]:
        since = 0
        for message in reversed(messages):
            if isinstance(message, HumanMessage):
                break
            since += isinstance(message, ToolMessage)
        todos = [
            {"content": "Read README.md", "status": "in_progress"},
            {"content": "Write acpkit-notes.md", "status": "pending"},
        ]

        def call(name: str, args: str, call_id: str) -> AIMessageChunk:
            return AIMessageChunk(
                content="", tool_call_chunks=[{"name": name, "args": args, "id": call_id, "index": 0}]
            )

        if since == 0:
            return [
                AIMessageChunk(content=[{"type": "reasoning", "reasoning": "The user wants notes. "}]),
                AIMessageChunk(content=[{"type": "reasoning", "reasoning": "I will plan, read, then write."}]),
                AIMessageChunk(content="Let me plan this first."),
                call("write_todos", _json({"todos": todos}), f"plan-{len(messages)}"),
            ]
        if since == 1:
            return [
                AIMessageChunk(content="Reading the README."),
                call("read_file", '{"path": "README.md"}', f"read-{len(messages)}"),
            ]
        if since == 2:
            summary = "Notes: the README was read by the example agent."
            args = _json({"path": "acpkit-notes.md", "content": summary + "\n"})
            return [
                AIMessageChunk(content="Writing acpkit-notes.md."),
                call("write_file", args, f"write-{len(messages)}"),
            ]
        turn = messages[
            len(messages) - next(i for i, m in enumerate(reversed(messages)) if isinstance(m, HumanMessage)) :
        ]
        results = {m.name: m.status for m in turn if isinstance(m, ToolMessage)}
        read = "I read README.md" if results.get("read_file") == "success" else "I could not read README.md"
        wrote = "wrote acpkit-notes.md" if results.get("write_file") == "success" else "did not write any notes"
        return [AIMessageChunk(content="Done: "), AIMessageChunk(content=f"{read} and {wrote}.")]

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        total = AIMessageChunk(content="")
        for chunk in self._step(messages):
            total = total + chunk
        return ChatResult(generations=[ChatGeneration(message=total)])

    async def _astream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in _chunks(self._step(messages)):
            yield ChatGenerationChunk(message=chunk)


def _chunks(chunks: list[AIMessageChunk]) -> Iterator[AIMessageChunk]:
    yield from chunks
    yield AIMessageChunk(content="", usage_metadata={"input_tokens": 50, "output_tokens": 12, "total_tokens": 62})


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


def _model() -> Any:
    name = os.environ.get("ACPKIT_MODEL")
    if name:
        from langchain.chat_models import init_chat_model

        return init_chat_model(name)
    return ScriptedModel()


graph = create_agent(
    _model(),
    tools=[read_file, write_file],
    system_prompt="You are a careful coding assistant working in the user's editor.",
    middleware=[
        TodoListMiddleware(),
        AcpMcpMiddleware(),  # the editor's MCP servers, per session (before the modes, which filter them)
        AcpModeMiddleware(),
        AcpPermissionMiddleware(PermissionPolicy(kinds={"edit": "ask"})),
    ],
    name="langgraph-example",
)
"""The compiled graph `acpkit run` serves."""

if __name__ == "__main__":
    run_acp(graph, name="langgraph-example", title="LangGraph example", modes=STANDARD_MODES)
