"""A LangGraph agent served over ACP: `acpkit run examples/langgraph_agent.py` (serves `acp_agent`).

Offline by default: a scripted chat model streams its thinking and text, writes a plan with
`write_todos`, reads a file through the editor, and asks permission before writing one (the question
shows the write as a diff); when a call is refused or fails it says so. The file tools are offered
only when the editor serves them (`EditorFileTools`), and the mode's (`AcpModeMiddleware`). The
tools of the MCP servers the editor passes are offered to the model too. The editor's model picker
(the `model` config option; `acpx set model offline-summariser`, `/model offline-summariser`) offers
`offline-planner` (the default) and `offline-summariser`, which only reads the file and answers in
one line: the ids of the pydantic example's scripted models too. Set `ACPKIT_MODEL` (for example
`openai:gpt-4o`, with `OPENAI_API_KEY`) to offer a real model first.

`python examples/langgraph_agent.py` serves the same agent without the CLI: same name, modes and models.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from acpkit_core.config import ModelOption
from acpkit_core.errors import HostError
from acpkit_core.permissions import STANDARD_MODES, PermissionPolicy
from acpkit_core.runner.tool_presets import TOOL_PRESETS
from acpkit_core.server import run_stdio
from acpkit_core.thinking import show_thinking_option
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse, TodoListMiddleware
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
from pydantic import Field


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


class EditorFileTools(AgentMiddleware[Any, Any, Any]):
    """Offers `read_file` and `write_file` only when the editor serves them (`fs` in its capabilities)."""

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        host = client_host()
        served = {"read_file": host.can_read, "write_file": host.can_write}
        tools = [t for t in request.tools if served.get(getattr(t, "name", ""), True)]
        return await handler(request.override(tools=tools))


def _cannot_write() -> str:
    """Who keeps the model from writing files: the editor, or the session's mode (a refusal names what refused)."""
    binding = current_acp()
    turn = binding.turn if binding is not None else None
    if turn is None or not turn.client.write_text_file:
        return "this editor does not let me write files"
    return f"the `{turn.session.mode_id}` mode does not allow writing files"


def _why(result: ToolMessage) -> str:
    """Why a call did not succeed, in a few words (its message's first line, to its first `;`)."""
    lines = str(result.content).strip().splitlines()
    return lines[0].split("; ")[0][:200] if lines else "it failed"


class ScriptedModel(BaseChatModel):
    """A stand-in model: plans, reads README.md, writes acpkit-notes.md, then answers.

    It uses only the tools it is given (the editor's and the mode's). With `voice="summariser"` it
    only reads README.md and answers in one line.
    """

    voice: str = "planner"
    tools: list[str] = Field(default_factory=list)
    """The names of the tools bound for this call."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        names = [str(getattr(t, "name", None) or (t.get("name") if isinstance(t, dict) else t)) for t in tools]
        return self.model_copy(update={"tools": names})

    def _step(self, messages: list[BaseMessage]) -> list[AIMessageChunk]:
        start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        done = {m.name: m for m in messages[start + 1 :] if isinstance(m, ToolMessage)}
        plans = sum(isinstance(m, ToolMessage) and m.name == "write_todos" for m in messages[start + 1 :])
        if self.voice == "summariser":
            return self._summary(done.get("read_file"), len(messages))
        if "read_file" not in self.tools:  # nothing to plan: say so at once
            return [AIMessageChunk(content="This editor does not share its files with me, so I cannot read README.md.")]
        read, wrote = done.get("read_file"), done.get("write_file")
        if plans == 0:
            return [
                AIMessageChunk(content=[{"type": "reasoning", "reasoning": "The user wants notes. "}]),
                AIMessageChunk(content=[{"type": "reasoning", "reasoning": "I will plan, read, then write."}]),
                AIMessageChunk(content="Let me plan this first."),
                _call("write_todos", _json({"todos": _todos("in_progress", "pending")}), f"plan-{len(messages)}"),
            ]
        if read is None:
            return [
                AIMessageChunk(content="Reading the README."),
                _call("read_file", '{"path": "README.md"}', f"read-{len(messages)}"),
            ]
        if read.status == "success" and wrote is None and "write_file" in self.tools:
            args = _json({"path": "acpkit-notes.md", "content": "Notes: the README was read by the example agent.\n"})
            return [
                AIMessageChunk(content="Writing acpkit-notes.md."),
                _call("write_file", args, f"write-{len(messages)}"),
            ]
        wrote_ok = wrote is not None and wrote.status == "success"
        if plans == 1:  # the plan as it ended: a step not done stays pending
            final = _todos(
                "completed" if read.status == "success" else "pending", "completed" if wrote_ok else "pending"
            )
            return [_call("write_todos", _json({"todos": final}), f"plan-{len(messages)}")]
        if read.status != "success":
            answer = f"I could not read README.md ({_why(read)}), so I wrote no notes."
        elif wrote_ok:
            answer = "I read README.md and wrote acpkit-notes.md."
        elif wrote is not None:
            answer = f"I read README.md but did not write any notes ({_why(wrote)})."
        else:
            answer = f"I read README.md; {_cannot_write()}, so I wrote no notes."
        return [AIMessageChunk(content="Done: "), AIMessageChunk(content=answer)]

    def _summary(self, read: ToolMessage | None, count: int) -> list[AIMessageChunk]:
        if read is None and "read_file" in self.tools:
            return [_call("read_file", '{"path": "README.md"}', f"summary-read-{count}")]
        if read is None:
            return [AIMessageChunk(content="Summary: this editor does not share its files with me.")]
        if read.status != "success":
            return [AIMessageChunk(content=f"Summary: I could not read README.md ({_why(read)}).")]
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


def _todos(read: str, write: str) -> list[dict[str, str]]:
    return [{"content": "Read README.md", "status": read}, {"content": "Write acpkit-notes.md", "status": write}]


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
            EditorFileTools(),  # the file tools the editor serves
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
    config_options=[show_thinking_option()],  # an on/off switch, for editors that show boolean options
    tool_presentation=TOOL_PRESETS,  # read_file's text as code, write_file's change as a diff (before it runs)
)
"""What both `acpkit run examples/langgraph_agent.py` and `python examples/langgraph_agent.py` serve."""

if __name__ == "__main__":
    run_stdio(acp_agent)
