"""The `acpkit` command: `run` an agent for an editor, `serve` it remotely, `chat` in a terminal, list
`sessions`, `bridge` an editor to a remote agent, `render` a prompt, `install` an adapter from a clone.

Imports are lazy on purpose: `acpkit run` is what an editor starts, and it must answer `initialize`
without loading the terminal libraries (`rich`, `prompt_toolkit`) or any adapter it does not use.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, cast

__all__ = ["build_parser", "main"]

EXIT_USAGE = 2
"""Exit code for a bad command line or a target that cannot be loaded."""


def _add_target_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cwd", metavar="DIR", help="directory to import the target from and to use as the working directory"
    )
    parser.add_argument(
        "--store",
        metavar="PATH|URL|memory",
        help="session store: a SQLite file, a postgresql:// URL (shared by replicas; the postgres extra), "
        "or 'memory' (default: the state directory's sessions.sqlite3). A ready AcpAgent takes it only if "
        "its code sets no store (AgentOptions.store); otherwise it exits 2",
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level for stderr (default: WARNING)",
    )
    parser.add_argument(
        "--name",
        help="agent name announced in initialize (agentInfo.name). A ready AcpAgent takes it only if its "
        "code names it nothing (AgentOptions.name); otherwise it exits 2",
    )


def _add_message_limits(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-message-bytes",
        metavar="SIZE",
        help="largest JSON-RPC message accepted, e.g. 64MiB (default: $ACPKIT_MAX_MESSAGE_BYTES, else 32MiB). "
        "ACP Kit agents (framework agents and AcpAgent); not an agent written on the raw SDK",
    )
    parser.add_argument(
        "--max-prompt-bytes",
        metavar="SIZE",
        help="largest prompt accepted, e.g. 32MiB (default: $ACPKIT_MAX_PROMPT_BYTES, else 16MiB). "
        "ACP Kit agents, as --max-message-bytes",
    )
    parser.add_argument(
        "--max-turn-requests",
        metavar="N",
        help="most model requests one turn may make (default: $ACPKIT_MAX_TURN_REQUESTS, else 1000). "
        "ACP Kit agents, as --max-message-bytes",
    )


_TARGET_FLAGS = """which flags apply to which targets:
  a framework agent (pydantic-ai Agent, LangGraph graph)   every flag
  a ready AcpAgent (create_acp_agent(...), AcpAgent(...))   --store and --name only where its code sets
                                                            none (AgentOptions.store, .name); given for
                                                            one whose code sets them: exit 2
  an agent written on the raw ACP SDK                       none of --store, --name, --max-message-bytes,
                                                            --max-prompt-bytes, --max-turn-requests
                                                            (exit 2 if given)"""


def _add_telemetry_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--otel",
        action="store_true",
        help="OpenTelemetry traces and metrics, configured by the standard OTEL_* variables (default "
        "exporter: otlp); needs the otel extra. ACP Kit agents only",
    )
    parser.add_argument(
        "--access-log",
        action="store_true",
        help="one log line per connection and per turn (the acpkit.access logger), whatever --log-level says",
    )
    parser.add_argument(
        "--log-format",
        choices=["text", "json"],
        default="text",
        help="stderr log lines as text or as one JSON object each (default: text)",
    )


_EXAMPLES = {
    "acpkit": """examples:
  acpkit run my_agent:agent                  serve an agent to an editor over stdio
  acpkit chat examples/pydantic_agent.py     talk to it in the terminal
  acpkit sessions my_agent:agent             list its stored sessions
  acpkit render prompt.json                  see how a prompt reaches each framework
  acpkit serve my_agent:agent                serve it over WebSocket / Streamable HTTP on /acp
  acpkit bridge ws://host:8000/acp           let a stdio-only editor use a remote agent
  acpkit install pydantic ../my-project      (from a clone) install an adapter and the chat into a project

Run `acpkit COMMAND --help` for a command's options. Without a command, acpkit prints this help
and exits with status 2.""",
    "run": """examples:
  acpkit run my_agent:agent                  the object named `agent` in my_agent.py
  acpkit run path/to/agent.py                the one agent that file defines
  acpkit run my_agent:agent --store memory   keep no sessions on disk

Editors start this command (see the Zed, JetBrains, Toad and acpx pages). stdout carries JSON-RPC
only; messages go to stderr. Exit status 2 when the target cannot be imported or served.

"""
    + _TARGET_FLAGS,
    "chat": """examples:
  acpkit chat examples/pydantic_agent.py
  acpkit chat my_agent:agent -p "Summarise README.md" --yes
  acpkit chat --agent "npx @zed-industries/claude-code-acp"
  acpkit chat --url ws://127.0.0.1:8000/acp --token-file tokens.txt

Needs the terminal UI extra: acpkit-core[cli].""",
    "sessions": """examples:
  acpkit sessions my_agent:agent
  acpkit sessions my_agent:agent --json
  acpkit sessions --agent "acpkit run my_agent:agent"

Needs the terminal UI extra: acpkit-core[cli].""",
    "serve": """examples:
  acpkit serve my_agent:agent                          ws://127.0.0.1:8000/acp (and http://...)
  acpkit serve my_agent:agent --host 0.0.0.0 --token-file tokens.txt
  acpkit serve my_agent:agent --port 0                 any free port (printed on stderr)
  acpkit serve my_agent:agent --otel --access-log --log-format json
                                                       traces, metrics on /metrics, JSON log lines
  acpkit serve --port 0 -- node agent.js               any stdio ACP command: one child per connection
  acpkit serve --child-per session -- node agent.js    ... or one child per session
  acpkit serve --host-tools server --cwd /srv/repo my_agent:agent
                                                       file and terminal tools act on /srv/repo

Listens on loopback unless --host says otherwise; beyond loopback it needs --token-file (or
$ACPKIT_SERVE_TOKENS). SIGTERM drains: running turns get --shutdown-grace seconds. Needs the
serve extra: acpkit-core[serve]. The target must be a framework agent or an AcpAgent (one copy
is made per connection); any other ACP agent (another language, the raw SDK) is served as a
command after `--`: each connection starts its own child process, stopped with the connection.

"""
    + _TARGET_FLAGS,
    "bridge": """examples:
  acpkit bridge ws://127.0.0.1:8000/acp
  acpkit bridge wss://agents.example.com/acp --token-file ~/.config/acp-token

What an editor starts when the agent is remote: stdio on one side, the remote transport on the
other. Needs the serve extra: acpkit-core[serve].""",
    "install": """examples:
  uv run acpkit install pydantic /path/to/my-project          in the clone: a uv project (made if empty)
  uv run acpkit install langchain /path/to/my-project --pip   the project's .venv, with pip
  uvx --from /path/to/acpkit/packages/acpkit-core acpkit install pydantic .

Builds the wheels of this clone into PROJECT/wheels and installs ADAPTER[cli] from them (with uv, or
pip with --pip); a uv project's pyproject.toml gets [tool.uv] find-links = ["wheels"], so later
`uv lock` and `uv sync` find them. Needs uv.""",
    "render": """examples:
  acpkit render prompt.json
  echo '[{"type": "text", "text": "hi"}]' | acpkit render -""",
}


def _version() -> str:
    """`acpkit 2.0.0 (adapters: langchain-acp 2.0.0, pydantic-acp 2.0.0)`, read from metadata only."""
    from importlib.metadata import entry_points

    from acpkit_core.cli.adapters import ENTRY_POINT_GROUP

    from .install import core_version

    adapters = sorted(
        {f"{ep.dist.name} {ep.dist.version}" for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.dist is not None}
    )
    return f"acpkit {core_version()} (adapters: {', '.join(adapters) or 'none installed'})"


class _VersionAction(argparse.Action):
    """`--version`, computed only when asked (reading entry points costs `acpkit run` start-up time)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(_version())
        parser.exit()


def _subparser(sub: Any, name: str, *, help: str, description: str) -> argparse.ArgumentParser:
    """A subcommand with a wrapped description and its examples (`sub` is argparse's private subparsers action)."""
    return cast(
        argparse.ArgumentParser,
        sub.add_parser(
            name,
            help=help,
            description=textwrap.fill(description, width=100),
            epilog=_EXAMPLES[name],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        ),
    )


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


def _add_url_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", metavar="URL", help="a remote agent (acpkit serve): ws://host:port/acp, or http:// for Streamable HTTP"
    )
    parser.add_argument("--token-file", metavar="FILE", help="file holding the bearer token for --url")


def _add_serve_limits(serve: argparse.ArgumentParser) -> None:
    limits = serve.add_argument_group("limits and quotas (see 'Operating it' in docs/remote.md)")
    limits.add_argument(
        "--max-connections", type=int, default=1000, metavar="N", help="connections at once; then 503 (default: 1000)"
    )
    limits.add_argument(
        "--max-sessions", type=int, default=32, metavar="N", help="open sessions per connection (default: 32)"
    )
    limits.add_argument(
        "--idle-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="close connections idle this long, and clients that take nothing this long (their turns are "
        "cancelled) (default: 600)",
    )
    limits.add_argument(
        "--max-pending",
        type=int,
        default=1024,
        metavar="N",
        help="TCP connections still sending their request head: past it, those waiting 2 s or more are "
        "closed, the oldest first (default: 1024)",
    )
    limits.add_argument(
        "--handshake-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="time for a TCP connection's request head and WebSocket upgrade (default: 10)",
    )
    limits.add_argument(
        "--max-inflight-bytes",
        metavar="SIZE",
        help="client messages received and not yet handled, across all connections; past it a message is "
        "refused unread (default: 4 x --max-message-bytes, 128MiB)",
    )
    limits.add_argument(
        "--outbound-buffer",
        metavar="SIZE",
        help="bytes waiting for one client past which the agent waits for it; also each socket's kernel "
        "send buffer (default: 64KiB)",
    )
    limits.add_argument(
        "--max-connections-per-principal",
        type=int,
        default=100,
        metavar="N",
        help="connections one token's principal may hold; then 429 (default: 100)",
    )
    limits.add_argument(
        "--max-sessions-per-principal",
        type=int,
        default=200,
        metavar="N",
        help="open sessions one principal may hold across its connections (default: 200)",
    )
    limits.add_argument(
        "--max-turns-per-principal",
        type=int,
        default=20,
        metavar="N",
        help="turns one principal may run at once (default: 20)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for `acpkit` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="acpkit",
        description="Serve Python agents to editors over the Agent Client Protocol.",
        epilog=_EXAMPLES["acpkit"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction, help="print the installed versions and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = _subparser(
        sub,
        "run",
        help="serve an agent over stdio (what an editor starts)",
        description="Serve TARGET over stdio. TARGET is module, module:attr, or path/to/file.py[:attr].",
    )
    run.add_argument("target", metavar="TARGET")
    _add_target_options(run)
    _add_message_limits(run)
    _add_telemetry_options(run)
    run.add_argument(
        "--default-store",
        metavar="PATH|URL|memory",
        help="the store when --store is not given, for an agent acpkit builds (a ready ACP agent keeps its own, "
        "silently: what a program that starts any target passes)",
    )

    chat = _subparser(
        sub,
        "chat",
        help="talk to an agent in the terminal",
        description="A terminal ACP client. Spawns `acpkit run TARGET`, or any ACP agent with --agent.",
    )
    chat.add_argument("target", metavar="TARGET", nargs="?", help="what `acpkit run` serves (omit with --agent)")
    chat.add_argument("--agent", metavar="CMD", help='run this agent command instead (e.g. --agent "npx some-agent")')
    _add_url_options(chat)
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

    sessions = _subparser(
        sub,
        "sessions",
        help="list an agent's stored sessions (session/list)",
        description="List the sessions an agent has stored (ACP session/list), newest first: id, title, "
        "directory and last update. Resume one with `acpkit chat TARGET --session ID`.",
    )
    sessions.add_argument("target", metavar="TARGET", nargs="?")
    sessions.add_argument("--agent", metavar="CMD", help="ask this agent command instead")
    _add_url_options(sessions)
    sessions.add_argument("--json", action="store_true", help="print JSON")
    _add_client_options(sessions)
    _add_target_options(sessions)

    serve = _subparser(
        sub,
        "serve",
        help="serve an agent over WebSocket and Streamable HTTP (remote ACP)",
        description="Serve TARGET (as `acpkit run` accepts it) on /acp: WebSocket and Streamable HTTP, "
        "GET /healthz for load balancers.",
    )
    serve.add_argument("target", metavar="TARGET", nargs="?", help="the agent; or `-- CMD ARGS...` for any ACP command")
    _add_target_options(serve)
    tools = serve.add_argument_group("files and terminals (see 'Who owns files and terminals' in docs/remote.md)")
    tools.add_argument(
        "--host-tools",
        choices=["client", "server", "off"],
        help="who serves the agent's file and terminal tools: the remote client (its capabilities passed "
        "through; the default), the server's own --workspace under the path policy, or no one",
    )
    tools.add_argument(
        "--workspace",
        metavar="DIR",
        action="append",
        help="with --host-tools server: a server directory the tools may use (repeat; default: --cwd, "
        "else the current directory)",
    )
    serve.add_argument(
        "--child-per",
        choices=["connection", "session"],
        help="with -- CMD: one child process per connection (the default), or one more per session, "
        "stopped when the session closes",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0 picks a free one)")
    serve.add_argument(
        "--token-file",
        metavar="FILE",
        help="bearer tokens, one `principal:token` (or bare token) per line (default: $ACPKIT_SERVE_TOKENS)",
    )
    serve.add_argument(
        "--allow-origin",
        metavar="ORIGIN",
        action="append",
        help="a browser origin allowed to connect (repeat; '*' for any; default: none)",
    )
    serve.add_argument(
        "--shutdown-grace",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM, how long running turns may finish before they are cancelled (default: 30)",
    )
    serve.add_argument(
        "--reconnect-grace",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long a turn whose client dropped its connection waits for it to re-attach before it is "
        "cancelled (default: 60; 0: cancel at once)",
    )
    _add_telemetry_options(serve)
    serve.add_argument(
        "--metrics-path",
        metavar="PATH",
        help="where Prometheus scrapes the metrics, with --otel (default: /metrics)",
    )
    serve.add_argument(
        "--metrics-public",
        action="store_true",
        help="serve the metrics without a token (by default they need one, like /acp)",
    )
    _add_message_limits(serve)
    _add_serve_limits(serve)

    bridge = _subparser(
        sub,
        "bridge",
        help="connect stdio (an editor) to a remote agent URL",
        description="Relay ACP between stdin/stdout and the agent at URL (ws://, wss://, http://, https://).",
    )
    bridge.add_argument("url", metavar="URL")
    bridge.add_argument("--token-file", metavar="FILE", help="file holding the bearer token")

    install = _subparser(
        sub,
        "install",
        help="install an adapter and the terminal UI into a project, from this clone",
        description="Install ADAPTER (pydantic or langchain) of this clone's release, with the terminal UI "
        "(its cli extra), into PROJECT (default: the current directory). Run it from a clone of the repository.",
    )
    install.add_argument(
        "adapter", metavar="ADAPTER", choices=["pydantic", "langchain", "pydantic-acp", "langchain-acp"]
    )
    install.add_argument("project", metavar="PROJECT", nargs="?", default=".")
    install.add_argument(
        "--pip", action="store_true", help="install into PROJECT/.venv with pip (made if missing) instead of uv add"
    )

    render = _subparser(
        sub,
        "render",
        help="print the IR and both renderings of a prompt file",
        description="Parse FILE as an ACP prompt and print its IR, then what each installed adapter hands "
        "its framework (the pydantic-ai user prompt, the LangChain HumanMessage).",
    )
    render.add_argument(
        "file", metavar="FILE", help="a JSON file holding a list of ACP content blocks (or a request); - for stdin"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `acpkit` console script; returns the process exit code."""
    _say_what_is_wrong_with_the_environment()
    parser = build_parser()
    argv, served_command = _served_command(list(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    command: str | None = args.command
    if command is None:
        parser.print_help()
        return EXIT_USAGE
    if command == "run":
        from .run import run_main

        return run_main(args)
    if command == "serve":
        from .serve import serve_main

        args.command_argv = served_command
        return serve_main(args)
    if command == "bridge":
        from .bridge import bridge_main

        return bridge_main(args.url, args.token_file)
    if command in ("chat", "sessions"):
        return _terminal_command(command, args)
    if command == "install":
        from .install_into import install_main

        return install_main(args)
    return _render(args.file)


def _served_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """`acpkit serve [FLAGS] -- CMD ARGS...`: the flags, and the command (`None` without `--`)."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    if first != "serve" or "--" not in argv:
        return argv, None
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1 :]


def _say_what_is_wrong_with_the_environment() -> None:
    """ACP Kit 1.x's `acpkit` package still installed, or (under `python -m`) the `acpkit` command gone."""
    from .legacy import command_problem, legacy_package_problem

    problem = command_problem() if sys.argv[0].endswith("__main__.py") else None
    problem = problem or legacy_package_problem()
    if problem:
        print(problem, file=sys.stderr)


TERMINAL_MODULES = frozenset({"rich", "prompt_toolkit", "pygments"})
"""What the `cli` extra brings; only `acpkit chat` and `acpkit sessions` import it."""


def _terminal_command(command: str, args: argparse.Namespace) -> int:
    try:
        from . import chat
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in TERMINAL_MODULES:
            raise
        from .install import install_command

        print(
            f"acpkit {command}: the terminal UI is not installed (no module named {exc.name!r}). "
            "It is the `cli` extra (of acpkit-core, pydantic-acp and langchain-acp); install it with: "
            f"{install_command('acpkit-core', extra='cli')}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return chat.chat_main(args) if command == "chat" else chat.sessions_main(args)


def _render(path: str) -> int:
    from .render import render_main

    return render_main(path)
