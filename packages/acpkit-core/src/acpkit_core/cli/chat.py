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
import logging
import re
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from acp import RequestError
from acp.client.connection import ClientSideConnection
from acp.connection import StreamEvent
from acp.schema import (
    AvailableCommand,
    InitializeResponse,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    TerminalAuthMethod,
    ToolCallUpdate,
)
from rich.console import Console

from ..runner.rewind import REWIND_META_KEY
from . import ask
from .agent_streams import AgentLog
from .attach import ContentBlock, build_prompt
from .authenticate import TerminalLoginNeeded, run_terminal_login, with_authentication
from .local import LocalClient
from .rewind import rewind
from .sanitize import printable
from .session_list import list_all_sessions
from .spawn import AgentExited, agent_command, agent_env, connect, initialize, json_observer
from .view import ChatView

__all__ = ["EXIT_CODES", "chat_main", "sessions_main"]

EXIT_CODES: dict[str, int] = {"end_turn": 0, "max_tokens": 3, "max_turn_requests": 4, "refusal": 5, "cancelled": 130}
"""Exit code of `acpkit chat -p` for each stop reason."""
EXIT_ERROR = 1
"""The agent answered the prompt with an error, or the connection broke."""
EXIT_USAGE = 2
"""Bad command line, or the agent could not start."""

LOCAL_COMMANDS: dict[str, str] = {
    "help": "list the commands and keys",
    "quit": "end the chat (also /exit, Ctrl-D)",
    "exit": "end the chat",
    "rewind": "go back to before a prompt (a picker without N); the agent puts back the files it changed",
}
"""The chat's own slash commands; an agent command of the same name wins (except `/rewind`, which the
chat serves itself when the agent offers the rewind extension)."""


_COMMAND = re.compile(r"^/([A-Za-z0-9][\w-]*)(?:\s|$)")


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
        if args.json:
            out.quiet = True
        self.view = ChatView(out, show_thoughts=not args.no_thoughts)
        self.log = AgentLog(echo=self._echo_log if args.verbose else None)
        self.questions = Console(stderr=True, highlight=False)
        self.auto: ask.AutoAnswer = "yes" if args.yes else "no" if args.no else None
        self.reader: ask.LineReader | None = None
        self.conn: ClientSideConnection | None = None
        self.turn: _Turn | None = None
        self.disconnected = False
        self.client = LocalClient(
            cwd, on_update=lambda _sid, update: self.view.update(update), on_permission=self.permit
        )
        self.agent_name: str | None = None
        """The agent's `agentInfo.name`, once initialized."""
        self.rewinds = False
        """The agent serves the rewind extension (`agentCapabilities._meta["acpkit.rewind"]`)."""
        self._announced = False
        """The interactive banner was shown (before a loaded session's history)."""

    def _echo_log(self, line: str) -> None:
        """`--verbose`: the agent's stderr and the client's log, dimmed, on stderr."""
        self.questions.print(line, style="dim", markup=False, highlight=False)

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
            resume = self.view.pause()
            try:
                asker = ChatView(self.questions, fancy=False) if self.args.json else self.view
                asker.permission_question(tool_call, options)
                if self.reader is not None or sys.stdin.isatty():
                    self.reader = self.reader or self._line_reader()
                    option = await self.reader.ask(options)
                    self._restore_sigint()
                    if option is None:  # Ctrl-C on the question cancels the turn
                        self._on_sigint()
                        return ask.cancelled()
                else:
                    option = await ask.ask_stdin(options)
            finally:
                resume()
            how = "answered"
        if option is None:
            self.view.note(f"permission: no option to pick for {how}; cancelled", style="yellow")
            return ask.cancelled()
        self.view.note(f"permission {how}: {option.name} ({option.kind})", style="bold")
        return ask.selected(option)

    def _line_reader(self) -> ask.LineReader:
        return ask.LineReader(self.completions, self.cwd, questions_on_stderr=self.args.json)

    def completions(self) -> list[AvailableCommand]:
        """What `/` completes: the agent's commands, then the chat's own (unless the agent has one of that name)."""
        agent = list(self.view.commands)
        names = {c.name for c in agent}
        return agent + [AvailableCommand(name=n, description=d) for n, d in LOCAL_COMMANDS.items() if n not in names]

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
        errors_before = self.log.errors
        self._restore_sigint()
        self.view.waiting()
        try:
            response = await task
        except asyncio.CancelledError:
            self.view.idle()
            self.view.note("quit", style="yellow")
            return None
        except RequestError as exc:
            self.view.idle()
            self._failed(exc)
            return EXIT_ERROR
        except ConnectionError:
            self.view.idle()
            self.view.note("✗ the agent closed the connection" + self._see_log(), style="red")
            self.disconnected = True
            return EXIT_ERROR
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)
            self.turn = None
        command = len(blocks) == 1 and getattr(blocks[0], "type", None) == "text"
        self.view.turn_end(response, command=command and str(getattr(blocks[0], "text", "")).startswith("/"))
        if self.log.errors > errors_before and not self.args.verbose:
            self.view.note(f"the agent logged an error during the turn{self._see_log()}", style="yellow")
        return EXIT_CODES.get(response.stop_reason, EXIT_ERROR)

    def _failed(self, exc: RequestError) -> None:
        """One line for a turn the agent answered with a JSON-RPC error; its details go to the log."""
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else f"error {exc.code}"
        reason = _short_reason(exc.data)
        if reason and reason not in cause:
            cause = f"{cause}: {reason}"
        if exc.data is not None:
            self.log.write(
                f"session/prompt failed: {exc.code} {exc} {json.dumps(exc.data, default=str)}", source="chat"
            )
        self.view.note(f"✗ the turn failed: {cause}{self._see_log()}", style="red")

    def _see_log(self) -> str:
        return "" if self.args.verbose or not self.log.written else f" (details: {self.log.path})"

    async def open_session(self, init: InitializeResponse) -> str:
        """A new session, or the stored one named by `--session` (loaded with history, or resumed)."""
        assert self.conn is not None
        caps = init.agent_capabilities
        session_id: str | None = self.args.session
        if session_id is None:
            new = await self.conn.new_session(cwd=str(self.cwd), mcp_servers=[])
            session_id = new.session_id
        else:
            await self._warn_if_foreign(session_id, init)
            can_resume = bool(caps and caps.session_capabilities and caps.session_capabilities.resume is not None)
            can_load = bool(caps and caps.load_session)
            if can_load and (self.interactive or not can_resume):
                if self.interactive:  # the banner first: the replayed history shows under it
                    self._connected(init, session_id)
                await self.conn.load_session(cwd=str(self.cwd), session_id=session_id, mcp_servers=[])
                self.view.end_line()
            elif can_resume:
                await self.conn.resume_session(cwd=str(self.cwd), session_id=session_id, mcp_servers=[])
            else:
                raise RequestError.invalid_params({"reason": "this agent cannot load or resume sessions"})
        if self.args.mode:
            await self.conn.set_session_mode(session_id=session_id, mode_id=self.args.mode)
        return session_id

    async def _warn_if_foreign(self, session_id: str, init: InitializeResponse) -> None:
        """Warn when `--session` names a session another agent stored (when the agent lists sessions)."""
        assert self.conn is not None
        ours = init.agent_info.name if init.agent_info else None
        caps = init.agent_capabilities
        if ours is None or not (caps and caps.session_capabilities and caps.session_capabilities.list is not None):
            return
        try:
            rows = await list_all_sessions(self.conn, self.cwd)
        except RequestError:
            return
        row = next((r for r in rows if r["sessionId"] == session_id), None)
        owner = row.get("agent") if row else None
        if owner and owner != ours:
            self.view.note(
                f"warning: session {session_id} belongs to the agent {owner!r}, not {ours!r}; "
                "this agent may not understand its history",
                style="yellow",
            )

    async def main(self) -> int:
        """Start the agent, open the session, run one prompt or the interactive loop.

        An agent that can only be authenticated by a terminal login is stopped, its login runs in
        this terminal, and the chat connects again (once).
        """
        try:
            for attempt in (1, 2):
                outcome = await self._connect_and_chat(login_allowed=attempt == 1)
                if not isinstance(outcome, TerminalAuthMethod):
                    return outcome
                code = await self._terminal_login(outcome)
                if code != 0:
                    print(
                        f"acpkit chat: the login {outcome.name!r} did not succeed (exit code {code})", file=sys.stderr
                    )
                    return EXIT_USAGE
            return EXIT_USAGE  # pragma: no cover - the second attempt never asks for a login
        finally:
            self.view.idle()
            self.log.close()

    async def _terminal_login(self, method: TerminalAuthMethod) -> int:
        """Run a terminal login with the agent's own command, in this terminal."""
        self.view.idle()
        print(f"acpkit chat: the agent needs a login: {method.name} (in this terminal)", file=sys.stderr)
        code = await run_terminal_login(agent_command(self.args), method, cwd=self.cwd, env=agent_env(self.args))
        if code == 0:
            print("acpkit chat: logged in; connecting again", file=sys.stderr)
        return code

    async def _connect_and_chat(self, *, login_allowed: bool) -> int | TerminalAuthMethod:
        """One connection: the exit code, or the terminal method to run before connecting again."""
        observers = [json_observer(sys.stdout)] if self.args.json else None
        try:
            connection = _connection(self.args, self.client, cwd=self.cwd, log=self.log, observers=observers)
        except ValueError as exc:
            print(f"acpkit chat: cannot read --agent: {exc}", file=sys.stderr)
            return EXIT_USAGE
        # A terminal login needs a terminal to talk to the user in, and the agent's own program.
        terminal = login_allowed and not self.args.url and sys.stdin.isatty()
        try:
            async with connection as (conn, agent):
                self.conn = conn
                init = await self._start(conn, agent)
                try:
                    session_id = await with_authentication(
                        conn, init, lambda: self.open_session(init), terminal=terminal
                    )
                except TerminalLoginNeeded as needed:
                    return needed.method
                except RequestError as exc:
                    self.view.idle()
                    print(f"acpkit chat: cannot open the session: {printable(str(exc))}", file=sys.stderr)
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
            self.view.idle()
            print(f"acpkit chat: {exc}", file=sys.stderr)
            return EXIT_USAGE
        finally:
            self.view.idle()

    async def _start(self, conn: ClientSideConnection, agent: Any) -> InitializeResponse:
        """`initialize`, with a status line while the agent starts."""
        self.view.starting()
        try:
            init = await _initialize(conn, agent, timeout=self.args.timeout)
        finally:
            self.view.idle()
        self.agent_name = init.agent_info.name if init.agent_info else None
        meta = init.agent_capabilities.field_meta if init.agent_capabilities else None
        self.rewinds = isinstance(meta, dict) and REWIND_META_KEY in meta
        return init

    def _connected(self, init: InitializeResponse, session_id: str) -> None:
        """The banner of the interactive chat (once)."""
        info = init.agent_info
        name = f"{info.title or info.name} {info.version}" if info else "agent"
        self.view.note(f"connected to {name} · session {session_id} · /help for commands and keys, Ctrl-D to quit")
        self._announced = True

    async def loop(self, session_id: str, init: InitializeResponse) -> int:
        """The interactive loop: read a line, send it, show the turn; Ctrl-D or /quit ends it."""
        if not self._announced:
            self._connected(init, session_id)
        self.reader = self.reader or self._line_reader()
        caps = init.agent_capabilities.prompt_capabilities if init.agent_capabilities else None
        interrupted = False
        while True:
            try:
                line = await self.reader.read_line()
            except EOFError:
                return 0
            except KeyboardInterrupt:  # Ctrl-C clears the line; a second one in a row quits
                if interrupted:
                    return 0
                interrupted = True
                self.view.note("(Ctrl-C again or Ctrl-D to quit)")
                continue
            interrupted = False
            line = line.strip()
            if not line:
                continue
            command = _COMMAND.match(line)
            if command and command.group(1) == "rewind" and self.rewinds:
                await self.rewind(session_id, line[command.end() :].strip())
                continue
            if command and not any(c.name == command.group(1) for c in self.view.commands):
                if command.group(1) in {"quit", "exit"}:
                    return 0
                if command.group(1) == "help":
                    self.help()
                elif command.group(1) == "rewind":
                    self.view.note(
                        "this agent cannot go back to an earlier prompt (no rewind extension)", style="yellow"
                    )
                else:
                    self.view.note(
                        f"unknown command /{command.group(1)} (not sent; /help lists the commands)", style="yellow"
                    )
                continue
            prompt = build_prompt(line, cwd=self.cwd, caps=caps)
            for note in prompt.notes:
                self.view.note(note)
            code = await self.run_turn(session_id, prompt.blocks)
            if code is None:  # the user quit with a second Ctrl-C
                return 0
            if self.disconnected:
                return EXIT_ERROR

    async def rewind(self, session_id: str, arg: str) -> None:
        """`/rewind [N]` (see `cli/rewind.py`)."""
        assert self.conn is not None and self.reader is not None
        await rewind(self.conn, self.view, self.reader, session_id, arg)

    def help(self) -> None:
        """`/help`: the agent's commands, the chat's own, `@path` and the keys."""
        view = self.view
        if view.commands:
            view.note("the agent's commands:", style="bold")
            for c in view.commands:
                view.note(f"  /{c.name}  {c.description}", style="")
        view.note("the chat's commands:", style="bold")
        names = {c.name for c in view.commands} - ({"rewind"} if self.rewinds else set())
        for name, description in LOCAL_COMMANDS.items():
            if name == "rewind" and not self.rewinds:
                continue
            if name not in names:
                view.note(f"  /{name}{' [N]' if name == 'rewind' else ''}  {description}", style="")
        view.note("  @path  attach a file or directory (Tab completes)", style="")
        view.note(
            "keys: Ctrl-C cancels a turn (twice quits) or clears the line (twice quits) · Ctrl-D quits · Tab completes",
            style="dim",
        )


def _short_reason(data: object) -> str | None:
    """A one-line cause carried in a JSON-RPC error's `data` (`reason`, `message` or `detail`), if any."""
    text = ""
    if isinstance(data, dict):
        fields = cast(dict[object, object], data)
        text = next((v for k in ("reason", "message", "detail") if isinstance(v := fields.get(k), str)), "")
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else None


def _check_target(args: argparse.Namespace, command: str) -> str | None:
    given = [bool(args.target), bool(args.agent), bool(args.url)]
    if sum(given) > 1:
        return f"acpkit {command}: give one of TARGET, --agent or --url"
    if not any(given):
        return (
            f"acpkit {command}: give a TARGET (module, module:attr, path/to/file.py[:attr]), --agent CMD, "
            "or --url ws://host:port/acp"
        )
    if args.token_file and not args.url:
        return f"acpkit {command}: --token-file goes with --url"
    return None


def _connection(
    args: argparse.Namespace,
    client: LocalClient,
    *,
    cwd: Path,
    log: AgentLog,
    observers: list[Callable[[StreamEvent], None]] | None = None,
) -> contextlib.AbstractAsyncContextManager[tuple[ClientSideConnection, Any]]:
    """The connection to the agent: a remote `--url`, or a spawned agent process (`ValueError` for a bad --agent)."""
    if args.url:
        from .remote import connect_url

        return connect_url(args.url, client, token_file=args.token_file, observers=observers)
    return connect(agent_command(args), client, cwd=cwd, log=log, observers=observers, env=agent_env(args))


async def _initialize(conn: ClientSideConnection, agent: Any, *, timeout: float) -> InitializeResponse:
    from .remote import RemoteAgent, initialize_remote

    if isinstance(agent, RemoteAgent):
        return await initialize_remote(conn, agent, timeout=timeout)
    return await initialize(conn, agent, timeout=timeout)


def chat_main(args: argparse.Namespace) -> int:
    """Run `acpkit chat`; returns the exit code."""
    problem = _check_target(args, "chat")
    if problem is None and args.json and args.prompt is None:
        problem = "acpkit chat: --json needs -p PROMPT (it prints one turn's transcript)"
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    cwd = Path(args.cwd).resolve() if args.cwd else Path.cwd()
    chat = Chat(args, cwd)
    _log_to(chat.log)
    try:
        return asyncio.run(chat.main())
    except KeyboardInterrupt:
        return EXIT_CODES["cancelled"]


async def _list_sessions(args: argparse.Namespace, cwd: Path) -> int:
    client = LocalClient(cwd, on_update=lambda _sid, _u: None, on_permission=_refuse)
    log = AgentLog(echo=_echo_stderr if args.verbose else None)
    _log_to(log)
    try:
        async with _connection(args, client, cwd=cwd, log=log) as (conn, agent):
            init = await _initialize(conn, agent, timeout=args.timeout)
            caps = init.agent_capabilities
            if not (caps and caps.session_capabilities and caps.session_capabilities.list is not None):
                print(
                    "acpkit sessions: this agent does not list sessions (no sessionCapabilities.list)", file=sys.stderr
                )
                return EXIT_USAGE
            ours = init.agent_info.name if init.agent_info else None
            rows = await with_authentication(conn, init, lambda: list_all_sessions(conn, cwd))
    except RequestError as exc:
        print(f"acpkit sessions: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except AgentExited as exc:
        print(f"acpkit sessions: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        print(f"acpkit sessions: cannot read --agent: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        log.close()
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    if not rows:
        print(f"no stored sessions for {cwd}", file=sys.stderr)
        return 0
    width = max(len(row["agent"] or "-") for row in rows)
    for row in rows:
        title = printable(row["title"] or "(untitled)")
        owner = printable(row["agent"] or "-")
        session_id, updated = printable(row["sessionId"] or ""), printable(row["updatedAt"] or "-")
        print(f"{session_id}  {updated:<25}  {owner:<{width}}  {title}")
    foreign = sum(1 for row in rows if row["agent"] and ours and row["agent"] != ours)
    if foreign:
        print(
            f"{foreign} of these sessions belong to other agents than {ours!r}; "
            "resuming one with this agent starts without its history",
            file=sys.stderr,
        )
    return 0


def _echo_stderr(line: str) -> None:
    print(line, file=sys.stderr)


async def _refuse(_sid: str, _tool: ToolCallUpdate, _options: list[PermissionOption]) -> RequestPermissionResponse:
    return ask.cancelled()


class _LogHandler(logging.Handler):
    """The client's own log records (the SDK's included) go to the chat's log file, not the screen."""

    def __init__(self, log: AgentLog) -> None:
        super().__init__(logging.WARNING)
        self.log = log
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        for line in self.format(record).splitlines():
            self.log.write(line, source="chat")


def _log_to(log: AgentLog) -> None:
    logging.getLogger().addHandler(_LogHandler(log))


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
