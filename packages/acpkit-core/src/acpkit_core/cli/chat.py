"""`acpkit chat` (a terminal ACP client) and `acpkit sessions` (list an agent's stored sessions).

Exit codes of a one-shot chat (`-p`): 0 `end_turn`, 3 `max_tokens`, 4 `max_turn_requests`,
5 `refusal`, 130 `cancelled`; 1 when the agent answered with an error or died mid-turn; 2 for a bad
command line or an agent that could not start (for `acpkit run`, a target that does not import).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from acp import RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import InitializeResponse, PermissionOption, PromptResponse, RequestPermissionResponse, ToolCallUpdate
from rich.console import Console

from . import ask
from .attach import ContentBlock, build_prompt
from .local import LocalClient
from .spawn import AgentExited, agent_command, agent_env, connect, initialize, json_observer
from .view import ChatView

__all__ = ["EXIT_CODES", "chat_main", "sessions_main"]

EXIT_CODES: dict[str, int] = {"end_turn": 0, "max_tokens": 3, "max_turn_requests": 4, "refusal": 5, "cancelled": 130}
"""Exit code of `acpkit chat -p` for each stop reason."""
EXIT_ERROR = 1
"""The agent answered the prompt with an error, or the connection broke."""
EXIT_USAGE = 2
"""Bad command line, or the agent could not start."""


@dataclass
class _Turn:
    """Ctrl-C state of the running turn."""

    session_id: str
    task: asyncio.Future[PromptResponse]
    cancel_sent: bool = False
    quit: bool = False
    cancel_task: asyncio.Future[None] | None = None


class Chat:
    """One `acpkit chat` run: a connection, a session, the view, and the answers to permission requests."""

    def __init__(self, args: argparse.Namespace, cwd: Path) -> None:
        self.args = args
        self.cwd = cwd
        self.interactive = args.prompt is None
        out = Console(stderr=True) if args.json else Console(highlight=False, soft_wrap=True)
        self.view = ChatView(out, show_thoughts=not args.no_thoughts)
        if args.json:
            self.view.console.quiet = True
        self.questions = Console(stderr=True, highlight=False)
        self.auto: ask.AutoAnswer = "yes" if args.yes else "no" if args.no else None
        self.reader: ask.LineReader | None = None
        self.conn: ClientSideConnection | None = None
        self.turn: _Turn | None = None
        self.disconnected = False
        self.client = LocalClient(
            cwd, on_update=lambda _sid, update: self.view.update(update), on_permission=self.permit
        )

    # --- permissions --------------------------------------------------------------------------

    async def permit(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """Answer `session/request_permission`: automatically, on the terminal, or from stdin."""
        turn = self.turn
        if turn is not None and turn.cancel_sent:
            return ask.cancelled()
        if self.auto is not None:
            option = ask.choose_option(options, self.auto)
            how = "--yes" if self.auto == "yes" else "--no"
        else:
            asker = ChatView(self.questions) if self.args.json else self.view
            asker.permission_question(tool_call, options)
            if self.reader is not None or sys.stdin.isatty():
                self.reader = self.reader or ask.LineReader(
                    lambda: self.view.commands, self.cwd, questions_on_stderr=self.args.json
                )
                option = await self.reader.ask(options)
                self._restore_sigint()
                if option is None:  # Ctrl-C on the question cancels the turn
                    self._on_sigint()
                    return ask.cancelled()
            else:
                option = await ask.ask_stdin(options)
            how = "answered"
        if option is None:
            self.view.note(f"permission: no option to pick for {how}; cancelled", style="yellow")
            return ask.cancelled()
        self.view.note(f"permission {how}: {option.name} ({option.kind})", style="bold")
        return ask.selected(option)

    # --- Ctrl-C ----------------------------------------------------------------------------

    def _on_sigint(self) -> None:
        turn = self.turn
        if turn is None:
            return
        if not turn.cancel_sent and self.conn is not None:
            turn.cancel_sent = True
            self.view.note("cancelling the turn (Ctrl-C again to quit)", style="yellow")
            turn.cancel_task = asyncio.ensure_future(self.conn.cancel(session_id=turn.session_id))
            return
        turn.quit = True
        turn.task.cancel()

    def _restore_sigint(self) -> None:
        if self.turn is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._on_sigint)

    # --- turns -------------------------------------------------------------------------------

    async def run_turn(self, session_id: str, blocks: list[ContentBlock]) -> int | None:
        """Send one prompt and show it; the exit code for its stop reason, `None` when the user quit."""
        assert self.conn is not None
        task = asyncio.ensure_future(self.conn.prompt(session_id=session_id, prompt=blocks))
        self.turn = _Turn(session_id=session_id, task=task)
        self._restore_sigint()
        try:
            response = await task
        except asyncio.CancelledError:
            self.view.note("quit", style="yellow")
            return None
        except RequestError as exc:
            self.view.note(f"the agent failed the turn: {exc} {json.dumps(exc.data) if exc.data else ''}", style="red")
            return EXIT_ERROR
        except ConnectionError:
            self.view.note("the agent closed the connection", style="red")
            self.disconnected = True
            return EXIT_ERROR
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)
            self.turn = None
        self.view.turn_end(response)
        return EXIT_CODES.get(response.stop_reason, EXIT_ERROR)

    async def open_session(self, init: InitializeResponse) -> str:
        """A new session, or the stored one named by `--session` (loaded with history, or resumed)."""
        assert self.conn is not None
        caps = init.agent_capabilities
        session_id: str | None = self.args.session
        if session_id is None:
            new = await self.conn.new_session(cwd=str(self.cwd), mcp_servers=[])
            session_id = new.session_id
        else:
            can_resume = bool(caps and caps.session_capabilities and caps.session_capabilities.resume is not None)
            can_load = bool(caps and caps.load_session)
            if can_load and (self.interactive or not can_resume):
                await self.conn.load_session(cwd=str(self.cwd), session_id=session_id, mcp_servers=[])
                self.view.end_line()
            elif can_resume:
                await self.conn.resume_session(cwd=str(self.cwd), session_id=session_id, mcp_servers=[])
            else:
                raise RequestError.invalid_params({"reason": "this agent cannot load or resume sessions"})
        if self.args.mode:
            await self.conn.set_session_mode(session_id=session_id, mode_id=self.args.mode)
        return session_id

    async def main(self) -> int:
        """Start the agent, open the session, run one prompt or the interactive loop."""
        observers = [json_observer(sys.stdout)] if self.args.json else None
        try:
            async with connect(
                agent_command(self.args), self.client, cwd=self.cwd, observers=observers, env=agent_env(self.args)
            ) as (
                conn,
                process,
            ):
                self.conn = conn
                init = await initialize(conn, process)
                try:
                    session_id = await self.open_session(init)
                except RequestError as exc:
                    self.view.end_line()
                    print(f"acpkit chat: cannot open the session: {exc}", file=sys.stderr)
                    return EXIT_USAGE
                caps = init.agent_capabilities.prompt_capabilities if init.agent_capabilities else None
                if not self.interactive:
                    prompt = build_prompt(self.args.prompt, cwd=self.cwd, caps=caps)
                    for note in prompt.notes:
                        self.view.note(note)
                    code = await self.run_turn(session_id, prompt.blocks)
                    return EXIT_CODES["cancelled"] if code is None else code
                return await self.loop(session_id, init)
        except AgentExited as exc:
            print(f"acpkit chat: {exc}", file=sys.stderr)
            return EXIT_USAGE

    async def loop(self, session_id: str, init: InitializeResponse) -> int:
        """The interactive loop: read a line, send it, show the turn; Ctrl-D or /quit ends it."""
        info = init.agent_info
        name = f"{info.title or info.name} {info.version}" if info else "agent"
        self.view.note(f"connected to {name} · session {session_id} · Ctrl-D to quit, Ctrl-C cancels a turn")
        self.reader = self.reader or ask.LineReader(lambda: self.view.commands, self.cwd)
        caps = init.agent_capabilities.prompt_capabilities if init.agent_capabilities else None
        while True:
            try:
                line = await self.reader.read_line()
            except (EOFError, KeyboardInterrupt):
                return 0
            line = line.strip()
            if not line:
                continue
            if line in {"/quit", "/exit"} and not any(c.name == line[1:] for c in self.view.commands):
                return 0
            prompt = build_prompt(line, cwd=self.cwd, caps=caps)
            for note in prompt.notes:
                self.view.note(note)
            code = await self.run_turn(session_id, prompt.blocks)
            if code is None:  # the user quit with a second Ctrl-C
                return 0
            if self.disconnected:
                return EXIT_ERROR


def _check_target(args: argparse.Namespace, command: str) -> str | None:
    if args.agent and args.target:
        return f"acpkit {command}: give either TARGET or --agent, not both"
    if not args.agent and not args.target:
        return f"acpkit {command}: give a TARGET (module, module:attr, path/to/file.py[:attr]) or --agent CMD"
    return None


def chat_main(args: argparse.Namespace) -> int:
    """Run `acpkit chat`; returns the exit code."""
    problem = _check_target(args, "chat")
    if problem is None and args.json and args.prompt is None:
        problem = "acpkit chat: --json needs -p PROMPT (it prints one turn's transcript)"
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    cwd = Path(args.cwd).resolve() if args.cwd else Path.cwd()
    try:
        return asyncio.run(Chat(args, cwd).main())
    except KeyboardInterrupt:
        return EXIT_CODES["cancelled"]


async def _list_sessions(args: argparse.Namespace, cwd: Path) -> int:
    client = LocalClient(cwd, on_update=lambda _sid, _u: None, on_permission=_refuse)
    try:
        async with connect(agent_command(args), client, cwd=cwd, env=agent_env(args)) as (conn, process):
            init = await initialize(conn, process)
            caps = init.agent_capabilities
            if not (caps and caps.session_capabilities and caps.session_capabilities.list is not None):
                print(
                    "acpkit sessions: this agent does not list sessions (no sessionCapabilities.list)", file=sys.stderr
                )
                return EXIT_USAGE
            rows: list[dict[str, str | None]] = []
            cursor: str | None = None
            while True:
                page = await conn.list_sessions(cwd=str(cwd), cursor=cursor)
                rows += [
                    {"sessionId": s.session_id, "cwd": s.cwd, "title": s.title, "updatedAt": s.updated_at}
                    for s in page.sessions
                ]
                cursor = page.next_cursor
                if not cursor:
                    break
    except AgentExited as exc:
        print(f"acpkit sessions: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    if not rows:
        print(f"no stored sessions for {cwd}", file=sys.stderr)
        return 0
    for row in rows:
        print(f"{row['sessionId']}  {row['updatedAt'] or '-':<25}  {row['title'] or '(untitled)'}")
    return 0


async def _refuse(_sid: str, _tool: ToolCallUpdate, _options: list[PermissionOption]) -> RequestPermissionResponse:
    return ask.cancelled()


def sessions_main(args: argparse.Namespace) -> int:
    """Run `acpkit sessions`; returns the exit code."""
    problem = _check_target(args, "sessions")
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    cwd = Path(args.cwd).resolve() if args.cwd else Path.cwd()
    try:
        return asyncio.run(_list_sessions(args, cwd))
    except KeyboardInterrupt:
        return EXIT_CODES["cancelled"]
