"""A third-party ACP agent written only against the bare `acp` SDK, served by `acpkit serve -- CMD`.

Nothing of ACP Kit is imported: it stands for an agent in any language. Its answer is scripted by
the prompt's first word:

- `pid`: its process id; `spawn`: starts a grandchild (`sleep`) in its process group and gives its pid;
- `auth`: the method id of its last successful `authenticate` (`<none>`);
- `caps`: the `fs` and `terminal` client capabilities it was told in `initialize` (JSON);
- `cwd`: the session's cwd as it received it; `env NAME`: that variable of its own environment;
- `read PATH` / `write PATH TEXT` / `shell COMMAND`: through the client's files and terminals
  (an error is answered as `error: ...`);
- `ask TITLE`: asks the client's permission (its first request to the client) and says the option chosen;
- `crash`: writes to stderr and exits with code 3 mid-turn; `slow`: waits for `session/cancel`;
- `big N`: a message chunk of N characters; `flood`: chunks as fast as they go, until cancelled;
- anything else: `echo: TEXT`.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
import uuid
from typing import Any, cast

from acp import PROTOCOL_VERSION, Agent, run_agent, update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    ToolCallUpdate,
)


class ChildAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.caps: dict[str, Any] = {}
        self.sessions: dict[str, str] = {}
        self.cancelled: dict[str, asyncio.Event] = {}
        self.grandchildren: list[subprocess.Popen[bytes]] = []
        self.authenticated = "<none>"

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, **kwargs: Any) -> Any:
        if client_capabilities is not None:
            self.caps = client_capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_info=Implementation(name="sdk-child", version="1.0"),
            agent_capabilities=AgentCapabilities(
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), close=SessionCloseCapabilities()
                )
            ),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        self.authenticated = method_id
        return AuthenticateResponse()

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        sid = f"child_{uuid.uuid4().hex[:8]}"
        self.sessions[sid] = cwd
        return NewSessionResponse(session_id=sid)

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> Any:
        return ListSessionsResponse(sessions=[SessionInfo(session_id=s, cwd=c) for s, c in self.sessions.items()])

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        self.sessions.pop(session_id, None)
        return CloseSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if session_id in self.cancelled:
            self.cancelled[session_id].set()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        self.cancelled[session_id] = cancel = asyncio.Event()
        text = " ".join(getattr(b, "text", "") for b in prompt if getattr(b, "type", "") == "text")
        word, _, rest = text.partition(" ")
        try:
            answer = await self._answer(word, rest, session_id, cancel)
        except Exception as exc:
            data = getattr(exc, "data", None)
            answer = f"error: {exc}" + (f" {json.dumps(data, sort_keys=True)}" if data else "")
        if answer is None:
            return PromptResponse(stop_reason="cancelled")
        await self.conn.session_update(session_id, update_agent_message_text(answer))
        return PromptResponse(stop_reason="end_turn")

    async def _answer(self, word: str, rest: str, sid: str, cancel: asyncio.Event) -> str | None:
        conn = self.conn
        if word == "pid":
            return f"pid {os.getpid()}"
        if word == "spawn":
            child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            self.grandchildren.append(child)
            return f"pid {child.pid}"
        if word == "auth":
            return self.authenticated
        if word == "caps":
            return json.dumps({"fs": self.caps.get("fs"), "terminal": self.caps.get("terminal")}, sort_keys=True)
        if word == "env":
            return os.environ.get(rest, "<unset>")
        if word == "cwd":
            return self.sessions.get(sid, "?")
        if word == "read":
            return (await conn.read_text_file(session_id=sid, path=rest)).content
        if word == "write":
            path, _, content = rest.partition(" ")
            await conn.write_text_file(session_id=sid, path=path, content=content)
            return f"wrote {path}"
        if word == "shell":
            command, *args = shlex.split(rest)
            term = await conn.create_terminal(session_id=sid, command=command, args=args)
            status = await conn.wait_for_terminal_exit(session_id=sid, terminal_id=term.terminal_id)
            output = await conn.terminal_output(session_id=sid, terminal_id=term.terminal_id)
            await conn.release_terminal(session_id=sid, terminal_id=term.terminal_id)
            return f"{output.output.strip()} (exit {status.exit_code})"
        if word == "ask":
            asked = await conn.request_permission(
                session_id=sid,
                tool_call=ToolCallUpdate(tool_call_id=f"call-{sid}", title=rest or "ask"),
                options=[
                    PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
                    PermissionOption(option_id="no", name="No", kind="reject_once"),
                ],
            )
            return f"chose {getattr(asked.outcome, 'option_id', asked.outcome.outcome)}"
        if word == "crash":
            await conn.session_update(sid, update_agent_message_text("about to crash"))
            await asyncio.sleep(0.05)
            sys.stderr.write("boom: the child agent crashed on purpose\n")
            sys.stderr.flush()
            os._exit(3)
        if word == "slow":
            await conn.session_update(sid, update_agent_message_text("working slowly..."))
            await cancel.wait()
            return None
        if word == "flood":  # as fast as the pipe takes it, until cancelled
            while not cancel.is_set():
                await conn.session_update(sid, update_agent_message_text("y" * 1000))
            return None
        if word == "big":
            return "x" * int(rest)
        return f"echo: {word} {rest}".strip()


if __name__ == "__main__":
    asyncio.run(run_agent(cast(Agent, ChildAgent()), use_unstable_protocol=True))
