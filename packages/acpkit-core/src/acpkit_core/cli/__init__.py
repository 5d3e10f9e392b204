"""The `acpkit` command: `run` an agent for an editor, `chat` in a terminal, list `sessions`, `render` a prompt.

Imports are lazy on purpose: `acpkit run` is what an editor starts, and it must answer `initialize`
without loading the terminal libraries (`rich`, `prompt_toolkit`) or any adapter it does not use.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

__all__ = ["build_parser", "main"]

EXIT_USAGE = 2
"""Exit code for a bad command line or a target that cannot be loaded."""


def _add_target_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cwd", metavar="DIR", help="directory to import the target from and to use as the working directory"
    )
    parser.add_argument(
        "--store",
        metavar="PATH|memory",
        help="session store: a SQLite file, or 'memory' (default: the state directory's sessions.sqlite3)",
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level for stderr (default: WARNING)",
    )
    parser.add_argument("--name", help="agent name announced in initialize (agentInfo.name)")


def _add_client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show the agent's stderr (logs, tracebacks) in the terminal; it always goes to a log file",
    )
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=float,
        default=60.0,
        help="how long to wait for the agent to answer initialize (default: 60)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for `acpkit` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="acpkit", description="Serve Python agents to editors over the Agent Client Protocol."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="serve an agent over stdio (what an editor starts)",
        description="Serve TARGET over stdio. TARGET is module, module:attr, or path/to/file.py[:attr].",
    )
    run.add_argument("target", metavar="TARGET")
    _add_target_options(run)

    chat = sub.add_parser(
        "chat",
        help="talk to an agent in the terminal",
        description="A terminal ACP client. Spawns `acpkit run TARGET`, or any ACP agent with --agent.",
    )
    chat.add_argument("target", metavar="TARGET", nargs="?", help="what `acpkit run` serves (omit with --agent)")
    chat.add_argument("--agent", metavar="CMD", help='run this agent command instead (e.g. --agent "npx some-agent")')
    chat.add_argument("-p", "--prompt", help="send one prompt, print the turn, exit (exit code from the stop reason)")
    answer = chat.add_mutually_exclusive_group()
    answer.add_argument("--yes", action="store_true", help="allow every permission request (allow_once)")
    answer.add_argument("--no", action="store_true", help="reject every permission request (reject_once)")
    chat.add_argument("--no-thoughts", action="store_true", help="hide the agent's thoughts")
    chat.add_argument("--json", action="store_true", help="print the raw ACP transcript as JSON lines")
    chat.add_argument("--session", metavar="ID", help="resume a stored session")
    chat.add_argument("--mode", metavar="MODE", help="switch the session to this mode first")
    _add_client_options(chat)
    _add_target_options(chat)

    sessions = sub.add_parser("sessions", help="list an agent's stored sessions (session/list)")
    sessions.add_argument("target", metavar="TARGET", nargs="?")
    sessions.add_argument("--agent", metavar="CMD", help="ask this agent command instead")
    sessions.add_argument("--json", action="store_true", help="print JSON")
    _add_client_options(sessions)
    _add_target_options(sessions)

    render = sub.add_parser("render", help="print the IR and both renderings of a prompt file")
    render.add_argument("file", metavar="FILE", help="a JSON file holding a list of ACP content blocks")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `acpkit` console script; returns the process exit code."""
    args = build_parser().parse_args(argv)
    command: str = args.command
    if command == "run":
        from .run import run_main

        return run_main(args)
    if command == "chat":
        from .chat import chat_main

        return chat_main(args)
    if command == "sessions":
        from .chat import sessions_main

        return sessions_main(args)
    return _render(args.file)


def _render(path: str) -> int:
    from .render import render_main

    return render_main(path)
