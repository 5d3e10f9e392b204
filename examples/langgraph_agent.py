"""A LangGraph agent served over ACP: `acpkit run examples/langgraph_agent.py` (serves `acp_agent`).

Offline by default: a scripted chat model streams its thinking and text, writes a plan with
`write_todos`, reads a file through the editor, and asks permission before writing one (the
question shows the write as a diff). The tools of the MCP servers the editor passes are offered to
the model too. The editor's model
picker (the `model` config option) offers a second scripted model, `offline-summariser`, that only
reads the file and answers in one line. Set `ACPKIT_MODEL` (for example `openai:gpt-4o`, with
`OPENAI_API_KEY`) to offer a real model first.

`python examples/langgraph_agent.py` serves the same agent without the CLI: same name, modes and models.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

from acpkit_core.config import STANDARD_MODES, ModelOption
from acpkit_core.errors import HostError
from acpkit_core.permissions import PermissionPolicy
from acpkit_core.presentation import TOOL_PRESETS
from acpkit_core.server import run_stdio
from langchain.agents import create_agent
from langchain.agents.middleware import TodoListMiddleware
from langchain_acp import (
    AcpMcpMiddleware,
    AcpModeMiddleware,
    AcpPermissionMiddleware,
    SessionContext,
    client_host,
    create_acp_agent,
    current_acp,
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
    """A stand-in model: plans, reads README.md, writes acpkit-notes.md, then summarises.

    With `voice="summariser"` it only reads README.md and answers in one line.
    """

    voice: str = "planner"

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
        if self.voice == "summariser":
            return self._summary(messages, since)
        todos = [
            {"content": "Read README.md", "status": "in_progress"},
            {"content": "Write acpkit-notes.md", "status": "pending"},
        ]

        if since == 0:
            return [
                AIMessageChunk(content=[{"type": "reasoning", "reasoning": "The user wants notes. "}]),
                AIMessageChunk(content=[{"type": "reasoning", "reasoning": "I will plan, read, then write."}]),
                AIMessageChunk(content="Let me plan this first."),
                _call("write_todos", _json({"todos": todos}), f"plan-{len(messages)}"),
            ]
        if since == 1:
            return [
                AIMessageChunk(content="Reading the README."),
                _call("read_file", '{"path": "README.md"}', f"read-{len(messages)}"),
            ]
        if since == 2:
            summary = "Notes: the README was read by the example agent."
            args = _json({"path": "acpkit-notes.md", "content": summary + "\n"})
            return [
                AIMessageChunk(content="Writing acpkit-notes.md."),
                _call("write_file", args, f"write-{len(messages)}"),
            ]
        turn = messages[
            len(messages) - next(i for i, m in enumerate(reversed(messages)) if isinstance(m, HumanMessage)) :
        ]
        results = {m.name: m.status for m in turn if isinstance(m, ToolMessage)}
        read = "I read README.md" if results.get("read_file") == "success" else "I could not read README.md"
        wrote = "wrote acpkit-notes.md" if results.get("write_file") == "success" else "did not write any notes"
        return [AIMessageChunk(content="Done: "), AIMessageChunk(content=f"{read} and {wrote}.")]

    def _summary(self, messages: list[BaseMessage], since: int) -> list[AIMessageChunk]:
        if since == 0:
            return [_call("read_file", '{"path": "README.md"}', f"summary-read-{len(messages)}")]
        read = messages[-1]
        if not isinstance(read, ToolMessage) or read.status != "success":
            return [AIMessageChunk(content="Summary: I could not read README.md.")]
        lines = str(read.content).strip().splitlines()
        first = lines[0][:80] if lines else "(nothing)"
        return [AIMessageChunk(content=f"Summary of README.md: {len(lines)} lines, starting with {first!r}.")]

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


def _call(name: str, args: str, call_id: str) -> AIMessageChunk:
    return AIMessageChunk(content="", tool_call_chunks=[{"name": name, "args": args, "id": call_id, "index": 0}])


def _chunks(chunks: list[AIMessageChunk]) -> Iterator[AIMessageChunk]:
    yield from chunks
    yield AIMessageChunk(content="", usage_metadata={"input_tokens": 50, "output_tokens": 12, "total_tokens": 62})


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


OFFLINE_MODELS = (
    ModelOption(id="offline-planner", name="Offline planner", description="Plans, reads, asks, writes notes"),
    ModelOption(id="offline-summariser", name="Offline summariser", description="Reads and answers in one line"),
)
"""The scripted models offered in the `model` picker (the first is the default)."""


def _models() -> list[ModelOption]:
    real = os.environ.get("ACPKIT_MODEL")
    return [ModelOption(id=real), *OFFLINE_MODELS] if real else [*OFFLINE_MODELS]


def _chat_model(model_id: str | None) -> Any:
    if model_id is None or model_id == "offline-planner":
        return ScriptedModel()
    if model_id == "offline-summariser":
        return ScriptedModel(voice="summariser")
    from langchain.chat_models import init_chat_model

    return init_chat_model(model_id)


def build_graph(ctx: SessionContext) -> Any:
    """The graph of one session, for the model chosen in the editor's picker."""
    # LangChain's overloads type the middleware list by state schema; ours are generic over it
    return create_agent(  # pyright: ignore[reportCallIssue]
        _chat_model(ctx.model_id),
        tools=[read_file, write_file],
        system_prompt="You are a careful coding assistant working in the user's editor.",
        middleware=[  # pyright: ignore[reportArgumentType]
            TodoListMiddleware(),
            AcpMcpMiddleware(),  # the editor's MCP servers, per session (before the modes, which filter them)
            AcpModeMiddleware(),
            AcpPermissionMiddleware(PermissionPolicy(kinds={"edit": "ask"})),
        ],
        name="langgraph-example",
    )


acp_agent = create_acp_agent(
    graph_factory=build_graph,
    name="langgraph-example",
    title="LangGraph example",
    modes=STANDARD_MODES,
    models=_models(),
    tool_presentation=TOOL_PRESETS,  # read_file's text as code, write_file's change as a diff (before it runs)
)
"""What both `acpkit run examples/langgraph_agent.py` and `python examples/langgraph_agent.py` serve."""

if __name__ == "__main__":
    run_stdio(acp_agent)
