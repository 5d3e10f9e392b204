"""`acpkit run TARGET`: serve an agent over stdio for an editor.

Everything that can fail (the import, finding the object, building the ACP agent) happens before a
single byte of JSON-RPC is read, so an editor sees a clear message on stderr and exit code 2
instead of a hung connection. Nothing here imports the terminal libraries.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import logging
import os
import shlex
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from .target import Resolved, TargetError, resolve_target

__all__ = [
    "agent_telemetry",
    "build_agent",
    "configure_cli_logging",
    "limit_flags",
    "ready_agent_refusal",
    "run_main",
    "telemetry_from_flags",
    "telemetry_note",
]

log = logging.getLogger("acpkit.cli")

EXIT_TARGET = 2
"""Exit code when the target cannot be imported or served."""

SDK_READ_LIMIT = 50 << 20
"""The stdin reader's line limit for an agent built on the SDK alone (the SDK's own default)."""


def configure_cli_logging(args: argparse.Namespace, text_format: str) -> None:
    """stderr logging as `--log-level`, `--log-format` and `--access-log` say (secrets masked)."""
    from acpkit_core.telemetry.logs import configure_logging

    configure_logging(
        args.log_level,
        fmt=getattr(args, "log_format", "text"),
        access=getattr(args, "access_log", False),
        text_format=text_format,
    )


def telemetry_from_flags(args: argparse.Namespace) -> Any:
    """The `Telemetry` `--otel` / `--access-log` ask for, `None` without them."""
    otel: bool = getattr(args, "otel", False)
    access: bool = getattr(args, "access_log", False)
    if not otel and not access:
        return None
    from acpkit_core.telemetry import Telemetry

    return Telemetry(traces=otel, metrics=otel, logs=access)


DEFAULT_NAME = "acpkit-agent"
"""`AgentOptions.name` when the code names nothing (`--name` may then name a ready agent)."""


def build_agent(
    resolved: Resolved,
    *,
    name: str | None,
    store: str | None,
    limits: Mapping[str, int] | None = None,
    telemetry: Any = None,
) -> Any:
    """The ACP agent object serving `resolved` (a ready ACP agent is served as it is).

    On a ready ACP Kit agent, `limits` (`max_message_bytes`, `max_prompt_bytes`, `max_turn_requests`)
    apply, and so does `telemetry` when the agent has none of its own, and `store` and `name` where its
    code left them to the defaults (`ready_agent_refusal` refuses them where it did not).
    """
    limits = dict(limits or {})
    if resolved.adapter is None:
        options: Any = getattr(resolved.obj, "options", None)
        for field, value in limits.items():
            if hasattr(options, field):
                setattr(options, field, value)
        if telemetry is not None and hasattr(options, "telemetry") and options.telemetry is None:
            options.telemetry = telemetry
        if store is not None and options is not None and getattr(options, "store", "set") is None:
            options.store = store
        if name is not None and options is not None and getattr(options, "name", None) == DEFAULT_NAME:
            options.name = name
        return resolved.obj
    from acpkit_core.config import AgentOptions

    options = AgentOptions(
        store=store,
        max_message_bytes=limits.get("max_message_bytes"),
        max_prompt_bytes=limits.get("max_prompt_bytes"),
        telemetry=telemetry,
        max_turn_requests=limits.get("max_turn_requests"),
    )
    if name:
        options.name = name
    return resolved.adapter.create_agent(resolved.obj, options)


def ready_agent_refusal(
    resolved: Resolved, *, store: str | None, name: str | None, limits: Mapping[str, int]
) -> str | None:
    """Why a flag cannot take effect on `resolved`, or `None` when every flag given applies.

    A ready ACP Kit agent takes `--store` and `--name` where its code left them to the defaults
    (no `AgentOptions.store`, the default name) or set the same: where its code set something else,
    either flag would be ignored (replicas started that way would each keep a private store), so it
    is refused. An agent written on the raw SDK takes none of them, nor the size limits.
    """
    if resolved.adapter is not None:
        return None
    options: object = getattr(resolved.obj, "options", None)
    if not hasattr(options, "max_message_bytes"):
        given = [flag for flag, value in (("--store", store), ("--name", name)) if value is not None]
        given += ["the --max-* limits"] if limits else []
        if not given:
            return None
        return (
            f"{', '.join(given)} cannot apply to {resolved.name}: it is an ACP agent written on the raw SDK, "
            "not an ACP Kit agent, and keeps its own store, name and limits"
        )
    kept: list[str] = []
    own_store: object = getattr(options, "store", None)
    if store is not None and own_store is not None and own_store != store:
        kept.append("--store: its code sets another store (AgentOptions(store=...), create_acp_agent(store=...))")
    own_name: object = getattr(options, "name", DEFAULT_NAME)
    if name is not None and own_name not in (DEFAULT_NAME, name):
        kept.append(f"--name: its code names it {own_name!r} (AgentOptions(name=...))")
    if not kept:
        return None
    flags = " and ".join(k.partition(":")[0] for k in kept)
    return (
        f"{flags} cannot apply to {resolved.name}: it is a ready ACP agent, and {'; '.join(kept)}. Change it in "
        "that code (or leave it out there so that the flag applies), or serve the framework agent itself "
        "(a pydantic-ai Agent, a LangGraph graph) so that the flags build it"
    )


def limit_flags(args: argparse.Namespace) -> dict[str, int]:
    """The size limits given as flags (raises `ValueError` naming the flag)."""
    from acpkit_core.limits import MAX_MESSAGE_BYTES, MAX_PROMPT_BYTES, MAX_TURN_REQUESTS, parse_count, parse_size

    limits: dict[str, int] = {}
    for option, flag, parse in (
        (MAX_MESSAGE_BYTES.option, MAX_MESSAGE_BYTES.flag, parse_size),
        (MAX_PROMPT_BYTES.option, MAX_PROMPT_BYTES.flag, parse_size),
        (MAX_TURN_REQUESTS.option, MAX_TURN_REQUESTS.flag, parse_count),
    ):
        raw: str | None = getattr(args, option, None)
        if raw is not None:
            try:
                limits[option] = parse(raw)
            except ValueError as exc:
                raise ValueError(f"{flag}: {exc}") from None
    return limits


def _protect_stdout() -> None:
    with contextlib.suppress(ImportError):
        importlib.import_module("acpkit_core.server.process_io").protect_stdout()


def _stdin_is_terminal() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def _terminal_notice(name: str, target: str) -> str:
    process_io = importlib.import_module("acpkit_core.server.process_io")
    return process_io.terminal_notice(name, f"acpkit chat {shlex.quote(target)}")


async def _serve(agent: Any) -> None:
    """Serve with the core server when it is ours (it closes sessions at the end), else with the SDK."""
    serve_stdio: Callable[[Any], Awaitable[None]] | None = None
    with contextlib.suppress(ImportError):
        server = importlib.import_module("acpkit_core.server")
        if isinstance(agent, server.AcpAgent):
            serve_stdio = server.serve_stdio
    if serve_stdio is not None:
        await serve_stdio(agent)
        return
    import acp

    # our streams, not the SDK's: they read `</dev/null`, a closed stdin and regular files to their end too
    process_io = importlib.import_module("acpkit_core.server.process_io")
    reader, writer = await process_io.stdio_streams(limit=SDK_READ_LIMIT, stdout_fd=process_io.protect_stdout())
    await acp.run_agent(agent, writer, reader, use_unstable_protocol=True)


def run_main(args: argparse.Namespace) -> int:
    """Run `acpkit run` with parsed arguments; returns the exit code."""
    configure_cli_logging(args, "acpkit %(levelname)s %(name)s: %(message)s")
    cwd = Path(args.cwd).resolve() if args.cwd else Path.cwd()
    if args.cwd:
        try:
            os.chdir(cwd)
        except OSError as exc:
            print(f"acpkit run: cannot use --cwd {args.cwd!r}: {exc.strerror}", file=sys.stderr)
            return EXIT_TARGET
    try:
        limits = limit_flags(args)
    except ValueError as exc:
        print(f"acpkit run: {exc}", file=sys.stderr)
        return EXIT_TARGET
    # From here on a stray print() (the target's import included) goes to stderr, not the protocol.
    _protect_stdout()
    try:
        resolved = resolve_target(args.target, cwd=cwd)
    except TargetError as exc:
        log.debug("target resolution failed", exc_info=exc)
        print(f"acpkit run: {exc}", file=sys.stderr)
        return EXIT_TARGET
    refusal = ready_agent_refusal(resolved, store=args.store, name=args.name, limits=limits)
    if refusal is not None:
        print(f"acpkit run: {refusal}", file=sys.stderr)
        return EXIT_TARGET
    try:
        telemetry = telemetry_from_flags(args)
        store = args.store or getattr(args, "default_store", None)
        agent = build_agent(resolved, name=args.name, store=store, limits=limits, telemetry=telemetry)
        serving = agent_telemetry(agent)
        if serving is not None:
            serving.observer()  # the otel extra and the OTEL_* exporters, checked before serving
    except Exception as exc:  # building the agent failed: the developer's configuration is wrong
        log.debug("building the agent failed", exc_info=exc)
        print(f"acpkit run: cannot serve {resolved.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_TARGET
    print(f"acpkit run: serving {resolved.name} ({resolved.description})", file=sys.stderr)
    unused = telemetry_note(agent, telemetry)
    if unused:
        print(f"acpkit run: {unused}", file=sys.stderr)
    if _stdin_is_terminal() and not os.environ.get("ACPKIT_TERMINAL_LOGIN"):  # a terminal login runs below
        print(f"acpkit run: {_terminal_notice(resolved.name, args.target)}", file=sys.stderr)
        return 0
    try:
        asyncio.run(_serve(agent))
    except KeyboardInterrupt:
        return 130
    finally:
        if serving is not None:
            serving.shutdown()  # the last spans and metrics
    return 0


def agent_telemetry(agent: Any) -> Any:
    """The `Telemetry` an ACP Kit agent serves with (`None` for none, or for another kind of agent)."""
    return getattr(getattr(agent, "options", None), "telemetry", None)


def telemetry_note(agent: Any, telemetry: Any) -> str | None:
    """What to say when `--otel` / `--access-log` cannot apply as given."""
    if telemetry is None:
        return None
    own = agent_telemetry(agent)
    if not hasattr(getattr(agent, "options", None), "telemetry"):
        return "--otel and --access-log apply to ACP Kit agents only; this one is served as built"
    if own is not telemetry:
        return "the agent has its own AgentOptions.telemetry: --otel and --access-log are not used"
    return None
