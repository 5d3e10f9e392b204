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

__all__ = ["build_agent", "run_main"]

log = logging.getLogger("acpkit.cli")

EXIT_TARGET = 2
"""Exit code when the target cannot be imported or served."""

SDK_READ_LIMIT = 50 << 20
"""The stdin reader's line limit for an agent built on the SDK alone (the SDK's own default)."""


def _configure_logging(level: str) -> None:
    fmt = "acpkit %(levelname)s %(name)s: %(message)s"
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.WARNING), format=fmt)


def build_agent(
    resolved: Resolved, *, name: str | None, store: str | None, limits: Mapping[str, int] | None = None
) -> Any:
    """The ACP agent object serving `resolved` (a ready ACP agent is served as it is).

    `limits` (`max_message_bytes`, `max_prompt_bytes`) apply to a ready ACP Kit agent too.
    """
    limits = dict(limits or {})
    if resolved.adapter is None:
        options: object = getattr(resolved.obj, "options", None)
        for field, value in limits.items():
            if hasattr(options, field):
                setattr(options, field, value)
        return resolved.obj
    from acpkit_core.config import AgentOptions

    options = AgentOptions(
        store=store, max_message_bytes=limits.get("max_message_bytes"), max_prompt_bytes=limits.get("max_prompt_bytes")
    )
    if name:
        options.name = name
    return resolved.adapter.create_agent(resolved.obj, options)


def _limits(args: argparse.Namespace) -> dict[str, int]:
    """The size limits given as flags (raises `ValueError` naming the flag)."""
    from acpkit_core.limits import MAX_MESSAGE_BYTES, MAX_PROMPT_BYTES, parse_size

    limits: dict[str, int] = {}
    for limit in (MAX_MESSAGE_BYTES, MAX_PROMPT_BYTES):
        raw: str | None = getattr(args, limit.option, None)
        if raw is not None:
            try:
                limits[limit.option] = parse_size(raw)
            except ValueError as exc:
                raise ValueError(f"{limit.flag}: {exc}") from None
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
    _configure_logging(args.log_level)
    cwd = Path(args.cwd).resolve() if args.cwd else Path.cwd()
    if args.cwd:
        try:
            os.chdir(cwd)
        except OSError as exc:
            print(f"acpkit run: cannot use --cwd {args.cwd!r}: {exc.strerror}", file=sys.stderr)
            return EXIT_TARGET
    try:
        limits = _limits(args)
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
    try:
        store = args.store or getattr(args, "default_store", None)
        agent = build_agent(resolved, name=args.name, store=store, limits=limits)
    except Exception as exc:  # building the agent failed: the developer's configuration is wrong
        log.debug("building the agent failed", exc_info=exc)
        print(f"acpkit run: cannot serve {resolved.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_TARGET
    print(f"acpkit run: serving {resolved.name} ({resolved.description})", file=sys.stderr)
    given = [flag for flag, value in (("--store", args.store), ("--name", args.name)) if value]
    if resolved.adapter is None and given:
        verb = "does" if len(given) == 1 else "do"
        note = f"{' and '.join(given)} {verb} not apply to a ready ACP agent; it is served as built"
        print(f"acpkit run: {note}", file=sys.stderr)
    if limits and not hasattr(getattr(agent, "options", None), "max_message_bytes"):
        note = "--max-message-bytes and --max-prompt-bytes apply to ACP Kit agents only; this one is served as built"
        print(f"acpkit run: {note}", file=sys.stderr)
    if _stdin_is_terminal():
        print(f"acpkit run: {_terminal_notice(resolved.name, args.target)}", file=sys.stderr)
        return 0
    try:
        asyncio.run(_serve(agent))
    except KeyboardInterrupt:
        return 130
    return 0
