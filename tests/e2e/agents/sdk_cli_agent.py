"""A small third-party-style ACP agent written on the raw SDK, for the `acpkit` CLI tests.

It does not use ACP Kit's server: `acpkit run` must serve any ready ACP agent object, and
`acpkit chat --agent` must drive any agent. Its turn is scripted from the prompt text:

- default: a thought, a `read` tool call reading `notes.txt` through the client, a plan, a
  permission question before an `edit` tool call writing `out.txt` through the client (with a diff),
  a usage update, then an answer naming the attachments it received;
- `slow`: streams a line and waits until `session/cancel`, then ends `cancelled`;
- `/echo ARGS`: answers `echo: ARGS`; `refuse`: ends with `refusal`;
- `shell`: runs a command in a client terminal; `escape`: tries to read a file outside the cwd;
- `markdown`: streams a markdown answer in 3-character chunks (split inside words and markers);
- `controls`: sends escape sequences, BEL and NUL in its text, thought, tool title, output, plan and title;
- `fail`: answers `session/prompt` with a JSON-RPC error (the one-line cause, details in `data`).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path
from typing import Any, cast

from acp import (
    PROTOCOL_VERSION,
    Agent,
    RequestError,
    plan_entry,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.schema import (
    AgentCapabilities,
    AvailableCommand,
    AvailableCommandsUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionResumeCapabilities,
    ToolCallUpdate,
    Usage,
    UsageUpdate,
)


class ScriptedAgent:
    """The scripted agent (a plain class, as ACP-NOTES advise)."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.sessions: dict[str, str] = {}
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_info=Implementation(name="scripted", title="Scripted agent", version="1.0"),
            agent_capabilities=AgentCapabilities(
                load_session=False,
                prompt_capabilities=PromptCapabilities(image=True, audio=True, embedded_context=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), resume=SessionResumeCapabilities()
                ),
            ),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        sid = f"sess_{uuid.uuid4().hex[:8]}"
        self.sessions[sid] = cwd
        asyncio.get_running_loop().call_later(0.05, lambda: asyncio.ensure_future(self._commands(sid)))
        return NewSessionResponse(session_id=sid)

    async def _commands(self, sid: str) -> None:
        commands = [
            AvailableCommand(name="echo", description="Repeat the text after the command"),
            AvailableCommand(name="explain", description="Explain something"),
        ]
        await self.conn.session_update(
            sid, AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)
        )

    async def resume_session(self, cwd: str, session_id: str, **kwargs: Any) -> ResumeSessionResponse:
        self.sessions[session_id] = cwd
        return ResumeSessionResponse()

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> Any:
        return ListSessionsResponse(
            sessions=[SessionInfo(session_id="sess_stored", cwd=cwd or "/", title="A stored session")]
        )

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if session_id in self.cancelled:
            self.cancelled[session_id].set()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        self.cancelled[session_id] = cancel = asyncio.Event()
        text = " ".join(getattr(b, "text", "") for b in prompt if getattr(b, "type", "") == "text")
        say = self._say(session_id)
        if text.startswith("/echo"):
            await say(f"echo: {text[5:].strip()}")
            return PromptResponse(stop_reason="end_turn")
        if "refuse" in text:
            await say("I will not.")
            return PromptResponse(stop_reason="refusal")
        if text.startswith("shell"):
            term = await self.conn.create_terminal(session_id=session_id, command="echo from-the-terminal; exit 3")
            status = await self.conn.wait_for_terminal_exit(session_id=session_id, terminal_id=term.terminal_id)
            output = await self.conn.terminal_output(session_id=session_id, terminal_id=term.terminal_id)
            await self.conn.release_terminal(session_id=session_id, terminal_id=term.terminal_id)
            await say(f"terminal said {output.output.strip()!r} and exited {status.exit_code}")
            return PromptResponse(stop_reason="end_turn")
        if text.startswith("escape"):
            try:
                await self.conn.read_text_file(session_id=session_id, path="/etc/hostname")
                await say("read outside the cwd")
            except Exception as exc:
                await say(f"refused: {exc}")
            return PromptResponse(stop_reason="end_turn")
        if text.startswith("markdown"):
            for i in range(0, len(MARKDOWN), 3):
                await self.conn.session_update(session_id, update_agent_message_text(MARKDOWN[i : i + 3]))
                await asyncio.sleep(0.005)
            return PromptResponse(stop_reason="end_turn")
        if text.startswith("controls"):
            await self._controls(session_id)
            return PromptResponse(stop_reason="end_turn")
        if text.startswith("fail"):
            await say("starting...")
            raise RequestError(
                -32603, "The agent failed: ValueError: the model said no", {"traceback": "Traceback ...\nValueError"}
            )
        if "slow" in text:
            await say("working slowly...")
            await cancel.wait()
            return PromptResponse(stop_reason="cancelled")
        return await self._full_turn(session_id, prompt, cancel)

    async def _controls(self, sid: str) -> None:
        conn = self.conn
        await conn.session_update(sid, SessionInfoUpdate(session_update="session_info_update", title=EVIL + "title"))
        await conn.session_update(sid, update_agent_thought_text("pondering\x07" + EVIL))
        await conn.session_update(sid, start_tool_call("c1", "tool\x1b]0;pwned\x07title", kind="execute"))
        await conn.session_update(
            sid, update_tool_call("c1", status="completed", content=[tool_content(text_block("out\x1b[31mput\x00"))])
        )
        await conn.session_update(sid, update_plan([plan_entry("step\x1b[2J\x00one")]))
        await conn.session_update(sid, update_agent_message_text("visible " + EVIL + "text\x9b2J end"))

    def _say(self, sid: str) -> Any:
        async def say(text: str) -> None:
            await self.conn.session_update(sid, update_agent_message_text(text))

        return say

    async def _full_turn(self, sid: str, prompt: list[Any], cancel: asyncio.Event) -> PromptResponse:
        cwd = Path(self.sessions.get(sid, os.getcwd()))
        conn = self.conn
        await conn.session_update(sid, update_agent_thought_text("The user wants notes; read them first."))
        await conn.session_update(
            sid,
            update_plan([plan_entry("Read notes.txt", status="in_progress"), plan_entry("Write out.txt")]),
        )
        notes = str(cwd / "notes.txt")
        await conn.session_update(sid, start_tool_call("t1", "Read notes.txt", kind="read", status="in_progress"))
        content = (await conn.read_text_file(session_id=sid, path=notes)).content
        await conn.session_update(
            sid, update_tool_call("t1", status="completed", content=[tool_content(text_block(content))])
        )
        out = str(cwd / "out.txt")
        new_text = content.upper()
        await conn.session_update(sid, start_tool_call("t2", "Write out.txt", kind="edit", status="pending"))
        answer = await conn.request_permission(
            session_id=sid,
            tool_call=ToolCallUpdate(tool_call_id="t2", title="Write out.txt", kind="edit"),
            options=[
                PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
                PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        outcome = answer.outcome
        if outcome.outcome == "cancelled" or cancel.is_set():
            await conn.session_update(sid, update_tool_call("t2", status="failed"))
            return PromptResponse(stop_reason="cancelled")
        if outcome.option_id == "reject":
            await conn.session_update(sid, update_tool_call("t2", status="failed"))
            wrote = "not written (rejected)"
        else:
            await conn.write_text_file(session_id=sid, path=out, content=new_text)
            await conn.session_update(
                sid,
                update_tool_call("t2", status="completed", content=[tool_diff_content(out, new_text, None)]),
            )
            wrote = "written"
        await conn.session_update(
            sid,
            update_plan(
                [plan_entry("Read notes.txt", status="completed"), plan_entry("Write out.txt", status="completed")]
            ),
        )
        kinds = [b.type for b in prompt[1:]]
        await conn.session_update(sid, UsageUpdate(session_update="usage_update", used=120, size=1000))
        await self._say(sid)(f"Done: out.txt {wrote}. Attachments: {', '.join(kinds) or 'none'}.")
        return PromptResponse(stop_reason="end_turn", usage=Usage(input_tokens=100, output_tokens=20, total_tokens=120))


MARKDOWN = (
    "# Release notes\n\nThis is **important** and `inline code`.\n\n- first item\n- second item\n\n"
    "```python\nprint('hi')\n```\n\nThe end.\n"
)
EVIL = "\x1b[2J\x1b]0;pwned\x07\x00"
"""Clear the screen, retitle the window, NUL."""

agent = ScriptedAgent()


if __name__ == "__main__":
    asyncio.run(run_agent(cast(Agent, agent), use_unstable_protocol=True))  # serves only part of the protocol
