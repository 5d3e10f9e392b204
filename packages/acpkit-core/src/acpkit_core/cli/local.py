"""The client side of `acpkit chat`: the ACP `Client` methods served from the local machine.

File reads and writes go to the real disk, limited to the working directory (and its
subdirectories); terminals are real subprocesses. Session updates and permission requests are
handed to callbacks, so the terminal view and the permission prompt live elsewhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import (
    AuthCapabilities,
    ClientCapabilities,
    CreateTerminalResponse,
    EnvVariable,
    FileSystemCapabilities,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from ..client.local_host import LocalClientHost

__all__ = ["CAPABILITIES", "SPAWNED_CAPABILITIES", "LocalClient", "PermissionHandler", "UpdateHandler"]

CAPABILITIES = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
    terminal=True,
    field_meta={"acpkit.fs": {"removeFile": True}},
)
"""What `acpkit chat` advertises: it really serves file reads, writes and terminals, and the
`_acpkit/fs/remove_file` extension (a rewind removes a file the agent created)."""

SPAWNED_CAPABILITIES = CAPABILITIES.model_copy(update={"auth": AuthCapabilities(terminal=True)})
"""What `acpkit chat` advertises to an agent it started: also terminal logins (it can run the
agent's own command again, in its terminal)."""

UpdateHandler = Callable[[str, Any], None]
"""Called with (session id, update model) for each `session/update`."""

PermissionHandler = Callable[[str, ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]
"""Answers `session/request_permission`."""

_DEFAULT_OUTPUT_LIMIT = 1_000_000


class LocalClient:
    """An ACP client serving fs and terminal requests from `root`, and forwarding the rest to callbacks."""

    def __init__(self, root: Path, *, on_update: UpdateHandler, on_permission: PermissionHandler) -> None:
        self.root = root.resolve()
        self._on_update = on_update
        self._on_permission = on_permission
        self.host = LocalClientHost(self.root, output_byte_limit=_DEFAULT_OUTPUT_LIMIT)
        """Serves the file and terminal methods, confined to `root`."""

    # --- updates and permissions ------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Hand a `session/update` to the view."""
        self._on_update(session_id, update)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        """Ask the user (or the automatic answer) which option to take."""
        return await self._on_permission(session_id, tool_call, options)

    # --- files and terminals (served by the shared LocalClientHost) ------------------------

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        """Read a text file under the working directory (`line` is 1-based)."""
        return await self.host.read_text_file(path, line=line, limit=limit)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        """Write a text file under the working directory, creating parent directories."""
        return await self.host.write_text_file(path, content)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        """Start a real subprocess (through `/bin/sh -c` when no `args` are given)."""
        return await self.host.create_terminal(command, args, cwd=cwd, env=env, output_byte_limit=output_byte_limit)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        """The output so far, and the exit status once the process ended."""
        return await self.host.terminal_output(terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        """Wait for the process to end."""
        return await self.host.wait_for_terminal_exit(terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        """Kill the process (and its process group); the output stays readable until release."""
        return await self.host.kill_terminal(terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        """Kill the process if it still runs and forget the terminal."""
        return await self.host.release_terminal(terminal_id)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Serve `_acpkit/fs/remove_file` under the working directory; other extensions answer -32601."""
        if method == "acpkit/fs/remove_file":
            await self.host.remove_file(str(params.get("path", "")))
            return {}
        raise RequestError.method_not_found(f"_{method}")

    async def close(self) -> None:
        """Kill every terminal the agent did not release."""
        await self.host.close()
