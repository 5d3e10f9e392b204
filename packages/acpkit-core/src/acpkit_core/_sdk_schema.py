"""The ACP SDK's schema, imported without building what serving does not use.

`acp.schema` defines about 280 pydantic models, and importing it builds every one of them: for each
class, pydantic reads and tokenizes the class's source to take its fields' docstrings as their
descriptions (`use_attribute_docstrings`), then generates its validator and serializer. That is
most of `import acp`, and `import acp` was a third of an agent's start-up (0.45 s of it on an idle
machine, against 50 ms for what a session then uses).

[`install`][acpkit_core._sdk_schema.install] (called when `acpkit_core` is imported) arranges that
when `acp.schema` is first imported, in this process and by whoever imports it, two of pydantic's
defaults are changed for the duration of that import only:

- `defer_build`: a model's validator and serializer are built the first time it is used, by
  pydantic itself (a millisecond or less each; the server's warm-up builds the ones a session
  uses, in the background: [`warm_models`][acpkit_core._sdk_schema.warm_models]);
- the fields' docstrings are not read: the SDK's models have no field `description`, which only a
  JSON Schema of them would show (nothing in serving makes one).

Before that import, the objects that exist (the interpreter's and, usually, the framework's
modules) are frozen out of the cyclic garbage collector (`gc.freeze()`, as
[`serve_stdio`][acpkit_core.server.serve_stdio] does with the whole start-up once it serves): the
collector's full passes during the rest of the start-up then walk only what was allocated since,
not the framework's objects again (one pass over pydantic-ai's takes about 50 ms).

Both rest on two names inside pydantic (`pydantic._internal._config.config_defaults` and
`pydantic._internal._fields._update_fields_from_docstrings`); when either is missing, `acp.schema`
is imported as it is, only slower. `tests/core/test_sdk_schema.py` checks both are taken on the
installed pydantic. Nothing changes when `acp` was imported before `acpkit_core`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Generator, Sequence
from types import ModuleType
from typing import Any, cast

__all__ = [
    "FIRST_TURN_MODELS",
    "INITIALIZE_MODELS",
    "LATER_MODELS",
    "SESSION_MODELS",
    "install",
    "lean_build",
    "warm_models",
    "warm_sdk_models",
]

_SCHEMA = "acp.schema"

INITIALIZE_MODELS: tuple[str, ...] = (
    "InitializeRequest",
    "InitializeResponse",
    "ClientCapabilities",
    "FileSystemCapabilities",
    "Implementation",
    "AgentCapabilities",
    "PromptCapabilities",
    "McpCapabilities",
    "SessionCapabilities",
    "SessionListCapabilities",
    "SessionResumeCapabilities",
    "SessionCloseCapabilities",
    "SessionDeleteCapabilities",
    "SessionForkCapabilities",
    "SessionAdditionalDirectoriesCapabilities",
)
"""The SDK models `initialize` uses (built on first use over stdio; at start by `acpkit serve`)."""

FIRST_TURN_MODELS: tuple[str, ...] = (
    # opening or loading a session
    "NewSessionRequest",
    "NewSessionResponse",
    "LoadSessionRequest",
    "LoadSessionResponse",
    "ResumeSessionRequest",
    "AvailableCommand",
    "AvailableCommandInput",
    "UnstructuredCommandInput",
    "AvailableCommandsUpdate",
    # a first turn of text
    "PromptResponse",
    "SessionInfoUpdate",
    "UserMessageChunk",
    "Usage",
)
"""The SDK models `session/new` (or `load`, `resume`) and a first turn of text use (a fresh agent
process, driven over stdio: which models were built by the end of its first prompt), built by the
warm-up's first stage, which a first turn waits for."""

LATER_MODELS: tuple[str, ...] = (
    "ListSessionsRequest",
    "ListSessionsResponse",
    "SessionInfo",
    "SessionNotification",
    "CancelNotification",
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "TextContentBlock",
    "ToolCallStart",
    "ToolCallProgress",
    "ToolCallUpdate",
    "ToolCallLocation",
    "ContentToolCallContent",
    "PermissionOption",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "AgentPlanUpdate",
    "PlanEntry",
    "UsageUpdate",
)
"""The SDK models of listing sessions, tool calls, permissions and plans: built by the warm-up only
while the process is quiet before its first turn (else each is built the first time it is used,
about a millisecond), so that a client that prompts at once does not wait for them."""

SESSION_MODELS: tuple[str, ...] = FIRST_TURN_MODELS + LATER_MODELS
"""The SDK models a session uses (`acpkit serve` builds them all at start)."""


@contextlib.contextmanager
def lean_build() -> Generator[bool]:
    """Within it, new pydantic models defer their build and skip their fields' docstrings.

    Yields whether pydantic offered both (when not, nothing is changed).
    """
    try:
        from pydantic._internal import _config, _fields
    except ImportError:  # pragma: no cover - a pydantic without these modules
        yield False
        return
    found: object = getattr(_config, "config_defaults", None)
    docstrings: object = getattr(_fields, "_update_fields_from_docstrings", None)
    if not isinstance(found, dict) or "defer_build" not in found or not callable(docstrings):
        yield False
        return
    defaults = cast("dict[str, object]", found)
    before = defaults["defer_build"]
    defaults["defer_build"] = True
    _fields._update_fields_from_docstrings = _no_docstrings  # pyright: ignore[reportPrivateUsage]
    try:
        yield True
    finally:
        defaults["defer_build"] = before
        _fields._update_fields_from_docstrings = docstrings  # pyright: ignore[reportPrivateUsage]


def _no_docstrings(*args: object, **kwargs: object) -> None:
    return None


class _LeanLoader(importlib.abc.Loader):
    """Executes `acp.schema` inside [`lean_build`][acpkit_core._sdk_schema.lean_build]; the rest is its own loader's."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # What exists now (the interpreter's and the framework's modules, usually) is start-up
        # state: keep it out of the cyclic collector's full passes, which would otherwise walk it
        # again each time the rest of the start-up allocates enough (one pass over pydantic-ai's
        # objects: 50 ms). `serve_stdio` freezes the rest once serving starts.
        gc.freeze()
        with lean_build():
            self._loader.exec_module(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_code, path...: the file loader's
        return getattr(self._loader, name)


class _SchemaFinder(importlib.abc.MetaPathFinder):
    """Finds `acp.schema` once, as the path finder would, with its loader wrapped."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _SCHEMA:
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)  # once
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _LeanLoader(spec.loader)
        return spec


def install() -> None:
    """Import `acp.schema` lean when it is first imported (nothing if it already is)."""
    if _SCHEMA in sys.modules or any(isinstance(f, _SchemaFinder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _SchemaFinder())


def warm_models(names: Sequence[str] = SESSION_MODELS) -> None:
    """Build the validators and serializers of the named SDK models now (the ones not built yet)."""
    schema = importlib.import_module(_SCHEMA)
    for name in names:
        model: Any = getattr(schema, name, None)
        if model is not None and not getattr(model, "__pydantic_complete__", True):
            model.model_rebuild()


def warm_sdk_models() -> None:
    """Start building the SDK models a session uses on the process's warm-up schedule.

    The server calls it when a client initializes. Once the answer is written,
    [`FIRST_TURN_MODELS`][acpkit_core._sdk_schema.FIRST_TURN_MODELS] are built while the client
    reads it and opens its session (a first turn waits for them as for an adapter's first stage);
    [`LATER_MODELS`][acpkit_core._sdk_schema.LATER_MODELS] only while the process is quiet before
    its first turn ([`acpkit_core.runner.warmup`][acpkit_core.runner.warmup]).
    """
    from .runner import warmup

    warmup.warm_up("acp-sdk", prepare=_warm_first_turn, throwaway=_warm_later)


def _warm_first_turn() -> None:
    warm_models(FIRST_TURN_MODELS)


async def _warm_later() -> None:
    for name in LATER_MODELS:  # one at a time: a turn that starts cancels the rest at the next step
        warm_models((name,))
        await asyncio.sleep(0)
