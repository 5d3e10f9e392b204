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
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

from .target import Resolved, TargetError, resolve_target

__all__ = ["build_agent", "run_main"]

log = logging.getLogger("acpkit.cli")

EXIT_TARGET = 2
"""Exit code when the target cannot be imported or served."""


def _configure_logging(level: str) -> None:
    fmt = "acpkit %(levelname)s %(name)s: %(message)s"
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.WARNING), format=fmt)


def build_agent(resolved: Resolved, *, name: str | None, store: str | None) -> Any:
    """The ACP agent object serving `resolved` (a ready ACP agent is served as it is)."""
    if resolved.adapter is None:
        return resolved.obj
    from acpkit_core.config import AgentOptions

    options = AgentOptions(store=store)
    if name:
        options.name = name
    return resolved.adapter.create_agent(resolved.obj, options)


class _ProtocolStdout:
    """Stands in for `sys.stdout` while serving: the SDK takes its `fileno()` (the real stdout, which
    carries JSON-RPC), while a stray `print()` from agent code is written to stderr instead."""

    def __init__(self, fd: int, fallback: TextIO) -> None:
        self._fd = fd
        self._fallback = fallback

    def fileno(self) -> int:
        return self._fd

    def write(self, text: str) -> int:
        return self._fallback.write(text)

    def flush(self) -> None:
        self._fallback.flush()

    def isatty(self) -> bool:
        return False

    def close(self) -> None:
        os.close(self._fd)


def _guard_stdout() -> None:
    """Keep everything but the protocol off stdout: prints go to stderr, and so does fd 1 for child processes."""
    if os.name == "nt":
        return
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = _ProtocolStdout(protocol_fd, sys.stderr)  # pyright: ignore[reportAttributeAccessIssue]


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

    await acp.run_agent(agent, use_unstable_protocol=True)


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
        resolved = resolve_target(args.target, cwd=cwd)
    except TargetError as exc:
        log.debug("target resolution failed", exc_info=exc)
        print(f"acpkit run: {exc}", file=sys.stderr)
        return EXIT_TARGET
    try:
        agent = build_agent(resolved, name=args.name, store=args.store)
    except Exception as exc:  # building the agent failed: the developer's configuration is wrong
        log.debug("building the agent failed", exc_info=exc)
        print(f"acpkit run: cannot serve {resolved.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_TARGET
    print(f"acpkit run: serving {resolved.name} ({resolved.description})", file=sys.stderr)
    if resolved.adapter is None and (args.store or args.name):
        note = "--store and --name do not apply to a ready ACP agent; it is served as built"
        print(f"acpkit run: {note}", file=sys.stderr)
    _guard_stdout()
    try:
        asyncio.run(_serve(agent))
    except KeyboardInterrupt:
        return 130
    return 0
