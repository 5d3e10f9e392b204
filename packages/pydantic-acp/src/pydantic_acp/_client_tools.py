"""An opt-in toolset that works through the editor: its files and its terminal.

`create_acp_agent(agent, client_tools=True)` adds, for each run, the tools the client can serve:

| tool | ACP | the tool call shows |
|---|---|---|
| `read_file(path, line?, limit?)` | `fs/read_text_file` (sees unsaved buffers) | the text read |
| `write_file(path, content)` | `fs/write_text_file` | a diff against what the editor had |
| `run_command(command, args?, cwd?, timeout?)` | `terminal/*` | the live terminal, then its output |

Only tools whose capability the client advertised are offered. Paths are resolved against the
session's cwd and must stay inside it (or the allowed directories): the core path policy of
[`ClientHost`][acpkit_core.runner.host.ClientHost] refuses anything else, and the model reads why.
"""

from __future__ import annotations

import os
from typing import Any

from acpkit_core.errors import HostError
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.tool_classification import diff_content
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import FunctionToolset

from ._events import EventProjector

__all__ = ["CLIENT_TOOL_NAMES", "client_toolset"]

CLIENT_TOOL_NAMES = frozenset({"read_file", "write_file", "run_command"})
"""Names of the client tools."""

_OUTPUT_LIMIT = 64_000


def client_toolset(turn: Turn, projector: EventProjector) -> FunctionToolset[Any]:
    """The client tools for one turn, limited to what the client advertised."""
    cwd = turn.session.cwd
    host = turn.host
    toolset = FunctionToolset[Any](id="acp-client")

    def absolute(path: str) -> str:
        return os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path))

    async def read_file(path: str, line: int | None = None, limit: int | None = None) -> str:
        """Read a text file of the project as the editor has it (unsaved changes included).

        Args:
            path: File path, absolute or relative to the project root.
            line: First line to read, 1-based (default: the start).
            limit: Number of lines to read (default: to the end).
        """
        try:
            return await host.read_text_file(absolute(path), line=line, limit=limit)
        except HostError as error:
            raise ToolFailed(str(error)) from error

    async def write_file(ctx: RunContext[Any], path: str, content: str) -> str:
        """Create or overwrite a text file of the project with `content`.

        Args:
            path: File path, absolute or relative to the project root.
            content: The complete new text of the file.
        """
        target = absolute(path)
        try:
            old = await host.read_for_diff(target)
            if ctx.tool_call_id:
                await projector.attach(ctx.tool_call_id, diff_content(target, old, content))
            await host.write_text_file(target, content)
        except HostError as error:
            raise ToolFailed(str(error)) from error
        return f"{'Updated' if old is not None else 'Created'} {target} ({len(content)} characters)."

    async def run_command(
        ctx: RunContext[Any],
        command: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        timeout: float | None = None,
    ) -> str:
        """Run a command in the editor's terminal and return its output and exit code.

        Args:
            command: The program to run (for example `pytest`).
            args: Its arguments.
            cwd: Working directory, absolute or relative to the project root (default: the root).
            timeout: Seconds to wait before the command is killed (default: no limit).
        """
        try:
            terminal = await host.create_terminal(
                command, args or (), cwd=absolute(cwd) if cwd else None, output_byte_limit=_OUTPUT_LIMIT
            )
            async with terminal:
                if ctx.tool_call_id:
                    await projector.attach(ctx.tool_call_id, terminal.content())
                result = await terminal.wait(timeout)
        except HostError as error:
            raise ToolFailed(str(error)) from error
        if result.timed_out:
            status = f"timed out after {timeout} seconds and was killed"
        elif result.exit_code is None:
            status = f"ended by signal {result.signal}" if result.signal else "ended without an exit code"
        else:
            status = f"exit code {result.exit_code}"
        truncated = " (beginning of the output cut)" if result.truncated else ""
        return f"{status}{truncated}\n{result.output}"

    if host.can_read:
        toolset.add_function(read_file, name="read_file")
    if host.can_write:
        toolset.add_function(write_file, name="write_file")
    if host.can_run:
        toolset.add_function(run_command, name="run_command")
    return toolset
