"""An example pydantic-ai agent served over ACP. Works offline; uses a real model when you ask for one.

Run it in an editor (Zed, Toad, ...) or in the terminal:

    acpkit run examples/pydantic_agent.py          # serves `acp_agent` over stdio
    python examples/pydantic_agent.py              # the same, without the CLI

Offline (the default) a scripted model shows every feature without an API key: it thinks aloud,
writes a plan, reads a file through the editor (`read_file`, so unsaved changes are seen), asks
your permission before writing `acpkit-notes.md` (`write_file`, shown as a diff), and answers.

With a real provider, set `ACPKIT_MODEL` and the provider's key:

    ACPKIT_MODEL=openai:gpt-4o OPENAI_API_KEY=... acpkit run examples/pydantic_agent.py
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator

from acpkit_core.config import STANDARD_MODES
from acpkit_core.permissions import PermissionPolicy
from acpkit_core.server import run_stdio
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


async def _offline(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[_Chunk]:
    """A scripted model: plan, read a file through the editor, write notes (with permission), answer."""
    tools = {t.name for t in info.function_tools}
    turn_start = max(
        i
        for i, m in enumerate(messages)
        if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
    )
    prompt = next(str(p.content) for p in messages[turn_start].parts if isinstance(p, UserPromptPart))
    returns = [
        p
        for m in messages[turn_start:]
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]
    done = {p.tool_name: p for p in returns}
    mentioned = re.search(r"[\w./-]+\.\w+", prompt)
    path = mentioned.group(0) if mentioned else "README.md"

    if not returns:
        yield {0: DeltaThinkingPart(content=f"The user said: {prompt[:80]!r}. ")}
        yield {0: DeltaThinkingPart(content=f"I'll read {path} through the editor, then write short notes.")}
        yield f"Let me look at `{path}` first.\n"
        if "update_plan" in tools:
            yield _call(1, "update_plan", _plan("in_progress", "pending", "pending"), "plan-1")
        if "read_file" in tools:
            yield _call(2, "read_file", {"path": path}, "read-1")
            return
        yield "(This editor does not share its files with me, so I can only talk.)"
        return
    if "write_file" not in done and "write_file" in tools and "read_file" in done:
        read = done["read_file"]
        text = str(read.content).strip() if read.outcome == "success" else ""
        first = text.splitlines()[0][:100] if text else "(nothing)"
        if "update_plan" in tools:
            yield _call(1, "update_plan", _plan("completed", "in_progress", "pending"), "plan-2")
        notes = f"# Notes\n\nFirst line of {path}: {first}\n"
        yield _call(2, "write_file", {"path": "acpkit-notes.md", "content": notes}, "write-1")
        return
    if "update_plan" in tools and "plan-3" not in {p.tool_call_id for p in returns}:
        yield _call(1, "update_plan", _plan("completed", "completed", "completed"), "plan-3")
        return
    written = done.get("write_file")
    if written is not None and written.outcome == "success":
        yield f"Done: I read `{path}` and wrote my notes to `acpkit-notes.md`."
    else:
        yield f"I read `{path}` but did not write any notes (you declined, or it failed)."


def _model() -> str | FunctionModel:
    return os.environ.get("ACPKIT_MODEL") or FunctionModel(stream_function=_offline, model_name="offline-demo")


_agent = Agent(_model(), name="pydantic-example", instructions=INSTRUCTIONS)

acp_agent = create_acp_agent(
    _agent,
    title="pydantic-ai example agent",
    client_tools=True,
    plan_tool=True,
    modes=STANDARD_MODES,
    permission_policy=PermissionPolicy(ask=("write_file", "run_command")),
)
"""What `acpkit run examples/pydantic_agent.py` serves."""

if __name__ == "__main__":
    run_stdio(acp_agent)
