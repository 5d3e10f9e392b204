"""An example pydantic-ai agent served over ACP. Works offline; uses a real model when you ask for one.

Run it in an editor (Zed, Toad, ...) or in the terminal:

    acpkit run examples/pydantic_agent.py          # serves `acp_agent` over stdio
    python examples/pydantic_agent.py              # the same, without the CLI

Offline (the default) a scripted model shows every feature without an API key: it thinks aloud,
writes a plan, reads a file through the editor (`read_file`, so unsaved changes are seen), asks
your permission before writing `acpkit-notes.md` (`write_file`, shown as a diff), and answers; when
a call is refused or fails it says so, and it uses only what the editor serves (an editor that
shares no files gets an answer, not a tool call) and what the mode allows. The editor's model
picker (the `model` config option; `acpx set model offline-summariser`, `/model offline-summariser`)
offers `offline-planner` (the default) and `offline-summariser`, which only reads the file and
answers in one line.

With a real provider, set `ACPKIT_MODEL` and the provider's key (it is offered first in the picker):

    ACPKIT_MODEL=openai:gpt-4o OPENAI_API_KEY=... acpkit run examples/pydantic_agent.py
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from typing import cast

from acpkit_core import run_stdio
from acpkit_core.config import ModelOption
from acpkit_core.permissions import STANDARD_MODES, PermissionPolicy
from acpkit_core.runner.protocols import current_turn
from acpkit_core.thinking import show_thinking_option
from pydantic_acp import create_acp_agent
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel

INSTRUCTIONS = (
    "You are a careful coding assistant working in the user's project. Plan with `update_plan`, read files "
    "with `read_file` before changing them, and write files only with `write_file`."
)

_Chunk = str | dict[int, DeltaToolCall] | dict[int, DeltaThinkingPart]


def _plan(*statuses: str) -> dict[str, object]:
    steps = ["Read the file", "Write notes to acpkit-notes.md", "Summarise"]
    return {"steps": [{"content": s, "status": st} for s, st in zip(steps, statuses, strict=True)]}


def _call(index: int, name: str, args: dict[str, object], call_id: str) -> dict[int, DeltaToolCall]:
    return {index: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=call_id)}


def _this_turn(messages: list[ModelMessage]) -> tuple[str, dict[str, ToolReturnPart]]:
    """The turn's prompt and the tool results since it (by tool name), in the order they came.

    pydantic-ai may put the new prompt in the same request as the answers to an earlier turn's
    calls (a cancelled turn's refused call, say): only what comes after the prompt belongs to this turn.
    """
    parts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts]
    start = max(i for i, p in enumerate(parts) if isinstance(p, UserPromptPart))
    prompt = str(cast(UserPromptPart, parts[start]).content)
    return prompt, {p.tool_name: p for p in parts[start + 1 :] if isinstance(p, ToolReturnPart)}


def _why(result: ToolReturnPart) -> str:
    if result.outcome == "denied":
        return "you declined it"
    first = str(result.content).strip().splitlines()
    return first[0][:200] if first else result.outcome


def _cannot_write() -> str:
    """Who keeps the model from writing files: the editor, or the session's mode (a refusal names what refused)."""
    turn = current_turn()
    if turn is None or not turn.client.write_text_file:
        return "this editor does not let me write files"
    return f"the `{turn.session.mode_id}` mode does not allow writing files"


async def _planner(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[_Chunk]:
    """A scripted model: plan, read a file through the editor, write notes (with permission), answer."""
    tools = {t.name for t in info.function_tools}
    prompt, done = _this_turn(messages)
    mentioned = re.search(r"[\w./-]+\.\w+", prompt)
    path = mentioned.group(0) if mentioned else "README.md"
    plan = "update_plan" in tools
    read, written = done.get("read_file"), done.get("write_file")
    last_plan = done["update_plan"].tool_call_id if "update_plan" in done else None

    if "read_file" not in tools:  # nothing to plan: say so at once
        yield f"This editor does not share its files with me, so I cannot read `{path}` or write notes about it."
        return
    if read is None:
        yield {0: DeltaThinkingPart(content=f"The user said: {prompt[:80]!r}. ")}
        yield {0: DeltaThinkingPart(content=f"I'll read {path} through the editor, then write short notes.")}
        yield f"Let me look at `{path}` first.\n"
        if plan:
            yield _call(1, "update_plan", _plan("in_progress", "pending", "pending"), "plan-1")
        yield _call(2, "read_file", {"path": path}, "read-1")
        return
    if read.outcome != "success":
        # Nothing was read: say so, write nothing, and leave the plan's steps undone.
        if plan and last_plan == "plan-1":
            yield _call(1, "update_plan", _plan("pending", "pending", "completed"), "plan-2")
            return
        yield f"I could not read `{path}` ({_why(read)}), so I wrote no notes."
        return
    if written is None and "write_file" in tools:
        text = str(read.content).strip()
        first = text.splitlines()[0][:100] if text else "(nothing)"
        if plan:
            yield _call(1, "update_plan", _plan("completed", "in_progress", "pending"), "plan-2")
        notes = f"# Notes\n\nFirst line of {path}: {first}\n"
        yield _call(2, "write_file", {"path": "acpkit-notes.md", "content": notes}, "write-1")
        return
    wrote = written is not None and written.outcome == "success"
    if plan and last_plan != "plan-3":
        yield _call(1, "update_plan", _plan("completed", "completed" if wrote else "pending", "completed"), "plan-3")
        return
    if wrote:
        yield f"Done: I read `{path}` and wrote my notes to `acpkit-notes.md`."
    elif written is not None:
        yield f"I read `{path}` but did not write any notes ({_why(written)})."
    else:
        yield f"I read `{path}`; {_cannot_write()}, so I wrote no notes."


async def _summariser(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[_Chunk]:
    """A second scripted model, terser: it reads the file and answers in one line, writing nothing."""
    prompt, done = _this_turn(messages)
    mentioned = re.search(r"[\w./-]+\.\w+", prompt)
    path = mentioned.group(0) if mentioned else "README.md"
    read = done.get("read_file")
    if read is None and "read_file" in {t.name for t in info.function_tools}:
        yield _call(0, "read_file", {"path": path}, "summary-read-1")
    elif read is None:
        yield "Summary: this editor does not share its files with me."
    elif read.outcome != "success":
        yield f"Summary: I could not read `{path}` ({_why(read)})."
    else:
        lines = str(read.content).strip().splitlines()
        yield f"Summary of `{path}`: {len(lines)} lines, starting with {lines[0][:80] if lines else '(nothing)'!r}."


OFFLINE_MODELS = (
    (
        ModelOption(id="offline-planner", name="Offline planner", description="Plans, reads, asks, writes notes"),
        FunctionModel(stream_function=_planner, model_name="offline-planner"),
    ),
    (
        ModelOption(id="offline-summariser", name="Offline summariser", description="Reads and answers in one line"),
        FunctionModel(stream_function=_summariser, model_name="offline-summariser"),
    ),
)
"""The scripted models offered in the `model` picker, by id (the first is the default): the ids of the
LangGraph example's scripted models too."""


def _models() -> list[str | tuple[ModelOption, FunctionModel]]:
    real = os.environ.get("ACPKIT_MODEL")
    return [real, *OFFLINE_MODELS] if real else [*OFFLINE_MODELS]


_agent = Agent(OFFLINE_MODELS[0][1], name="pydantic-example", instructions=INSTRUCTIONS)

acp_agent = create_acp_agent(
    _agent,
    models=_models(),
    title="pydantic-ai example agent",
    client_tools=True,
    plan_tool=True,
    modes=STANDARD_MODES,
    permission_policy=PermissionPolicy(ask=("write_file", "run_command")),
    config_options=[show_thinking_option()],  # an on/off switch, for editors that show boolean options
)
"""What both `acpkit run examples/pydantic_agent.py` and `python examples/pydantic_agent.py` serve."""

if __name__ == "__main__":
    run_stdio(acp_agent)
