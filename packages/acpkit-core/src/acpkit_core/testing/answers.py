"""What the test client answers the agent with, and the MCP servers it hands over, as the wire has them."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeAlias, TypeVar

from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    CancelElicitationResponse,
    CreateTerminalResponse,
    DeclineElicitationResponse,
    DeniedOutcome,
    EnvVariable,
    HttpHeader,
    KillTerminalResponse,
    McpServerStdio,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp.schema import HttpMcpServer as WireHttpMcpServer
from acp.schema import SseMcpServer as WireSseMcpServer

from ..client.local_host import LocalClientHost
from ..runner.types import HttpMcpServer, SseMcpServer, StdioMcpServer

_A = TypeVar("_A")


class _Cancelled(Exception):
    """The session was cancelled before the test client chose its answer."""


__all__ = ["ClientAnswers", "ElicitationAnswer", "PermissionAnswer"]


PermissionAnswer: TypeAlias = Sequence[str] | Callable[[RequestPermissionRequest], str | Awaitable[str]]
"""Option kinds or ids (`allow_once`, ..., or `cancelled`) used in order, or a function choosing one.

`cancel_turn` answers as an editor does when the user stops the turn at the question: it sends
`session/cancel`, then answers the request `cancelled`."""


ElicitationAnswer: TypeAlias = Sequence[str | None] | Callable[[dict[str, Any]], str | Awaitable[str | None] | None]
"""Answers to `elicitation/create`, in order, or a function of the request's params choosing one.

A string is accepted as the value of the form's `answer` (in URL mode any string accepts: the user
consented to open the link); `None` declines; `"cancel_turn"` answers as an editor does when the
user stops the turn at the question (`session/cancel`, then `cancel`)."""


WireMessage: TypeAlias = tuple[Literal["sent", "received"], dict[str, Any]]
"""One raw JSON-RPC message of the connection, as the test client sent or received it."""


def wire_mcp_server(server: Any) -> Any:
    """An MCP server for the wire: runner-side descriptions are converted, schema models pass through."""
    if isinstance(server, StdioMcpServer):
        env = [EnvVariable(name=k, value=v) for k, v in server.env.items()]
        return McpServerStdio(name=server.name, command=server.command, args=list(server.args), env=env)
    if isinstance(server, HttpMcpServer):
        headers = [HttpHeader(name=k, value=v) for k, v in server.headers.items()]
        return WireHttpMcpServer(type="http", name=server.name, url=server.url, headers=headers)
    if isinstance(server, SseMcpServer):
        headers = [HttpHeader(name=k, value=v) for k, v in server.headers.items()]
        return WireSseMcpServer(type="sse", name=server.name, url=server.url, headers=headers)
    return server


class ClientAnswers:
    """The test client's answers to the agent's requests: permissions and questions from its script,
    files and terminals from a [`LocalClientHost`][acpkit_core.client.local_host.LocalClientHost]
    on the real disk, each request recorded. A base class of
    [`AcpTestClient`][acpkit_core.testing.AcpTestClient], which sets these attributes."""

    host: LocalClientHost
    requests: list[tuple[str, dict[str, Any]]]
    permission_answers: PermissionAnswer
    permission_requests: list[RequestPermissionRequest]
    elicitation_answers: ElicitationAnswer
    elicitations: list[dict[str, Any]]
    completed_elicitations: list[str]
    _answer_index: int
    _elicitation_index: int
    _cancel_events: dict[str, asyncio.Event]

    async def cancel(self, session_id: str) -> None:
        """Send `session/cancel` for the session (the client defines it)."""
        raise NotImplementedError

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **kwargs: Any
    ) -> RequestPermissionResponse:
        """Answer from `permission_answers`; a `session/cancel` sent meanwhile answers `cancelled`."""
        request = RequestPermissionRequest(options=options, session_id=session_id, tool_call=tool_call)
        self.permission_requests.append(request)
        self.requests.append(("session/request_permission", request.model_dump(by_alias=True, exclude_none=True)))
        try:
            answer = await self._unless_cancelled(session_id, self._choose(request))
        except _Cancelled:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if answer == "cancel_turn":
            await self.cancel(session_id)
        if answer in ("cancelled", "cancel_turn"):
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        option_id = next((o.option_id for o in options if answer in (o.option_id, o.kind)), answer)
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))

    async def _unless_cancelled(self, session_id: str, answer: Awaitable[_A]) -> _A:
        """The answer, unless a `session/cancel` for the session comes first (`_Cancelled`).

        Also when the agent cancels the request itself (`$/cancel_request`, answered -32800): the
        answer is then cancelled with this call.
        """
        cancelled = self._cancel_events.setdefault(session_id, asyncio.Event())
        choice = asyncio.ensure_future(answer)
        waiter = asyncio.ensure_future(cancelled.wait())
        try:
            await asyncio.wait({choice, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            unanswered = not choice.done()
            if unanswered:
                choice.cancel()
        if unanswered:
            raise _Cancelled
        return choice.result()

    async def _choose(self, request: RequestPermissionRequest) -> str:
        answers = self.permission_answers
        if callable(answers):
            result = answers(request)
            return await result if inspect.isawaitable(result) else result
        if self._answer_index < len(answers):
            self._answer_index += 1
            return answers[self._answer_index - 1]
        return "allow_once"

    async def create_elicitation(
        self, message: str, mode: Any, **kwargs: Any
    ) -> AcceptElicitationResponse | DeclineElicitationResponse | CancelElicitationResponse:
        """Answer from `elicitation_answers`; a `session/cancel` sent meanwhile answers `cancel`."""
        url_mode = not hasattr(mode, "requested_schema")
        params: dict[str, Any] = {"message": message, "mode": "url" if url_mode else "form"}
        params.update(mode.model_dump(mode="json", by_alias=True, exclude_none=True))
        self.elicitations.append(params)
        self.requests.append(("elicitation/create", params))
        session_id = str(params.get("sessionId", ""))
        try:
            answer = await self._unless_cancelled(session_id, self._elicitation_choice(params))
        except _Cancelled:
            return CancelElicitationResponse(action="cancel")
        if answer == "cancel_turn":
            await self.cancel(session_id)
            return CancelElicitationResponse(action="cancel")
        if answer is None:
            return DeclineElicitationResponse(action="decline")
        if url_mode:  # the user consented to open the link; what happens there is out of band
            return AcceptElicitationResponse(action="accept")
        return AcceptElicitationResponse(action="accept", content={"answer": answer})

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        """Record `elicitation/complete` (the out-of-band part of a URL elicitation finished)."""
        self.completed_elicitations.append(elicitation_id)

    async def _elicitation_choice(self, params: dict[str, Any]) -> str | None:
        answers = self.elicitation_answers
        if callable(answers):
            result = answers(params)
            return await result if inspect.isawaitable(result) else result
        if self._elicitation_index < len(answers):
            self._elicitation_index += 1
            return answers[self._elicitation_index - 1]
        return None

    async def read_text_file(
        self, path: str, session_id: str, limit: int | None = None, line: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        """Read a real file (`line` is 1-based)."""
        self.requests.append(("fs/read_text_file", {"path": path, "line": line, "limit": limit}))
        return await self.host.read_text_file(path, line=line, limit=limit)

    async def write_text_file(self, content: str, path: str, session_id: str, **kwargs: Any) -> WriteTextFileResponse:
        """Write a real file."""
        self.requests.append(("fs/write_text_file", {"path": path, "content": content}))
        return await self.host.write_text_file(path, content)

    async def create_terminal(
        self,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: list[EnvVariable] | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        """Start a real subprocess."""
        self.requests.append(("terminal/create", {"command": command, "args": args, "cwd": cwd}))
        return await self.host.create_terminal(command, args, cwd=cwd, env=env, output_byte_limit=output_byte_limit)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        """Output so far."""
        return await self.host.terminal_output(terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        """Wait for the process to end."""
        return await self.host.wait_for_terminal_exit(terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        """Kill the process."""
        self.requests.append(("terminal/kill", {"terminalId": terminal_id}))
        return await self.host.kill_terminal(terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        """Kill if running and forget the terminal."""
        self.requests.append(("terminal/release", {"terminalId": terminal_id}))
        return await self.host.release_terminal(terminal_id)
