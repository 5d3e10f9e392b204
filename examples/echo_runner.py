"""A complete runner for a framework ACP Kit does not know: serve it to editors over ACP.

The "framework" here is `TinyBot`, a toy agent with its own event stream and history format,
standing in for whatever library you use. `TinyBotRunner` is all the glue needed: it maps the
prompt to the framework's input, the framework's events to ACP updates, asks permission before
tools that need it, stops when the turn is cancelled, and keeps the framework's history in
`session.state` so `session/load` and `session/resume` work after a restart.

Run it as an agent: `python examples/echo_runner.py` (point your editor's agent command at it).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from acpkit_core import AcpAgent, RunnerCapabilities, run_stdio
from acpkit_core.config import AgentOptions, Command
from acpkit_core.permissions import STANDARD_MODES
from acpkit_core.prompt.text import model_text
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import StopReason, ToolInfo, TurnUsage

# --- the "framework" -------------------------------------------------------------------------------


@dataclass
class TextDelta:
    text: str


@dataclass
class ToolRequest:
    call_id: str
    name: str
    args: dict[str, Any]


@dataclass
class ToolResult:
    call_id: str
    ok: bool
    output: str


class TinyBot:
    """Echoes the user; `count <path>` counts the lines of a file with its `count_lines` tool."""

    tools: ClassVar[dict[str, str]] = {"count_lines": "Count the lines of a file"}

    async def run(self, history: list[dict[str, str]], user: str) -> AsyncIterator[TextDelta | ToolRequest]:
        if user.startswith("count "):
            yield ToolRequest(call_id=f"call-{len(history)}", name="count_lines", args={"path": user[6:].strip()})
            return
        turns = sum(1 for m in history if m["role"] == "user")
        for word in f"You said: {user} (message {turns + 1})".split(" "):
            await asyncio.sleep(0)  # a real model would be streaming here
            yield TextDelta(word + " ")

    async def call_tool(self, request: ToolRequest, cwd: str) -> ToolResult:
        path = Path(cwd, request.args["path"])
        try:
            lines = len(path.read_text().splitlines())
        except OSError as exc:
            return ToolResult(request.call_id, False, str(exc))
        return ToolResult(request.call_id, True, f"{lines} lines")


# --- the runner: all the glue ACP needs ----------------------------------------------------------------


class TinyBotRunner:
    """Runs `TinyBot` for one ACP turn at a time."""

    capabilities = RunnerCapabilities(image=False, audio=False, embedded_context=True)

    def __init__(self, bot: TinyBot) -> None:
        self.bot = bot

    async def run_turn(self, turn: Turn) -> StopReason:
        history: list[dict[str, str]] = turn.session.state.setdefault("history", [])
        user = model_text(turn.prompt, root_dir=turn.session.cwd)  # attachments in their canonical text forms
        answer: list[str] = []
        async for event in self.bot.run(history, user):
            if turn.cancelled:
                return "cancelled"
            if isinstance(event, TextDelta):
                answer.append(event.text)
                await turn.emit.text(event.text)
            else:
                result = await self._tool(turn, event)
                if result is None:
                    return "cancelled"
                answer.append(result.output)
                turn.emit.new_message()
                await turn.emit.text(f"The file has {result.output}." if result.ok else f"Error: {result.output}")
        await turn.emit.usage(TurnUsage(input_tokens=len(user.split()), output_tokens=len("".join(answer).split())))
        history += [{"role": "user", "text": user}, {"role": "assistant", "text": "".join(answer).strip()}]
        return "end_turn"

    async def _tool(self, turn: Turn, request: ToolRequest) -> ToolResult | None:
        kind = turn.classify_tool(request.name, request.args)
        await turn.emit.tool_call(
            request.call_id,
            title=f"Count lines of {request.args['path']}",
            kind=kind,
            raw_input=request.args,
            locations=turn.tool_locations(request.args),
        )
        if not turn.tool_allowed(request.name, kind):
            await turn.emit.tool_call_update(request.call_id, status="failed", raw_output="not allowed in this mode")
            return ToolResult(request.call_id, False, "not allowed in this mode")
        if turn.needs_permission(request.name, kind):
            decision = await turn.request_permission(
                request.call_id, tool_name=request.name, title=f"Count lines of {request.args['path']}", kind=kind
            )
            if decision.outcome == "cancelled":
                return None  # the server closes the open tool call as failed
            if not decision.allowed:
                await turn.emit.tool_call_update(request.call_id, status="failed", raw_output="rejected")
                return ToolResult(request.call_id, False, "the user rejected the tool")
        await turn.emit.tool_call_update(request.call_id, status="in_progress")
        result = await self.bot.call_tool(request, turn.session.cwd)
        await turn.emit.tool_call_update(
            request.call_id, status="completed" if result.ok else "failed", raw_output=result.output
        )
        return result

    async def list_tools(self, turn: Turn) -> Sequence[ToolInfo]:
        """Makes `/tools` available."""
        return [ToolInfo(name=n, description=d, kind="read") for n, d in self.bot.tools.items()]


async def forget(turn: Turn, args: str) -> StopReason | None:
    """A custom slash command: `/forget` drops the bot's history but keeps the transcript."""
    turn.session.state["history"] = []
    await turn.emit.text("Forgotten.")
    return "end_turn"


def build_agent() -> AcpAgent:
    """The ACP agent: the runner plus everything the server handles."""
    return AcpAgent(
        TinyBotRunner(TinyBot()),
        AgentOptions(
            name="tinybot",
            title="TinyBot",
            modes=STANDARD_MODES,
            default_mode="interactive",  # asks before edit/delete/move/execute tools
            tool_kinds={"count_lines": "read"},
            commands=[Command(name="forget", description="Forget the conversation", handler=forget)],
        ),
    )


if __name__ == "__main__":
    run_stdio(build_agent())
