"""A turn's file and terminal requests go after the text it has streamed, never before it.

With chunk merging (`AgentOptions.coalesce_ms`), a turn's last text deltas may still wait for the
merging window when its runner makes a request to the client. Permission questions and `turn.ask`
send what waits first (`before_ask`); [`FlushFirst`][acpkit_core.server.flush_first.FlushFirst]
does the same for the host's requests (files, terminals, extension methods), so a client sees the
text that came before a request before the request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from ..runner.host import ClientConnection

__all__ = ["FlushFirst"]


class FlushFirst:
    """A [`ClientConnection`][acpkit_core.runner.host.ClientConnection] that awaits `flush` before each request."""

    def __init__(self, conn: ClientConnection, flush: Callable[[], Awaitable[None]]) -> None:
        self._conn = conn
        self._flush = flush

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        """`fs/read_text_file`, after what waits to be sent."""
        await self._flush()
        return await self._conn.read_text_file(session_id, path, line=line, limit=limit, **kwargs)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        """`fs/write_text_file`, after what waits to be sent."""
        await self._flush()
        return await self._conn.write_text_file(session_id, path, content, **kwargs)

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
        """`terminal/create`, after what waits to be sent."""
        await self._flush()
        return await self._conn.create_terminal(
            session_id, command, args=args, env=env, cwd=cwd, output_byte_limit=output_byte_limit, **kwargs
        )

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        """`terminal/output`, after what waits to be sent."""
        await self._flush()
        return await self._conn.terminal_output(session_id, terminal_id, **kwargs)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        """`terminal/wait_for_exit`, after what waits to be sent."""
        await self._flush()
        return await self._conn.wait_for_terminal_exit(session_id, terminal_id, **kwargs)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse | None:
        """`terminal/kill`, after what waits to be sent."""
        await self._flush()
        return await self._conn.kill_terminal(session_id, terminal_id, **kwargs)

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse | None:
        """`terminal/release`, after what waits to be sent."""
        await self._flush()
        return await self._conn.release_terminal(session_id, terminal_id, **kwargs)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """An extension request, after what waits to be sent."""
        await self._flush()
        return await self._conn.ext_method(method, params)
