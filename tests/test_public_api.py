"""Each package's public API is its `__all__`: every name listed resolves and is documented."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pathlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize("package", ["acpkit_core", "pydantic_acp", "langchain_acp"])
def test_all_names_resolve_and_have_docstrings(package: str) -> None:
    module = importlib.import_module(package)
    names = list(module.__all__)
    assert names, f"{package}.__all__ is empty"
    assert len(names) == len(set(names)), f"{package}.__all__ lists a name twice"
    undocumented: list[str] = []
    for name in names:
        obj = getattr(module, name)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and not inspect.getdoc(obj):
            undocumented.append(name)
    assert undocumented == []


@pytest.mark.parametrize(
    ("package", "deferred"),
    [
        ("pydantic_acp", ["pydantic_acp._delegate", "acpkit_core.delegate"]),
        ("langchain_acp", ["langchain_acp._delegate", "langchain_acp._scripted_model", "acpkit_core.delegate"]),
    ],
)
def test_what_serving_does_not_use_is_imported_on_first_use(package: str, deferred: list[str]) -> None:
    """Importing an adapter (every served agent's start-up) leaves out the modules only delegating to
    another ACP agent or an offline script needs; their names still import from the package."""
    code = (
        f"import sys, {package}\n"
        f"print(sorted(m for m in {deferred!r} if m in sys.modules))\n"
        f"print(all(getattr({package}, n) for n in {package}._LAZY))\n"
        f"print(sorted(m for m in {deferred!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "True", str(sorted(deferred))]


def test_core_never_imports_an_adapter() -> None:
    core = pathlib.Path(importlib.import_module("acpkit_core").__file__ or "").parent
    offenders = [
        str(p.relative_to(core))
        for p in core.rglob("*.py")
        if any(f"{word} " in p.read_text() for word in ("import pydantic_acp", "import langchain_acp"))
        or any(f"from {pkg}" in p.read_text() for pkg in ("pydantic_acp", "langchain_acp", "pydantic_ai", "langchain"))
    ]
    assert offenders == []


def test_adapters_never_import_each_other() -> None:
    for pkg, other in (("pydantic_acp", "langchain_acp"), ("langchain_acp", "pydantic_acp")):
        root = pathlib.Path(importlib.import_module(pkg).__file__ or "").parent
        offenders = [str(p) for p in root.rglob("*.py") if other in p.read_text()]
        assert offenders == [], f"{pkg} imports {other}"


RUNNER_CONTRACT = frozenset(
    {
        "acpkit_core",
        "acpkit_core.cli.adapters",
        "acpkit_core.config",
        "acpkit_core.delegate",
        "acpkit_core.errors",
        "acpkit_core.extensions",
        "acpkit_core.permissions",
        "acpkit_core.prompt",
        "acpkit_core.prompt.ir",
        "acpkit_core.prompt.media",
        "acpkit_core.prompt.parse",
        "acpkit_core.prompt.text",
        "acpkit_core.runner.capabilities",
        "acpkit_core.runner.elicitation",
        "acpkit_core.runner.emitter",
        "acpkit_core.runner.host",
        "acpkit_core.runner.notices",
        "acpkit_core.runner.permission_gate",
        "acpkit_core.runner.plan",
        "acpkit_core.runner.protocols",
        "acpkit_core.runner.providers",
        "acpkit_core.runner.rewind",
        "acpkit_core.runner.stop",
        "acpkit_core.runner.tool_classification",
        "acpkit_core.runner.tool_lifecycle",
        "acpkit_core.runner.tool_presentation",
        "acpkit_core.runner.tool_presenter",
        "acpkit_core.runner.tool_presets",
        "acpkit_core.runner.types",
        "acpkit_core.runner.updates",
        "acpkit_core.runner.warmup",
        "acpkit_core.store",
        "acpkit_core.thinking",
    }
)
"""The core modules an adapter may import: the public runner contract (docs/core/runner.md)."""


def _core_imports(path: pathlib.Path) -> set[str]:
    """Every `acpkit_core` module a file imports (`from acpkit_core import server` counts as `acpkit_core.server`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "acpkit_core")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != "acpkit_core":
                continue
            submodules: set[str] = set()
            if hasattr(importlib.import_module(node.module), "__path__"):  # a package: a name may be a module
                submodules = {
                    f"{node.module}.{a.name}"
                    for a in node.names
                    if importlib.util.find_spec(f"{node.module}.{a.name}") is not None
                }
            found.update(submodules)
            if len(submodules) < len(node.names):  # a name from the module itself
                found.add(node.module)
    return found


@pytest.mark.parametrize("package", ["pydantic_acp", "langchain_acp"])
def test_adapters_import_only_the_public_runner_contract(package: str) -> None:
    root = pathlib.Path(importlib.import_module(package).__file__ or "").parent
    offenders: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        outside = _core_imports(path) - RUNNER_CONTRACT
        if outside:
            offenders[str(path.relative_to(root))] = outside
    assert offenders == {}


def test_every_runner_contract_module_is_public_and_documented() -> None:
    docs = "\n".join(p.read_text() for p in pathlib.Path(__file__).parent.parent.joinpath("docs").rglob("*.md"))
    for name in sorted(RUNNER_CONTRACT):
        module = importlib.import_module(name)
        assert not any(part.startswith("_") for part in name.split(".")), name
        assert name == "acpkit_core" or f"::: {name}" in docs or name == "acpkit_core.prompt", (
            f"{name} is not in the docs"
        )
        assert getattr(module, "__all__", None), f"{name} has no __all__"


ADAPTER_ROLE_MODULES = frozenset(
    {
        "_agent",
        "_runner",
        "_render",
        "_events",
        "_stop",
        "_history",
        "_approvals",
        "_modes",
        "_mcp",
        "_thinking",
        "_delegate",
        "_cli_adapter",
        "_ask",
        "_warm",
    }
)
"""The modules both adapters have, one per role (the table in docs/design.md)."""


def _modules(package: str) -> set[str]:
    root = pathlib.Path(importlib.import_module(package).__file__ or "").parent
    return {p.stem for p in root.glob("*.py") if p.stem != "__init__"}


def test_both_adapters_have_the_same_role_modules() -> None:
    pydantic_modules, langchain_modules = _modules("pydantic_acp"), _modules("langchain_acp")
    assert ADAPTER_ROLE_MODULES - pydantic_modules == set()
    assert ADAPTER_ROLE_MODULES - langchain_modules == set()
    docs = pathlib.Path(__file__).parent.parent.joinpath("docs", "design.md").read_text()
    assert {m for m in ADAPTER_ROLE_MODULES if f"`{m}.py`" not in docs} == set()


@pytest.mark.parametrize("package", ["pydantic_acp", "langchain_acp"])
def test_adapter_modules_are_private_and_flat(package: str) -> None:
    """The public API is the package root: every module is private, and there are no subpackages."""
    root = pathlib.Path(importlib.import_module(package).__file__ or "").parent
    assert {m for m in _modules(package) if not m.startswith("_")} == set()
    assert [p.name for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"] == []


def test_stop_reason_helpers_are_named_one_way() -> None:
    names = {
        n for pkg in ("acpkit_core", "pydantic_acp", "langchain_acp") for n in importlib.import_module(pkg).__all__
    }
    stop_helpers = {n for n in names if n.startswith("stop_reason_")}
    assert stop_helpers and all(n.startswith("stop_reason_from_") for n in stop_helpers), stop_helpers
