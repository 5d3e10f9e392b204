"""`acpkit serve TARGET`: serve an agent over WebSocket and Streamable HTTP on `/acp`.

The target is resolved exactly as `acpkit run` resolves it; then one ACP agent is made per remote
connection (see [`RemoteServer`][acpkit_core.remote.RemoteServer]). Needs the `serve` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import UserError
from .run import (
    EXIT_TARGET,
    agent_telemetry,
    build_agent,
    configure_cli_logging,
    limit_flags,
    ready_agent_refusal,
    telemetry_from_flags,
    telemetry_note,
)
from .target import TargetError, resolve_target

__all__ = ["serve_main"]

log = logging.getLogger("acpkit.cli")

SERVE_MODULES = frozenset({"starlette", "uvicorn", "websockets", "httpx", "h2"})
"""What the `serve` extra brings."""


def missing_extra(command: str, exc: ModuleNotFoundError) -> int:
    """Say how to install the `serve` extra when one of its modules is missing (re-raises other import errors)."""
    if (exc.name or "").split(".")[0] not in SERVE_MODULES:
        raise exc
    from .install import install_command

    print(
        f"acpkit {command}: the remote transport is not installed (no module named {exc.name!r}). "
        f"It is the `serve` extra of acpkit-core; install it with: {install_command('acpkit-core', extra='serve')}",
        file=sys.stderr,
    )
    return EXIT_TARGET


def _size(raw: str | None, flag: str) -> int | None:
    """A size flag's bytes (`None` when not given); raises `ValueError` naming the flag."""
    if raw is None:
        return None
    from ..limits import parse_size

    try:
        return parse_size(raw)
    except ValueError as exc:
        raise ValueError(f"{flag}: {exc}") from None


def serve_main(args: argparse.Namespace) -> int:
    """Run `acpkit serve` with parsed arguments; returns the exit code."""
    configure_cli_logging(args, "acpkit %(levelname)s: %(message)s")
    try:
        from ..remote import TOKENS_ENV, ServeOptions, Tokens
    except ModuleNotFoundError as exc:
        return missing_extra("serve", exc)
    cwd = Path(args.cwd).resolve() if args.cwd else Path.cwd()
    if args.cwd:
        try:
            os.chdir(cwd)
        except OSError as exc:
            print(f"acpkit serve: cannot use --cwd {args.cwd!r}: {exc.strerror}", file=sys.stderr)
            return EXIT_TARGET
    try:
        limits = limit_flags(args)
        inflight = _size(args.max_inflight_bytes, "--max-inflight-bytes")
        outbound = _size(args.outbound_buffer, "--outbound-buffer") or 64 * 1024
    except ValueError as exc:
        print(f"acpkit serve: {exc}", file=sys.stderr)
        return EXIT_TARGET
    command_argv: list[str] | None = getattr(args, "command_argv", None)
    if (command_argv is None) == (args.target is None):
        print(
            "acpkit serve: give a TARGET, or an ACP command after `--` (acpkit serve [FLAGS] -- CMD ARGS...); not both",
            file=sys.stderr,
        )
        return EXIT_TARGET
    try:
        options = ServeOptions(
            host=args.host,
            port=args.port,
            tokens=Tokens.load(args.token_file),
            allowed_origins=tuple(args.allow_origin or ()),
            max_connections=args.max_connections,
            max_sessions_per_connection=args.max_sessions,
            idle_seconds=args.idle_timeout,
            shutdown_grace_seconds=args.shutdown_grace,
            reconnect_grace_seconds=args.reconnect_grace,
            metrics_path=args.metrics_path or "/metrics",
            metrics_public=args.metrics_public,
            max_pending_connections=args.max_pending,
            handshake_seconds=args.handshake_timeout,
            max_inflight_bytes=inflight,
            outbound_buffer_bytes=outbound,
            max_connections_per_principal=args.max_connections_per_principal,
            max_sessions_per_principal=args.max_sessions_per_principal,
            max_turns_per_principal=args.max_turns_per_principal,
        )
        options.check()
        os.environ.pop(TOKENS_ENV, None)  # read: nothing the server starts (a child, a terminal) may see them
        if command_argv is not None:
            command = served_command(args, command_argv, cwd, limits)
            command.check()
        elif args.child_per is not None:
            raise UserError("--child-per applies to a served command only (acpkit serve --child-per session -- CMD)")
        else:
            return _serve_target(args, options, cwd, limits)
    except UserError as exc:
        print(f"acpkit serve: {exc}", file=sys.stderr)
        return EXIT_TARGET
    return asyncio.run(_serve(command, options, " ".join(command_argv)))


def _serve_target(args: argparse.Namespace, options: Any, cwd: Path, limits: dict[str, int]) -> int:
    from ..server import AcpAgent

    try:
        resolved = resolve_target(args.target, cwd=cwd)
        refusal = ready_agent_refusal(resolved, store=args.store, name=args.name, limits=limits)
        if refusal is not None:
            raise UserError(refusal)
        telemetry = telemetry_from_flags(args)
        agent = build_agent(resolved, name=args.name, store=args.store, limits=limits, telemetry=telemetry)
        note = telemetry_note(agent, telemetry)
        if note:
            print(f"acpkit serve: {note}", file=sys.stderr)
        if (args.metrics_path or args.metrics_public) and not _metered(agent):
            raise UserError("--metrics-path and --metrics-public need --otel (metrics on)")
        apply_host_tools(agent, args, cwd)
    except (UserError, TargetError) as exc:
        print(f"acpkit serve: {exc}", file=sys.stderr)
        return EXIT_TARGET
    except Exception as exc:  # building the agent failed: the developer's configuration is wrong
        log.debug("building the agent failed", exc_info=exc)
        print(f"acpkit serve: cannot serve {args.target}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_TARGET
    if not isinstance(agent, AcpAgent):
        print(
            f"acpkit serve: {resolved.name} is a ready ACP agent object, not an ACP Kit agent: it cannot be "
            "copied per connection. Serve the framework agent itself, or an AcpAgent, or serve its command "
            "(one process per connection): acpkit serve -- python agent.py",
            file=sys.stderr,
        )
        return EXIT_TARGET
    return asyncio.run(_serve(agent, options, resolved.name))


def _workspace(args: argparse.Namespace, cwd: Path) -> tuple[str, ...]:
    """The `--workspace` directories (absolute), `--cwd` when none; refused without `--host-tools server`."""
    given: list[str] = args.workspace or []
    if given and args.host_tools != "server":
        raise UserError("--workspace is the server's directories for --host-tools server: give that too")
    return tuple(str((cwd / d).resolve()) for d in given) or (str(cwd),)


def served_command(args: argparse.Namespace, argv: list[str], cwd: Path, limits: dict[str, int]) -> Any:
    """The `AgentCommand` of `acpkit serve -- CMD ARGS...`; flags that cannot apply to it are refused."""
    from ..remote import AgentCommand

    ignored = [flag for flag, given in (("--store", args.store), ("--name", args.name)) if given is not None]
    ignored += [
        flag
        for flag, option in (("--max-prompt-bytes", "max_prompt_bytes"), ("--max-turn-requests", "max_turn_requests"))
        if option in limits
    ]
    if telemetry_from_flags(args) is not None or args.metrics_path or args.metrics_public:
        ignored.append("--otel/--access-log/--metrics-*")
    if ignored:
        raise UserError(
            f"{', '.join(ignored)} cannot apply to a served command: it keeps its own store, name, limits and "
            "telemetry (acpkit serve -- CMD relays its messages)"
        )
    mode = args.host_tools or "client"
    workspace = _workspace(args, cwd)  # refuses --workspace without --host-tools server
    return AgentCommand(
        argv=argv,
        cwd=str(cwd),
        host_tools=mode,
        allowed_paths=workspace if mode == "server" else (),
        max_message_bytes=limits.get("max_message_bytes"),
        child_per=args.child_per or "connection",
    )


def apply_host_tools(agent: object, args: argparse.Namespace, cwd: Path) -> None:
    """`--host-tools` (and `--workspace`) on an ACP Kit agent; refused where its code chose otherwise."""
    from ..config import AgentOptions
    from ..runner.host_tools import check_host_tools

    options: object = getattr(agent, "options", None)
    if args.host_tools is None:
        if args.workspace:
            raise UserError("--workspace is the server's directories for --host-tools server: give that too")
        return
    assert isinstance(options, AgentOptions)
    if options.host_tools not in ("client", args.host_tools):
        raise UserError(
            f"--host-tools {args.host_tools} cannot apply: the agent's code sets host_tools={options.host_tools!r} "
            "(AgentOptions.host_tools); change it there, or leave it out so that the flag applies"
        )
    options.host_tools = args.host_tools
    if args.host_tools == "server" and (args.workspace or not options.allowed_paths):
        options.allowed_paths = (*options.allowed_paths, *_workspace(args, cwd))
    check_host_tools(options.host_tools, options.allowed_paths)


def _metered(agent: object) -> bool:
    telemetry = agent_telemetry(agent)
    return telemetry is not None and bool(telemetry.metrics)


async def _serve(agent: object, options: object, name: str) -> int:
    from ..remote import AgentCommand, RemoteServer, ServeOptions
    from ..remote.server import serve_signals
    from ..server import AcpAgent

    assert isinstance(agent, AcpAgent | AgentCommand) and isinstance(options, ServeOptions)
    try:
        server = RemoteServer(agent, options)
        await server.start()
    except (UserError, OSError) as exc:
        print(f"acpkit serve: {exc}", file=sys.stderr)
        return EXIT_TARGET
    http = server.url.replace("ws://", "http://", 1)
    print(f"acpkit serve: {server.resources()}", file=sys.stderr, flush=True)
    print(f"acpkit serve: serving {name} on {server.url} (Streamable HTTP: {http})", file=sys.stderr, flush=True)
    async with serve_signals(server):
        await server.wait()
    if server.telemetry is not None:
        await asyncio.to_thread(server.telemetry.shutdown)  # the last spans and metrics
    print("acpkit serve: stopped", file=sys.stderr, flush=True)
    return 0
