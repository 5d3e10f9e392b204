"""Issue 30: arrange `acpkit_core` by role. A re-runnable, mechanical refactor driven by one table.

Run it from the root of a checkout (it uses `git mv` and `ruff`):

    uv run python tools/refactor_core.py

What it does, in order, every step idempotent (a second run changes nothing):

1. `MOVES`: `git mv` each old module to its new path (skipped when already moved), and creates the
   new packages' `__init__.py` (`PACKAGES`).
2. `SPLITS`: moves named top-level definitions (with their decorators, the comments just above and
   the attribute docstring just below) from one module into another (new or existing), with the
   source's import block (rebased, pruned by ruff afterwards), the `__all__` entries, and an import
   of what each side still needs from the other. A split with no destination deletes the names.
3. Rewrites every reference to a moved module or a moved name, in every text file under
   `packages/`, `tests/`, `examples/`, `bench/`, `docs/` and `mkdocs.yml`, whether or not it existed
   when the table was written: Python imports (absolute, and relative ones inside `acpkit_core`,
   function-level and `TYPE_CHECKING` ones; `from m import a, b` is split per name when the names
   went to different homes), dotted paths in docstrings, markdown, mkdocstrings `:::` directives and
   strings (`importlib.import_module("acpkit_core.x")`), and the lazy table `_HOMES` in
   `acpkit_core/__init__.py`. Logger names (`getLogger("acpkit_core.x")`) are left alone.
4. Adds a `::: module` directive for each split's new module after its source's directive.
5. `ruff check --fix` (imports: sort, drop unused in the split modules) and `ruff format` on every
   Python file it changed.

A dotted path is resolved against the new tree first: `acpkit_core.runner.emitter` is a module of the
new `runner/` package and is left alone, while `acpkit_core.runner.PlanItem` (the old module
`runner.py`) becomes `acpkit_core.runner.types.PlanItem`. The one ambiguity: a bare
`acpkit_core.runner` (no name after it) always means the old module, now `acpkit_core.runner.protocols`.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

CORE = "acpkit_core"
CORE_SRC = Path("packages/acpkit-core/src")
ROOTS = ("packages", "tests", "examples", "bench", "docs", "mkdocs.yml", "README.md")
TEXT_SUFFIXES = {".py", ".md", ".yml", ".yaml", ".toml", ".txt", ".cfg", ".ini"}

# --- The table ---------------------------------------------------------------------------------

MOVES: dict[str, str] = {
    # the prompt IR lives with the prompt
    "acpkit_core.ir": "acpkit_core.prompt.ir",
    # CLI plugin discovery
    "acpkit_core.adapters": "acpkit_core.cli.adapters",
    # the client half of ACP's file and terminal methods
    "acpkit_core.local_host": "acpkit_core.client.local_host",
    # the runner contract: one package (runner.py's value types are split off into runner/types.py)
    "acpkit_core.runner": "acpkit_core.runner.protocols",
    "acpkit_core.emitter": "acpkit_core.runner.emitter",
    "acpkit_core.tool_calls": "acpkit_core.runner.tool_lifecycle",
    "acpkit_core.presentation": "acpkit_core.runner.tool_presentation",
    "acpkit_core.tools": "acpkit_core.runner.tool_classification",
    "acpkit_core.host": "acpkit_core.runner.host",
    "acpkit_core.elicitation": "acpkit_core.runner.elicitation",
    "acpkit_core.capabilities": "acpkit_core.runner.capabilities",
    "acpkit_core.stop": "acpkit_core.runner.stop",
    "acpkit_core.warmup": "acpkit_core.runner.warmup",
    "acpkit_core.plan": "acpkit_core.runner.plan",
    "acpkit_core.unstable": "acpkit_core.runner.unstable",
    "acpkit_core.rewind": "acpkit_core.runner.rewind",
    "acpkit_core.prices": "acpkit_core.runner.prices",
    # later parts of the runner contract: a runner that swaps its model, MCP servers the client
    # serves over ACP, who serves the agent's file and terminal tools
    "acpkit_core.providers": "acpkit_core.runner.providers",
    "acpkit_core.mcp_over_acp": "acpkit_core.runner.mcp_over_acp",
    "acpkit_core.host_tools": "acpkit_core.runner.host_tools",
    # what a client parses the unstable updates with
    "acpkit_core.unstable_updates": "acpkit_core.client.unstable_updates",
}

PACKAGES: dict[str, str] = {
    "acpkit_core.runner": (
        "The runner contract: what an adapter implements and everything a turn hands it.\n\n"
        "[`protocols`][acpkit_core.runner.protocols] holds the protocols (`Runner`, `Turn`, `Emitter`) and\n"
        "[`types`][acpkit_core.runner.types] the value types they exchange; the other modules are the\n"
        "parts of a turn (emitter, tool-call lifecycle, tool presentation, plan, questions, the client's\n"
        "files and terminal, stop reasons, warm-up). The names are exported from `acpkit_core` itself.\n"
    ),
    "acpkit_core.client": (
        "The client half of ACP: what an editor answers, served from this machine (`acpkit chat`, the test client).\n"
    ),
}


@dataclass(frozen=True)
class Split:
    """Move the top-level definitions `names` of module `src` (its new path) to module `dst`."""

    src: str
    dst: str | None  # None: delete them
    names: tuple[str, ...]
    doc: str = ""  # the docstring of `dst` when the split creates it
    renames: dict[str, str] = field(default_factory=dict[str, str])  # private helpers both sides use


SPLITS: tuple[Split, ...] = (
    # circle ir -> prompt.parse: the dead helper goes
    Split("acpkit_core.prompt.ir", None, ("check_base64",)),
    # circle config <-> permissions: a mode is a permission rule
    Split(
        "acpkit_core.config",
        "acpkit_core.permissions",
        ("READ_ONLY_KINDS", "MUTATING_KINDS", "Mode", "STANDARD_MODES"),
    ),
    # circle host/presentation/tool_calls <-> runner: value types apart from the protocols
    Split(
        "acpkit_core.runner.protocols",
        "acpkit_core.runner.types",
        (
            "ToolCallContent",
            "ToolCallStatus",
            "ToolKind",
            "StopReason",
            "StdioMcpServer",
            "HttpMcpServer",
            "SseMcpServer",
            "McpStreams",
            "ClientMcpServer",
            "McpServer",
            "WireMcpServer",
            "mcp_servers_from_wire",
            "HistoryLog",
            "Session",
            "ClientInfo",
            "NoticeSeverity",
            "CompactionStatus",
            "PlanItem",
            "TurnUsage",
            "PermissionDecision",
            "ToolSource",
            "ToolInfo",
            "ToolListing",
            "McpServerState",
            "McpServerStatus",
        ),
        doc=(
            "The value types of the runner contract: what a runner and the server hand each other.\n\n"
            "Frozen dataclasses and aliases only; the protocols that use them are in\n"
            "[`acpkit_core.runner.protocols`][acpkit_core.runner.protocols].\n"
        ),
    ),
    # presentation.py: the configuration stays, the engine and the presets go
    Split(
        "acpkit_core.runner.tool_presentation",
        "acpkit_core.runner.tool_presenter",
        (
            "ReadText",
            "_DIFF_LIMIT",
            "disk_reader",
            "_RESULTS_LIMIT",
            "ToolPresenter",
            "_MissingArg",
            "_TemplateArgs",
            "_fenced",
            "_LANGUAGES",
            "_language",
            "_output_text",
            "_terminal_id",
            "_LIST_KEYS",
            "_URL_KEYS",
            "_PATH_KEYS",
            "_NAME_KEYS",
            "_SNIPPET_KEYS",
            "_results",
            "_looks_like_target",
            "_link",
        ),
        doc=(
            "The engine of tool presentation: a turn's tool calls shown as their\n"
            "[`ToolPresentation`][acpkit_core.runner.tool_presentation.ToolPresentation] says.\n\n"
            "[`ToolPresenter`][acpkit_core.runner.tool_presenter.ToolPresenter] fills in a call's title,\n"
            "kind, locations, diff and shown output; [`ToolCalls`][acpkit_core.runner.tool_lifecycle.ToolCalls]\n"
            "uses it at each transition.\n"
        ),
        renames={"_arg": "tool_arg", "_short": "shorten", "_TITLE_LIMIT": "TITLE_LIMIT"},
    ),
    Split(
        "acpkit_core.runner.tool_presentation",
        "acpkit_core.runner.tool_presets",
        (
            "_PATH",
            "_LINE",
            "read_file_tool",
            "write_file_tool",
            "edit_file_tool",
            "shell_tool",
            "search_files_tool",
            "web_search_tool",
            "web_fetch_tool",
            "_FirstArgTitle",
            "TOOL_PRESETS",
        ),
        doc=(
            "Ready-made tool presentations for common tool shapes and names.\n\n"
            "One function per shape (`read_file_tool`, `shell_tool`, ...) takes the argument names a tool\n"
            "uses; [`TOOL_PRESETS`][acpkit_core.runner.tool_presets.TOOL_PRESETS] maps the usual tool names\n"
            "to them.\n"
        ),
        renames={"_arg": "tool_arg", "_short": "shorten", "_TITLE_LIMIT": "TITLE_LIMIT"},
    ),
    # circle runner.protocols <-> runner.elicitation: the fallback's type names the turn
    Split("acpkit_core.runner.elicitation", "acpkit_core.runner.protocols", ("AskFallback",)),
    # circles through telemetry.observer (-> config, -> server.agent, <-> otel): the lookups that
    # take the server's objects go to their callers' side, the counts to a module of their own
    Split(
        "acpkit_core.telemetry.observer",
        "acpkit_core.server.probes",
        ("connection_probe",),
        doc="A connection's telemetry probe, tied to the agent serving it (`None` when telemetry is off).\n",
    ),
    Split(
        "acpkit_core.telemetry.observer",
        "acpkit_core.telemetry.lookup",
        ("observer_of", "store_timer"),
        doc="Where the server finds the telemetry of its options: the observer, the store's timer.\n",
    ),
    Split(
        "acpkit_core.telemetry.observer",
        "acpkit_core.telemetry.counts",
        ("_UPDATE", "WireCounts"),
        doc="What a transport sent, counted without OpenTelemetry (read by the metrics' callbacks).\n",
    ),
    # modules over 600 lines
    Split(
        "acpkit_core.permissions",
        "acpkit_core.runner.permission_gate",
        ("PermissionAsker", "PermissionGate", "_read", "_unreadable"),
        doc=(
            "The permission and mode gate of one turn: asks the client when the rules say `ask`, once per\n"
            "tool call, and gives the question up on `session/cancel`.\n"
        ),
    ),
    Split(
        "acpkit_core.store.postgres",
        "acpkit_core.store.postgres_schema",
        ("MIGRATIONS", "_MIGRATION_LOCK", "SchemaTooNewError", "migrate"),
        doc="The Postgres store's schema: its migrations, applied once per database under an advisory lock.\n",
    ),
    Split(
        "acpkit_core.remote.app",
        "acpkit_core.remote.limits",
        (
            "MiB",
            "CONNECTION_BYTES",
            "SESSION_BYTES",
            "WRITE_PASS_BYTES",
            "RECORD_FACTOR",
            "INFLIGHT_FACTOR",
            "Limits",
        ),
        doc="What one remote endpoint allows: its connections, sessions, message sizes and buffers.\n",
    ),
    Split(
        "acpkit_core.cli.chat",
        "acpkit_core.cli.session_list",
        ("list_all_sessions",),
        doc="Every session an agent lists for a directory (`acpkit sessions`, `/sessions` in `acpkit chat`).\n",
    ),
    Split(
        "acpkit_core.testing.client",
        "acpkit_core.testing.answers",
        ("PermissionAnswer", "ElicitationAnswer", "WireMessage", "wire_mcp_server"),
        doc="What the test client answers the agent with, and the MCP servers it hands over, as the wire has them.\n",
    ),
    # runner/emitter.py: the updates as values and wire JSON, and the notices, apart from the emitter
    Split(
        "acpkit_core.runner.emitter",
        "acpkit_core.runner.updates",
        ("MessageBlock", "SessionUpdate", "WireUpdate", "Sender", "update_to_json", "update_from_json"),
        doc=(
            "The updates the server sends: as the SDK's models and as their wire JSON (what the transcript\n"
            "stores), and the conversions between the two.\n"
        ),
    ),
    Split(
        "acpkit_core.runner.emitter",
        "acpkit_core.runner.notices",
        (
            "NOTICE_META_KEY",
            "notice_update",
            "_REASON_LIMIT",
            "notice_model_fallback",
            "notice_mcp_failures",
            "notice_limit",
        ),
        doc=(
            "Notices: what the user is told beside the answer (a model fallback, MCP servers that did not\n"
            "start, a limit reached), in the one form the wire gives them.\n"
        ),
    ),
    # server/turn_runner.py: the prompt's answer
    Split(
        "acpkit_core.server.turn_runner",
        "acpkit_core.server.prompt_response",
        ("USAGE_META_KEY", "prompt_response", "_turn_usage", "_numbered", "_session_cost"),
        doc=(
            "The `session/prompt` answer: its stop reason, the turn's usage where the client may read it,\n"
            "its number in the session's log, and the session's cost so far.\n"
        ),
        renames={
            "_turn_usage": "response_usage",
            "_numbered": "numbered_response",
            "_session_cost": "stored_session_cost",
        },
    ),
    # remote/app.py: how one message is framed for each transport
    Split(
        "acpkit_core.remote.app",
        "acpkit_core.remote.framing",
        ("_error", "UNAUTHORIZED", "_event", "_json", "_frame", "_too_big"),
        doc=(
            "How the remote endpoint frames what it sends: a message as compact JSON, an SSE event, a\n"
            "WebSocket text frame, and its HTTP refusals.\n"
        ),
        renames={
            "_error": "error_response",
            "_event": "sse_event",
            "_json": "json_bytes",
            "_frame": "ws_frame",
            "_too_big": "too_big",
        },
    ),
    # circle remote.client <-> remote.resume: the connection that may resume goes above both
    Split(
        "acpkit_core.remote.client",
        "acpkit_core.remote.connect",
        ("open_remote",),
        renames={"_abort_socket": "abort_socket"},  # a helper both sides use (later mains)
        doc=(
            "An SDK client connection to a remote agent, over a plain transport or one that reconnects by\n"
            "itself ([`ResumingTransport`][acpkit_core.remote.resume.ResumingTransport]).\n"
        ),
    ),
    # store/sqlite.py: the schema and its transactions
    Split(
        "acpkit_core.store.sqlite",
        "acpkit_core.store.sqlite_schema",
        ("_SCHEMA", "_SCHEMA_VERSION", "_migrate", "_write", "_read"),
        doc=(
            "The SQLite store's schema, brought up to date once per file, and the transactions its\n"
            "reads and writes run in.\n"
        ),
        renames={
            "_SCHEMA": "SCHEMA",
            "_SCHEMA_VERSION": "SCHEMA_VERSION",
            "_migrate": "migrate",
            "_write": "write_transaction",
            "_read": "read_transaction",
        },
    ),
    # testing/conformance.py: the MCP-over-ACP server its scenarios serve goes with them (below)
    Split(
        "acpkit_core.testing.conformance",
        "acpkit_core.testing.conformance_memory",
        ("AgentFactory",),
        doc=(
            "The conformance scenarios about a session's memory: a restart, `/rewind`, `/retry`, fork at a\n"
            "prompt. A base class of [`RunnerConformance`][acpkit_core.testing.conformance.RunnerConformance],\n"
            "which is the class to subclass; its capability flags `history` and `rewind` are declared here.\n"
        ),
    ),
    Split(
        "acpkit_core.testing.conformance",
        "acpkit_core.testing.conformance_negotiated",
        ("_editor_words",),
        doc=(
            "The conformance scenarios of what a client negotiates: usage in the prompt answer, tool-call\n"
            "names, plan operations, notices, MCP over ACP, custom LLM endpoints. A base class of\n"
            "[`RunnerConformance`][acpkit_core.testing.conformance.RunnerConformance], which is the class to\n"
            "subclass; its capability flags `usage`, `limits` and `mcp_servers` are declared here.\n"
        ),
    ),
)


@dataclass(frozen=True)
class ClassSplit:
    """Move the members `members` of class `cls` (module `src`) into a new base class `base` of it, in `dst`.

    The methods (with their decorators) and class attributes (with their docstrings) move as they
    are; `declare` is the body the base class starts with (what the moved methods use of the
    instance, declared for the type checker). `edits` are literal replacements made in `src` after.
    """

    src: str
    cls: str
    dst: str
    base: str
    members: tuple[str, ...]
    base_doc: str
    declare: str = ""
    doc: str = ""  # the docstring of `dst` when the split creates it
    edits: dict[str, str] = field(default_factory=dict[str, str])


CLASS_SPLITS: tuple[ClassSplit, ...] = (
    # testing/client.py: how the test client answers the agent's requests
    ClassSplit(
        "acpkit_core.testing.client",
        "AcpTestClient",
        "acpkit_core.testing.answers",
        "ClientAnswers",
        (
            "request_permission",
            "_choose",
            "create_elicitation",
            "complete_elicitation",
            "_elicitation_choice",
            "read_text_file",
            "write_text_file",
            "create_terminal",
            "terminal_output",
            "wait_for_terminal_exit",
            "kill_terminal",
            "release_terminal",
        ),
        base_doc=(
            "The test client's answers to the agent's requests: permissions and questions from its script,\n"
            "    files and terminals from a [`LocalClientHost`][acpkit_core.client.local_host.LocalClientHost]\n"
            "    on the real disk, each request recorded. A base class of\n"
            "    [`AcpTestClient`][acpkit_core.testing.AcpTestClient], which sets these attributes."
        ),
        declare=(
            "    host: LocalClientHost\n"
            "    requests: list[tuple[str, dict[str, Any]]]\n"
            "    permission_answers: PermissionAnswer\n"
            "    permission_requests: list[RequestPermissionRequest]\n"
            "    elicitation_answers: ElicitationAnswer\n"
            "    elicitations: list[dict[str, Any]]\n"
            "    completed_elicitations: list[str]\n"
            "    _answer_index: int\n"
            "    _elicitation_index: int\n"
            "    _cancel_events: dict[str, asyncio.Event]\n"
            "\n"
            "    async def cancel(self, session_id: str) -> None:\n"
            '        """Send `session/cancel` for the session (the client defines it)."""\n'
            "        raise NotImplementedError\n"
        ),
    ),
    # testing/conformance.py: the scenarios by theme, each a base class of RunnerConformance
    ClassSplit(
        "acpkit_core.testing.conformance",
        "RunnerConformance",
        "acpkit_core.testing.conformance_memory",
        "MemoryScenarios",
        ("history", "rewind", "test_load_after_restart", "test_rewind", "test_retry", "test_fork_at_a_prompt"),
        base_doc="The memory scenarios of the conformance suite (subclass `RunnerConformance`, not this).",
        edits={"vars(RunnerConformance)": "dir(RunnerConformance)"},
    ),
    ClassSplit(
        "acpkit_core.testing.conformance",
        "RunnerConformance",
        "acpkit_core.testing.conformance_negotiated",
        "NegotiatedScenarios",
        (
            "usage",
            "limits",
            "mcp_servers",
            "test_context_meter_and_prompt_usage",
            "test_tool_call_name_where_negotiated",
            "test_plan_operations_where_negotiated",
            "test_a_limit_reached_is_a_notice",
            "test_mcp_over_acp_needs_negotiation",
            "test_mcp_over_acp",
            "test_custom_llm_endpoint",
        ),
        base_doc=("The conformance scenarios of what a client negotiates (subclass `RunnerConformance`, not this)."),
    ),
)

# modules a split adds names to that existed before it (no page added for them); filled by main()
_EXISTING_DSTS: set[str] = set()

# (old module, name) -> the module the name lives in now; from the splits
HOMES: dict[tuple[str, str], str | None] = {}
_NEW_TO_OLD = {new: old for old, new in MOVES.items()}
for _split in SPLITS:
    for _name in _split.names:
        for _renamed_old, _renamed_new in _split.renames.items():
            if _name == _renamed_old:
                _name = _renamed_new
        HOMES[(_NEW_TO_OLD.get(_split.src, _split.src), _name)] = _split.dst
        HOMES[(_split.src, _name)] = _split.dst  # the source's new path too (re-runs, later branches)

# --- Helpers -------------------------------------------------------------------------------------


def git(*args: str) -> None:
    subprocess.run(["git", *args], check=True)


def module_path(module: str, *, package: bool = False) -> Path:
    base = CORE_SRC.joinpath(*module.split("."))
    return base / "__init__.py" if package else base.with_suffix(".py")


def module_file(module: str) -> Path | None:
    for candidate in (module_path(module), module_path(module, package=True)):
        if candidate.exists():
            return candidate
    return None


def module_of(path: Path) -> tuple[str, bool] | None:
    """The dotted module of a file under the core's source, and whether it is a package."""
    try:
        rel = path.relative_to(CORE_SRC)
    except ValueError:
        return None
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def is_module(dotted: str) -> bool:
    return dotted.startswith(CORE) and module_file(dotted) is not None


def resolve_relative(level: int, module: str | None, current: str, is_package: bool) -> str:
    base = current.split(".") if is_package else current.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([module] if module else [])])


def relative_to(target: str, current: str, is_package: bool) -> str:
    """`target` written as a relative import from module `current` (`.x`, `..y.z`)."""
    here = current.split(".") if is_package else current.split(".")[:-1]
    there = target.split(".")
    common = 0
    while common < min(len(here), len(there)) and here[common] == there[common]:
        common += 1
    dots = "." * (len(here) - common + 1)
    return dots + ".".join(there[common:])


def new_home(module: str, name: str | None) -> str:
    """Where `module.name` (or the module itself when `name` is None) lives in the new layout."""
    if name is not None:
        if is_module(f"{module}.{name}") and module not in MOVES:
            return module
        if is_module(f"{module}.{name}") and module_file(module) is not None:
            return module  # `acpkit_core.runner` + a submodule of the new package
        home = HOMES.get((module, name), "")
        if home is None:
            return module  # deleted: leave it, the type checker says so
        if home:
            return home
    return MOVES.get(module, module)


def rewrite_dotted(dotted: str) -> str:
    """A dotted reference `acpkit_core.a.b.Name.attr` in the new layout."""
    parts = dotted.split(".")
    for i in range(len(parts), 1, -1):
        prefix = ".".join(parts[:i])
        rest = parts[i:]
        if prefix in MOVES:
            if rest and is_module(f"{prefix}.{rest[0]}"):
                return dotted  # a module of the new package that took the old module's name
            home = new_home(prefix, rest[0] if rest else None)
            return ".".join([home, *rest])
        if is_module(prefix):
            if rest and (prefix, rest[0]) in HOMES:
                home = HOMES[(prefix, rest[0])]
                return ".".join([home, *rest]) if home else dotted
            return dotted
    return dotted


# --- Step 1: moves -------------------------------------------------------------------------------


def do_moves() -> dict[Path, str]:
    """Move the files; return each moved file's old module name (for its relative imports)."""
    old_names: dict[Path, str] = {}
    for package in PACKAGES:
        module_path(package, package=True).parent.mkdir(parents=True, exist_ok=True)
    for old, new in MOVES.items():
        source, target = module_path(old), module_path(new)
        if source.exists() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            git("mv", str(source), str(target))
            old_names[target] = old
    for package, doc in PACKAGES.items():
        init = module_path(package, package=True)
        if not init.exists():
            text = doc.strip() if "\n" not in doc.strip() else doc  # a one-line docstring on one line
            init.write_text(f'"""{text}"""\n')
            git("add", str(init))
    return old_names


# --- Step 2: imports -----------------------------------------------------------------------------


def text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", *ROOTS], capture_output=True, text=True)
    files = [Path(line) for line in out.stdout.splitlines() if line]
    return sorted(p for p in files if p.suffix in TEXT_SUFFIXES and p.exists())


def rewrite_imports(path: Path, text: str, old_name: str | None) -> str:
    """Rewrite the import statements of one Python file (AST-located, re-emitted per new home)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    here = module_of(path)
    current, is_package = here if here else ("", False)
    resolve_as = old_name or current
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            absolute = (
                resolve_relative(node.level, node.module, resolve_as, is_package) if node.level else node.module or ""
            )
            if not absolute.startswith(CORE):
                continue
            relative = node.level > 0 and here is not None
            groups: dict[str, list[str]] = {}
            for alias in node.names:
                home, name, asname = new_home(absolute, alias.name), alias.name, alias.asname
                if f"{absolute}.{name}" in MOVES and not is_module(f"{absolute}.{name}"):
                    # `from . import warmup`: the module itself moved
                    target = MOVES[f"{absolute}.{name}"]
                    home, name = target.rsplit(".", 1)
                    asname = asname or (alias.name if name != alias.name else None)
                if here and home == current and name != "*" and not is_module(f"{home}.{name}"):
                    continue  # the name now lives in this very module
                groups.setdefault(home, []).append(name if asname is None else f"{name} as {asname}")
            statements = []
            for home, items in groups.items():
                source = relative_to(home, current, is_package) if relative else home
                statements.append(f"from {source} import {', '.join(items)}")
            original_source = "." * node.level + (node.module or "")
            original_items = [a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names]
            if statements == [f"from {original_source} import {', '.join(original_items)}"]:
                continue
            replacement = ("\n" + " " * node.col_offset).join(statements) if statements else "pass"
            edits.append(
                (node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0, replacement)
            )
        elif isinstance(node, ast.Import):
            new_names = []
            changed = False
            for alias in node.names:
                name = alias.name
                if name.startswith(CORE + "."):
                    moved = rewrite_dotted(name)
                    changed |= moved != name
                    name = moved
                new_names.append(name if alias.asname is None else f"{name} as {alias.asname}")
            if changed:
                edits.append(
                    (
                        node.lineno,
                        node.col_offset,
                        node.end_lineno or node.lineno,
                        node.end_col_offset or 0,
                        "import " + ", ".join(new_names),
                    )
                )
    if not edits:
        return text
    for start, col, end, end_col, replacement in sorted(edits, reverse=True):
        head = lines[start - 1][:col]
        tail = lines[end - 1][end_col:]
        lines[start - 1 : end] = [head + replacement + tail]
    result = "".join(lines)
    # an import that became `pass` alone in a TYPE_CHECKING block is harmless; ruff drops the rest
    return result


# --- Step 3: dotted references ------------------------------------------------------------------

DOTTED = re.compile(r"(?<![\w.])acpkit_core(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
LOGGER = re.compile(r"getLogger\(\s*[\"']$")


IMPORT_BEFORE = re.compile(r"(?:^|\n)[ \t]*(?:>>> )?(?:import|from)[ \t]+$")
IMPORT_AFTER = re.compile(r"[ \t]+import\b")
FROM_IMPORT = re.compile(
    r"^(?P<indent>[ \t]*(?:>>> )?)from[ \t]+(?P<module>acpkit_core(?:\.\w+)*)[ \t]+import[ \t]+"
    r"(?P<names>\([^)]*\)|[^\n#]*[^\s#])",
    flags=re.M,
)


def rewrite_from_imports(text: str) -> str:
    """`from acpkit_core.x import a, b` written as text (markdown, docstrings), per name's new home.

    Real Python imports were rewritten from the AST already; on them this is a no-op.
    """

    def replace(match: re.Match[str]) -> str:
        indent, module = match.group("indent"), match.group("module")
        raw = match.group("names").strip("()")
        items = [" ".join(item.split()) for item in raw.replace("\n", " ").split(",") if item.strip()]
        groups: dict[str, list[str]] = {}
        for item in items:
            name = item.split(" as ")[0].strip()
            asname = item.split(" as ")[1].strip() if " as " in item else None
            home = new_home(module, name)
            if f"{module}.{name}" in MOVES and not is_module(f"{module}.{name}"):
                home, new_name = MOVES[f"{module}.{name}"].rsplit(".", 1)
                asname = asname or (name if new_name != name else None)
                name = new_name
            groups.setdefault(home, []).append(name if asname is None else f"{name} as {asname}")
        if list(groups) == [module] and groups[module] == items:
            return match.group(0)
        return ("\n" + indent).join(
            f"{indent if i == 0 else ''}from {home} import {', '.join(names)}"
            for i, (home, names) in enumerate(groups.items())
        )

    return FROM_IMPORT.sub(replace, text)


def rewrite_text(text: str) -> str:
    text = rewrite_from_imports(text)

    def replace(match: re.Match[str]) -> str:
        before = text[max(0, match.start() - 40) : match.start()]
        if LOGGER.search(before):
            return match.group(0)
        if IMPORT_BEFORE.search(before) and IMPORT_AFTER.match(text, match.end()):
            return match.group(0)  # `from acpkit_core.x import ...`: rewritten above
        return rewrite_dotted(match.group(0))

    return DOTTED.sub(replace, text)


HOMES_ENTRY = re.compile(r"\*\*dict\.fromkeys\(\s*(\[[^\]]*\])\s*,\s*\"([\w.]+)\"\s*,?\s*\)")


def rewrite_lazy_homes(text: str) -> str:
    """`_HOMES` in `acpkit_core/__init__.py`: `{name: relative module}` entries, regrouped per new home."""
    if "_HOMES" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        names: list[str] = ast.literal_eval(match.group(1))
        old = f"{CORE}.{match.group(2)}"
        groups: dict[str, list[str]] = {}
        for name in names:
            home = new_home(old, name)
            groups.setdefault(home.removeprefix(CORE + "."), []).append(name)
        return ",\n    ".join(
            f"**dict.fromkeys({json.dumps(sorted(group))}, {json.dumps(home)})" for home, group in groups.items()
        )

    return HOMES_ENTRY.sub(replace, text)


# --- Step 4: splits ------------------------------------------------------------------------------


def defined_names(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def import_block(tree: ast.Module) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                out.append(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.append(node)
    return out


def rebase_imports(source: str, src: str, dst: str) -> str:
    """Relative imports written in module `src`, rewritten for module `dst`."""

    def replace(match: re.Match[str]) -> str:
        dots, rest = match.group(2), match.group(3)
        absolute = resolve_relative(len(dots), rest or None, src, False)
        return f"{match.group(1)}{relative_to(absolute, dst, False)} import"

    return re.sub(r"^(\s*from )(\.+)([\w.]*) import", replace, source, flags=re.M)


def all_names(tree: ast.Module) -> tuple[ast.stmt, list[str]] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return node, list(ast.literal_eval(node.value))
    return None


def format_all(names: list[str]) -> str:
    return "__all__ = [" + ", ".join(f'"{n}"' for n in sorted(set(names))) + "]"


def used_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = ast.parse("if True:\n" + "".join("    " + line for line in source.splitlines(keepends=True)))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for node in ast.walk(tree):  # names in string annotations and `TypeVar`-style strings
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            names |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", node.value)) & set(
                re.findall(r"\b[A-Z_]\w*", node.value)
            )
    return names


def apply_renames(text: str, renames: dict[str, str]) -> str:
    for old, new in renames.items():
        text = re.sub(rf"(?<![\w.]){re.escape(old)}\b", new, text)
    return text


def do_split(split: Split) -> list[Path]:
    src_path = module_path(split.src)
    if not src_path.exists():
        return []
    text = apply_renames(src_path.read_text(), split.renames)
    names = {split.renames.get(n, n) for n in split.names}
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    body = tree.body
    taken: list[tuple[int, int]] = []  # (first line index, end line index exclusive)
    moved: set[str] = set()
    for i, node in enumerate(body):
        defined = defined_names(node)
        if not defined or not defined & names:
            continue
        moved |= defined
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            first -= 1
        end = node.end_lineno or node.lineno
        if i + 1 < len(body) and is_docstring(body[i + 1]):
            end = body[i + 1].end_lineno or end
        taken.append((first, end))
    exported = all_names(tree)
    reexports = (names - moved) & set(exported[1] if exported else [])
    if not taken and not reexports:
        if split.renames:
            src_path.write_text(text)
        for dst in [split.dst] if split.dst else []:
            dst_path = module_path(dst)
            if dst_path.exists():
                dst_path.write_text(apply_renames(dst_path.read_text(), split.renames))
        return [src_path]
    segments = ["".join(lines[a:b]).strip("\n") for a, b in taken]
    imports = "\n".join(ast.get_source_segment(text, n) or "" for n in import_block(tree))
    remaining_lines = list(lines)
    for a, b in sorted(taken, reverse=True):
        del remaining_lines[a:b]
    remaining = "".join(remaining_lines)
    # __all__ of the source
    if exported:
        node, listed = exported
        kept = [n for n in listed if n not in moved and n not in reexports]
        old_all = ast.get_source_segment(text, node) or ""
        remaining = remaining.replace(old_all, format_all(kept), 1)
    changed = [src_path]
    if split.dst is not None:
        dst_path = module_path(split.dst)
        moved_exports = sorted((moved | reexports) & set(exported[1] if exported else []))
        src_defined = {n for node in ast.parse(remaining).body for n in defined_names(node)} - {"__all__"}
        needs_from_src = sorted(used_names("\n".join(segments)) & src_defined)
        back_import = (
            f"from {relative_to(split.src, split.dst, False)} import {', '.join(needs_from_src)}\n"
            if needs_from_src
            else ""
        )
        rebased = rebase_imports(imports, split.src, split.dst)
        # one line per statement (ruff wraps what is long again, without a stale trailing comma)
        rebased = re.sub(r"import \(([^)]*)\)", lambda m: "import " + " ".join(m.group(1).split()).rstrip(","), rebased)
        if back_import and "\nif TYPE_CHECKING:" in "\n" + rebased:  # runtime imports before the type-only block
            head, _, tail = ("\n" + rebased).partition("\nif TYPE_CHECKING:")
            rebased, back_import = f"{head.lstrip(chr(10))}\n{back_import}\nif TYPE_CHECKING:{tail}", ""
        if not dst_path.exists():
            dst_text = (
                f'"""{split.doc}"""\n\nfrom __future__ import annotations\n\n{rebased}\n{back_import}\n'
                f"{format_all(moved_exports)}\n\n\n" + "\n\n\n".join(segments) + "\n"
            )
        else:
            dst_text = apply_renames(dst_path.read_text(), split.renames)
            dst_tree = ast.parse(dst_text)
            dst_lines = dst_text.splitlines(keepends=True)
            dst_all = all_names(dst_tree)
            anchor_nodes = import_block(dst_tree)
            anchor = max((n.end_lineno or 0) for n in anchor_nodes) if anchor_nodes else 1
            if dst_all:
                node, listed = dst_all
                anchor = node.end_lineno or anchor
                new_all = format_all([*listed, *moved_exports])
                seg = ast.get_source_segment(dst_text, node) or ""
                head = "".join(dst_lines[:anchor]).replace(seg, new_all, 1)
            else:
                head = "".join(dst_lines[:anchor])
            dst_text = (
                head.rstrip("\n").replace(
                    "from __future__ import annotations\n",
                    f"from __future__ import annotations\n\n{rebased}\n{back_import}",
                    1,
                )
                + "\n\n\n"
                + "\n\n\n".join(segments)
                + "\n\n\n"
                + "".join(dst_lines[anchor:]).lstrip("\n")
            )
        dst_path.write_text(clean_pass(rewrite_imports(dst_path, dst_text, None)))
        git("add", str(dst_path))
        changed.append(dst_path)
        still_used = sorted(used_names(remaining) & moved - {"__all__"})
        if still_used:
            import_line = f"from {relative_to(split.dst, split.src, False)} import {', '.join(still_used)}\n"
            rem_tree = ast.parse(remaining)
            block = import_block(rem_tree)
            at = max((n.end_lineno or 0) for n in block) if block else 0
            rem_lines = remaining.splitlines(keepends=True)
            rem_lines.insert(at, import_line)
            remaining = "".join(rem_lines)
    src_path.write_text(remaining)
    return changed


def do_class_split(split: ClassSplit) -> list[Path]:
    src_path = module_path(split.src)
    if not src_path.exists():
        return []
    text = src_path.read_text()
    tree = ast.parse(text)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == split.cls), None)
    if cls is None or any(isinstance(b, ast.Name) and b.id == split.base for b in cls.bases):
        return []  # gone, or split already
    lines = text.splitlines(keepends=True)
    taken: list[tuple[int, int]] = []
    for i, node in enumerate(cls.body):
        if not defined_names(node) & set(split.members):
            continue
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        end = node.end_lineno or node.lineno
        if i + 1 < len(cls.body) and is_docstring(cls.body[i + 1]):
            end = cls.body[i + 1].end_lineno or end
        taken.append((first, end))
    if not taken:
        return []
    segments = ["".join(lines[a:b]).strip("\n") for a, b in taken]
    imports = "\n".join(ast.get_source_segment(text, n) or "" for n in import_block(tree))
    remaining_lines = list(lines)
    for a, b in sorted(taken, reverse=True):
        del remaining_lines[a:b]
        while 0 < a < len(remaining_lines) and not remaining_lines[a].strip() and not remaining_lines[a - 1].strip():
            del remaining_lines[a]
    header = cls.lineno - 1  # the `class` line (decorators are above it); the members taken are below
    head_line = remaining_lines[header]
    if f"class {split.cls}(" in head_line:
        head_line = head_line.replace(f"class {split.cls}(", f"class {split.cls}({split.base}, ", 1)
    else:
        head_line = head_line.replace(f"class {split.cls}:", f"class {split.cls}({split.base}):", 1)
    remaining_lines[header] = head_line
    remaining = "".join(remaining_lines)
    src_defined = {n for node in ast.parse(remaining).body for n in defined_names(node)} - {"__all__"}
    needs = sorted(used_names("\n".join([*segments, split.declare])) & src_defined - {split.cls})
    if needs:
        print(f"refactor_core: {split.dst}.{split.base} uses {needs} of {split.src}", file=sys.stderr)
    import_line = f"from {relative_to(split.dst, split.src, False)} import {split.base}\n"
    block = import_block(ast.parse(remaining))
    runtime = [n for n in block if not isinstance(n, ast.If)]
    at = max((n.end_lineno or 0) for n in runtime) if runtime else 0
    rem_lines = remaining.splitlines(keepends=True)
    rem_lines.insert(at, import_line)
    remaining = "".join(rem_lines)
    for old, new in split.edits.items():
        remaining = remaining.replace(old, new)
    src_path.write_text(remaining)
    rebased = rebase_imports(imports, split.src, split.dst)
    rebased = re.sub(r"import \(([^)]*)\)", lambda m: "import " + " ".join(m.group(1).split()).rstrip(","), rebased)
    own = relative_to(split.dst, split.dst, False)  # an import of the destination by itself goes
    rebased = "\n".join(line for line in rebased.splitlines() if not line.lstrip().startswith(f"from {own} import "))
    body = f'class {split.base}:\n    """{split.base_doc}"""\n\n'
    if split.declare:
        body += split.declare.rstrip("\n") + "\n\n"
    body += "\n\n".join(segments) + "\n"
    dst_path = module_path(split.dst)
    if not dst_path.exists():
        dst_text = (
            f'"""{split.doc}"""\n\nfrom __future__ import annotations\n\n{rebased}\n\n'
            f"{format_all([split.base])}\n\n\n{body}"
        )
    else:
        dst_text = dst_path.read_text()
        dst_all = all_names(ast.parse(dst_text))
        if dst_all:
            node, listed = dst_all
            seg = ast.get_source_segment(dst_text, node) or ""
            dst_text = dst_text.replace(seg, format_all([*listed, split.base]), 1)
        dst_text = dst_text.replace(
            "from __future__ import annotations\n", f"from __future__ import annotations\n\n{rebased}\n", 1
        )
        dst_text = dst_text.rstrip("\n") + "\n\n\n" + body
    dst_path.write_text(clean_pass(rewrite_imports(dst_path, dst_text, None)))
    git("add", str(dst_path))
    return [src_path, dst_path]


def clean_pass(text: str) -> str:
    """Drop a `pass` an import rewrite left beside other imports, and a `TYPE_CHECKING` block left empty."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    drop: set[int] = set()
    for node in ast.walk(tree):
        for body in (getattr(node, "body", None), getattr(node, "orelse", None)):
            if not isinstance(body, list) or len(body) < 2:
                continue
            stmts: list[ast.stmt] = body
            if all(isinstance(s, ast.Import | ast.ImportFrom | ast.Pass) for s in stmts):
                drop |= {s.lineno for s in stmts if isinstance(s, ast.Pass)}
    lines = [line for i, line in enumerate(text.splitlines(keepends=True), 1) if i not in drop]
    return re.sub(r"\nif TYPE_CHECKING:\n    pass\n", "\n", "".join(lines))


# --- Step 5: directives --------------------------------------------------------------------------


def add_directives(text: str, documented: set[str]) -> str:
    """A `::: dst` directive after the `::: src` one (same options), for each module a split created.

    Skipped when some page documents `dst` already. A `members: [...]` option is divided: the names
    that moved are listed under `dst` (no directive when none did), the others stay under `src`.
    """
    for split in SPLITS:
        if split.dst is None or split.dst in documented or split.dst in _EXISTING_DSTS:
            continue
        pattern = rf"^::: {re.escape(split.src)}\n((?:[ \t]+.*\n|\n(?=[ \t]))*)"
        match = re.search(pattern, text, flags=re.M)
        if not match:
            continue
        options = match.group(1)
        moved = {split.renames.get(n, n) for n in split.names}
        listed = re.search(r"^([ \t]+members:[ \t]*)\[([^\]]*)\]", options, flags=re.M)
        src_options = dst_options = options
        if listed:
            members = [m.strip() for m in listed.group(2).split(",") if m.strip()]
            going = [m for m in members if m in moved]
            if not going:
                continue
            staying = [m for m in members if m not in moved]
            src_options = options.replace(listed.group(0), f"{listed.group(1)}[{', '.join(staying)}]")
            dst_options = options.replace(listed.group(0), f"{listed.group(1)}[{', '.join(going)}]")
        block = f"::: {split.src}\n{src_options.rstrip()}\n\n::: {split.dst}\n{dst_options.rstrip()}\n".replace(
            "\n\n\n", "\n\n"
        )
        after = text[match.end() :].lstrip("\n")
        text = text[: match.start()] + block.rstrip("\n") + "\n" + ("\n" if after else "") + after
        documented.add(split.dst)
    return text


# --- Main ----------------------------------------------------------------------------------------


def main() -> int:
    if not CORE_SRC.exists():
        print("run from the root of an ACP Kit checkout", file=sys.stderr)
        return 2
    old_names = do_moves()
    changed: set[Path] = set()
    # imports first (relative imports of moved files resolve against their old names), then splits
    for path in text_files():
        text = path.read_text()
        new = rewrite_imports(path, text, old_names.get(path)) if path.suffix == ".py" else text
        if new != text:
            path.write_text(new)
            changed.add(path)
    prune: set[Path] = set()
    _EXISTING_DSTS.update(s.dst for s in SPLITS if s.dst and module_file(s.dst) and s.dst not in PACKAGES)
    for split in SPLITS:
        touched = do_split(split)
        changed.update(touched)
        prune.update(touched)
    for class_split in CLASS_SPLITS:
        touched = do_class_split(class_split)
        changed.update(touched)
        prune.update(touched)
    documented = {
        rewrite_dotted(name)
        for path in text_files()
        if path.suffix == ".md"
        for name in re.findall(r"^::: ([\w.]+)", path.read_text(), flags=re.M)
    }
    for path in text_files():
        text = path.read_text()
        new = rewrite_text(text)
        if path.name == "__init__.py" and module_of(path) == (CORE, True):
            new = rewrite_lazy_homes(new)
        if path.suffix == ".md":
            new = add_directives(new, documented)
            documented |= set(re.findall(r"^::: ([\w.]+)", new, flags=re.M))
        if path.suffix == ".py":
            new = rewrite_imports(path, new, None)  # imports a split made, and names a split moved
        if path.suffix == ".py":
            new = clean_pass(new)
        if new != text:
            path.write_text(new)
            changed.add(path)
    python = sorted(str(p) for p in changed if p.suffix == ".py" and p.exists())
    for _ in range(2) if prune else ():
        files = sorted(str(p) for p in prune if p.exists())
        subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--quiet", "--fix", "--select", "F401,F811,I001", *files],
            check=False,
        )
        for name in files:  # a TYPE_CHECKING block ruff emptied
            Path(name).write_text(clean_pass(Path(name).read_text()))
        subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--quiet", "--fix", "--select", "F401,I001", *files], check=False
        )
    if python:
        subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--quiet", "--fix", "--select", "I001,RUF022", *python], check=False
        )
        subprocess.run([sys.executable, "-m", "ruff", "format", "--quiet", *python], check=False)
    created = {str(module_path(s.dst)) for s in SPLITS if s.dst and s.dst not in _EXISTING_DSTS}
    created |= {str(module_path(s.dst)) for s in CLASS_SPLITS}
    for name in sorted(str(p) for p in prune if p.exists()):
        text = Path(name).read_text()
        new = clean_pass(text)
        if name in created:  # ruff's pruning leaves `import (\n    X,\n)`: one line, wrapped again if long
            new = re.sub(
                r"^(from [\w.]+ import )\(([^)]*)\)",
                lambda m: m.group(1) + " ".join(m.group(2).split()).rstrip(","),
                new,
                flags=re.M,
            )
        if new != text:
            Path(name).write_text(new)
            subprocess.run([sys.executable, "-m", "ruff", "check", "--quiet", "--fix", "--select", "F401,I001", name])
            subprocess.run([sys.executable, "-m", "ruff", "format", "--quiet", name], check=False)
    for name in sorted(str(p) for p in prune if p.exists()):  # pyright strict refuses a private import
        for node in ast.walk(ast.parse(Path(name).read_text())):
            if isinstance(node, ast.ImportFrom) and node.level and any(a.name.startswith("_") for a in node.names):
                private = [a.name for a in node.names if a.name.startswith("_")]
                print(
                    f"refactor_core: {name} imports private {private}: add them to a split's renames", file=sys.stderr
                )
    print(f"refactor_core: {len(changed)} files changed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
