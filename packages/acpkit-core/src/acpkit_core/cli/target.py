"""Resolve an `acpkit run` target (`module`, `module:attr`, `path/to/file.py[:attr]`) to the object to serve.

The target module is imported first (it imports its framework anyway); only then are the installed
adapters asked which object they serve, so `acpkit run` never imports a framework the target does
not use. Every failure is a [`TargetError`][acpkit_core.cli.target.TargetError] with a message
meant for the person who typed the command.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import logging
import re
import sys
import traceback
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, PackageNotFoundError, distribution, entry_points
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from .install import install_command

if TYPE_CHECKING:
    from acpkit_core.cli.adapters import Adapter

__all__ = [
    "Resolved",
    "TargetError",
    "adapter_status",
    "import_target",
    "is_acp_agent",
    "load_relevant_adapters",
    "parse_target",
    "resolve_target",
]

log = logging.getLogger("acpkit.cli")

# Missing top-level modules -> the distribution that brings them (with the adapter).
_INSTALL_HINTS: dict[str, str] = {
    "pydantic_ai": "pydantic-acp",
    "pydantic_ai_slim": "pydantic-acp",
    "pydantic_acp": "pydantic-acp",
    "langchain": "langchain-acp",
    "langchain_core": "langchain-acp",
    "langgraph": "langchain-acp",
    "langchain_acp": "langchain-acp",
}
_FRAMEWORKS: dict[str, str] = {"pydantic-acp": "pydantic-ai", "langchain-acp": "LangChain/LangGraph"}


class TargetError(Exception):
    """The target could not be imported or did not name one servable object."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolved:
    """The object `acpkit run` will serve and how."""

    name: str
    """Where it was found (`examples/pydantic_agent.py:agent`)."""
    obj: object
    """The object itself."""
    adapter: Adapter | None
    """The adapter serving it; `None` for a ready ACP agent object."""
    description: str
    """A short description for messages."""


def parse_target(spec: str) -> tuple[str, str | None, bool]:
    """Split `spec` into (module name or file path, attribute or None, is_file)."""
    if not spec:
        raise TargetError("empty target: give a module, module:attr, or path/to/file.py[:attr]")
    base, attr = spec, None
    head, sep, tail = spec.rpartition(":")
    if sep and head and tail and all(part.isidentifier() for part in tail.split(".")):
        base, attr = head, tail
    elif sep and not tail:
        raise TargetError(f"target {spec!r}: nothing after ':'; give an attribute name or leave out the ':'")
    is_file = base.endswith(".py") or "/" in base or "\\" in base or Path(base).is_file()
    if not is_file and not all(part.isidentifier() for part in base.split(".")):
        raise TargetError(f"target {spec!r} is neither a module name nor a .py file path")
    return base, attr, is_file


@contextlib.contextmanager
def _stdout_to_stderr() -> Generator[None]:
    """While importing user code, keep stray prints off stdout (it carries the protocol)."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _describe_import_failure(what: str, exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        top = exc.name.split(".")[0]
        hint = _INSTALL_HINTS.get(top)
        if hint:
            return (
                f"cannot import {what}: it needs the module {exc.name!r}, which is not installed. "
                f"Install the adapter with: {install_command(hint)}, then run the command again."
            )
        return (
            f"cannot import {what}: no module named {exc.name!r}. Install the package that provides it, "
            "or check the target's spelling and the directory you run from (--cwd)."
        )
    where = ""
    tb = traceback.extract_tb(exc.__traceback__)
    if tb:
        last = tb[-1]
        where = f" (at {last.filename}:{last.lineno})"
    if isinstance(exc, SyntaxError):
        where = f" (at {exc.filename}:{exc.lineno})"
    return (
        f"cannot import {what}: {type(exc).__name__}: {exc}{where}. "
        "Fix the error in the target module, or run with --log-level DEBUG for the full traceback."
    )


def import_target(base: str, *, is_file: bool, cwd: Path) -> ModuleType:
    """Import the module or file named by the target, with its directory (or `cwd`) on `sys.path`."""
    if is_file:
        path = (cwd / base).resolve()
        if not path.is_file():
            raise TargetError(f"target file {base!r} does not exist (looked for {path})")
        folder = str(path.parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        module_name = path.stem if path.stem.isidentifier() else "_acpkit_target"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise TargetError(f"cannot import {path}: not a Python source file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            with _stdout_to_stderr():
                spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(module_name, None)
            raise TargetError(_describe_import_failure(str(path), exc)) from exc
        return module
    folder = str(cwd)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        with _stdout_to_stderr():
            return importlib.import_module(base)
    except ModuleNotFoundError as exc:
        if exc.name and base.startswith(exc.name) and base.split(".")[0] == exc.name.split(".")[0]:
            raise TargetError(
                f"no module named {exc.name!r} (target {base!r}). Check the spelling, run from the project "
                "directory or pass --cwd, or give a file path such as path/to/agent.py."
            ) from exc
        raise TargetError(_describe_import_failure(f"module {base!r}", exc)) from exc
    except Exception as exc:
        raise TargetError(_describe_import_failure(f"module {base!r}", exc)) from exc


def is_acp_agent(obj: object) -> bool:
    """True for a ready ACP agent object: an `AcpAgent`, or anything with `initialize` and `prompt` methods."""
    if isinstance(obj, type | ModuleType):
        return False
    return callable(getattr(obj, "initialize", None)) and callable(getattr(obj, "prompt", None))


def _match(obj: object, adapters: Sequence[Adapter]) -> Adapter | None:
    for adapter in adapters:
        try:
            if adapter.supports(obj):
                return adapter
        except Exception:  # a buggy supports() must not hide other adapters
            continue
    return None


def _describe(obj: object, adapter: Adapter | None) -> str:
    if adapter is not None:
        try:
            return adapter.describe(obj)
        except Exception:  # only for a message
            pass
    kind = f"ACP agent {type(obj).__module__}.{type(obj).__qualname__}"
    options = getattr(obj, "options", None)
    label = getattr(options, "title", None) or getattr(options, "name", None)
    return f"{kind} {label!r}" if isinstance(label, str) else kind


def _top_modules(module: ModuleType) -> set[str]:
    """Top-level packages the target module's own names come from (`pydantic_ai` for an `Agent`)."""
    tops: set[str] = set()
    for obj in vars(module).values():
        if isinstance(obj, ModuleType):
            name = obj.__name__
        elif isinstance(obj, type) or inspect.isfunction(obj):
            name = getattr(obj, "__module__", None) or ""
        else:
            name = type(obj).__module__
        tops.add(name.split(".")[0])
    return tops


def _requirement_modules(ep: EntryPoint) -> set[str]:
    """Top-level modules of the adapter's own package and of what its distribution requires (no import)."""
    tops = {ep.module.split(".")[0]}
    dist = ep.dist
    for requirement in (dist.requires if dist is not None else None) or []:
        name = re.split(r"[\s\[<>=!~;(]", requirement, maxsplit=1)[0]
        try:
            required = distribution(name)
        except PackageNotFoundError:
            continue
        listed = required.read_text("top_level.txt")
        if listed:
            tops.update(listed.split())
            continue
        for file in required.files or []:
            parts = file.parts
            if len(parts) > 1 and parts[0] != ".." and not parts[0].endswith((".dist-info", ".data")):
                tops.add(parts[0])
            elif len(parts) == 1 and parts[0].endswith(".py"):
                tops.add(parts[0][:-3])
    return tops


def load_relevant_adapters(module: ModuleType) -> list[Adapter]:
    """The installed adapters whose framework the target module uses; the others are never imported.

    Loading an adapter imports its framework (LangChain alone takes seconds), so an adapter is loaded
    only when the module holds something from a package its distribution requires.
    """
    from acpkit_core.cli.adapters import ENTRY_POINT_GROUP, Adapter

    in_play = _top_modules(module)
    found: list[Adapter] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if not _requirement_modules(ep) & in_play:
            log.debug("not loading adapter %s: %s uses none of its packages", ep.name, module.__name__)
            continue
        try:
            obj = ep.load()
        except Exception as exc:  # a broken optional adapter must not break the command
            log.warning("cannot load adapter %s (%s): %s", ep.name, ep.value, exc)
            continue
        if isinstance(obj, Adapter):
            found.append(obj)
    return sorted(found, key=lambda a: a.name)


def adapter_status(module: ModuleType, loaded: Sequence[Adapter]) -> str:
    """What is installed, what was loaded for `module`, and how to install a missing adapter it needs.

    Reads entry points and distribution metadata only (no adapter is imported). An ACP Kit 1.x
    adapter (same distribution name, no entry point) is called out, since it cannot serve here.
    """
    from acpkit_core.cli.adapters import ENTRY_POINT_GROUP

    installed: dict[str, str] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        installed[ep.name] = ep.dist.name if ep.dist is not None else ep.name
    loaded_names = {a.name for a in loaded}
    parts: list[str] = []
    if installed:
        listed = [
            name if name in loaded_names else f"{name} (not loaded: {module.__name__} uses none of its framework)"
            for name in sorted(installed)
        ]
        parts.append("adapters installed: " + ", ".join(listed))
    else:
        parts.append("no adapter is installed")
    installed_dists = {_normalise(d) for d in installed.values()}
    needed = sorted({_INSTALL_HINTS[top] for top in _top_modules(module) if top in _INSTALL_HINTS})
    for package in needed:
        if _normalise(package) in installed_dists:
            continue
        old = _installed_version(package)
        if old is not None:
            parts.append(
                f"{package} {old} is installed, which is ACP Kit 1.x and has no acpkit adapter; "
                f"install this release with: {install_command(package)}"
            )
        else:
            framework = _FRAMEWORKS.get(package, package)
            parts.append(
                f"{module.__name__} uses {framework}, whose adapter {package} is not installed; "
                f"install it with: {install_command(package)}"
            )
    return "; ".join(parts)


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed_version(package: str) -> str | None:
    try:
        return distribution(package).version
    except PackageNotFoundError:
        return None


def resolve_target(spec: str, *, cwd: Path | None = None, adapters: Sequence[Adapter] | None = None) -> Resolved:
    """Import the target and return the one object to serve (raises `TargetError` with a readable message)."""
    base, attr, is_file = parse_target(spec)
    module = import_target(base, is_file=is_file, cwd=cwd or Path.cwd())
    where = f"{base}:{attr}" if attr else base
    if attr is not None:
        obj: object = module
        for part in attr.split("."):
            if not hasattr(obj, part):
                names = ", ".join(n for n in sorted(vars(module)) if not n.startswith("_")) or "(none)"
                raise TargetError(f"{base} has no attribute {attr!r}; names defined there: {names}")
            obj = getattr(obj, part)
        if is_acp_agent(obj):  # a ready ACP agent needs no adapter at all
            return Resolved(name=where, obj=obj, adapter=None, description=_describe(obj, None))
        found = list(adapters) if adapters is not None else load_relevant_adapters(module)
        return _resolve_object(where, obj, found, module)
    found = list(adapters) if adapters is not None else load_relevant_adapters(module)
    candidates = _candidates(module, found, base)
    if len(candidates) == 1:
        return candidates[0]
    names = ", ".join(f"{c.name.rpartition(':')[2]} ({c.description})" for c in candidates)
    if not candidates:
        raise TargetError(
            f"found nothing to serve in {base}: no ready ACP agent and nothing an adapter supports "
            f"({adapter_status(module, found)}). Name the object with {base}:ATTRIBUTE."
        )
    raise TargetError(
        f"{base} defines several agents: {names}. Pick one with {base}:ATTRIBUTE, "
        "or make the others private (a leading underscore) so the module has one."
    )


def _resolve_object(where: str, obj: object, adapters: Sequence[Adapter], module: ModuleType) -> Resolved:
    if is_acp_agent(obj):
        return Resolved(name=where, obj=obj, adapter=None, description=_describe(obj, None))
    adapter = _match(obj, adapters)
    if adapter is not None:
        return Resolved(name=where, obj=obj, adapter=adapter, description=_describe(obj, adapter))
    if inspect.isfunction(obj) and not _required_params(obj):
        # A factory of a ready ACP agent (or of something an adapter serves): call it once.
        made = obj()
        if inspect.isawaitable(made):
            raise TargetError(f"{where} is an async function; give a plain factory or the object itself")
        if is_acp_agent(made) or _match(made, adapters) is not None:
            return _resolve_object(f"{where}()", made, adapters, module)
    raise TargetError(
        f"{where} is a {type(obj).__module__}.{type(obj).__qualname__}, which acpkit cannot serve: it is not an "
        f"ACP agent and no installed adapter supports it ({adapter_status(module, adapters)})."
    )


def _required_params(func: object) -> bool:
    try:
        sig = inspect.signature(func)  # pyright: ignore[reportArgumentType]
    except (TypeError, ValueError):
        return True
    return any(
        p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        for p in sig.parameters.values()
    )


def _candidates(module: ModuleType, adapters: Sequence[Adapter], base: str) -> list[Resolved]:
    seen: set[int] = set()
    out: list[Resolved] = []
    for name, obj in vars(module).items():
        if name.startswith("_") or isinstance(obj, ModuleType) or id(obj) in seen:
            continue
        if isinstance(obj, type):
            continue
        if inspect.isfunction(obj) and obj.__module__ != module.__name__:
            continue  # imported helpers are not this module's agents
        where = f"{base}:{name}"
        if is_acp_agent(obj):
            out.append(Resolved(name=where, obj=obj, adapter=None, description=_describe(obj, None)))
            seen.add(id(obj))
            continue
        adapter = _match(obj, adapters)
        if adapter is not None:
            out.append(Resolved(name=where, obj=obj, adapter=adapter, description=_describe(obj, adapter)))
            seen.add(id(obj))
        elif inspect.isfunction(obj) and _makes_acp_agent(obj):
            made = obj()
            out.append(Resolved(name=f"{where}()", obj=made, adapter=None, description=_describe(made, None)))
            seen.add(id(obj))
    return out


def _makes_acp_agent(func: Callable[..., object]) -> bool:
    """A factory taking no arguments and annotated to return a ready ACP agent class."""
    if _required_params(func):
        return False
    try:
        returns = inspect.signature(func, eval_str=True).return_annotation
    except (NameError, TypeError, ValueError, SyntaxError):
        return False
    return (
        isinstance(returns, type)
        and callable(getattr(returns, "initialize", None))
        and callable(getattr(returns, "prompt", None))
    )
