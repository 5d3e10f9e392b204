"""Slash commands: the developer's and runner's commands plus the built-ins (`/mode`, `/model`, `/thinking`,
`/clear`, `/tools`, `/mcp`, `/rewind`, `/retry`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from ..config import Command
from ..prompt.ir import Prompt, Text
from ..runner.capabilities import CommandSource
from ..runner.protocols import McpLister, Runner, ToolLister, Turn
from ..runner.types import StopReason
from .builtins import BuiltinCommands

__all__ = ["available_commands", "collect_commands", "match_command"]


def _builtin(
    name: str, description: str, handler: Callable[[Turn, str], Awaitable[StopReason | None]], hint: str | None = None
) -> Command:
    return Command(name=name, description=description, handler=handler, hint=hint)


def collect_commands(runner: Runner, custom: Sequence[Command], ops: BuiltinCommands) -> dict[str, Command]:
    """Every command of an agent by name: built-ins first, then the runner's, then the developer's (later wins)."""
    table: dict[str, Command] = {}
    if ops.has_modes:
        table["mode"] = _builtin("mode", "Show or switch the session mode", ops.command_mode, "mode id")
    if ops.has_models:
        table["model"] = _builtin("model", "Show or switch the model", ops.command_model, "model id")
    if ops.thinking is not None:
        table["thinking"] = _builtin("thinking", "Show or set the thinking effort", ops.command_thinking, "level")
    table["clear"] = _builtin("clear", "Forget this conversation and start over", ops.command_clear)
    if isinstance(runner, ToolLister):
        table["tools"] = _builtin("tools", "List the tools the agent can use", ops.command_tools)
    if isinstance(runner, McpLister):
        table["mcp"] = _builtin("mcp", "List this session's MCP servers, their state and their tools", ops.command_mcp)
    if ops.rewinder.available:
        table["rewind"] = _builtin(
            "rewind",
            "Go back to before a prompt (the last one, or prompt N), and put back the files the agent changed",
            ops.command_rewind,
            "prompt number",
        )
        table["retry"] = _builtin("retry", "Undo the last answer and send the last prompt again", ops.command_retry)
    if isinstance(runner, CommandSource):
        for cmd in runner.commands():
            table[cmd.name] = cmd
    for cmd in custom:
        table[cmd.name] = cmd
    return table


def available_commands(table: dict[str, Command], hints: Mapping[str, str] | None = None) -> list[AvailableCommand]:
    """The `available_commands_update` payload; `hints` replaces some commands' input hints (per session)."""
    out: list[AvailableCommand] = []
    for c in table.values():
        hint = (hints or {}).get(c.name, c.hint)
        out.append(
            AvailableCommand(
                name=c.name,
                description=c.description,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None,
            )
        )
    return out


def match_command(prompt: Prompt, table: dict[str, Command]) -> tuple[Command, str] | None:
    """The command a prompt starting with `/name` runs, and the text after the name; `None` for plain text."""
    first = prompt[0] if prompt else None
    if not isinstance(first, Text):
        return None
    text = first.text.lstrip()
    if not text.startswith("/"):
        return None
    word, _, rest = text[1:].partition(" ")
    name = word.strip()
    if "\n" in name:
        name, _, more = name.partition("\n")
        rest = more + (" " + rest if rest else "")
    command = table.get(name)
    if command is None:
        return None
    return command, rest.strip()
