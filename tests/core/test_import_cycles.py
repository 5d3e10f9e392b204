"""The core's shape: no import circle, no module over 600 lines, a short top level.

An import circle is counted whatever kind of import closes it: at module level, inside a function
(a lazy import), or under `if TYPE_CHECKING:` (type-only). Each of them says two modules own each
other's parts. What is not an edge: a string naming a module (`importlib.import_module(...)`, the
lazy `_HOMES` table of `acpkit_core/__init__.py`), and the package `__init__` Python runs before a
submodule: `from .prompt.ir import Prompt` is an edge to `acpkit_core.prompt.ir` only, so a
package's `__init__` may re-export its submodules.
"""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

MAX_LINES = 600
MAX_TOP_LEVEL = 10


def _modules(root: pathlib.Path) -> dict[str, tuple[pathlib.Path, bool]]:
    """Every module under the package at `root`: dotted name -> (file, is a package)."""
    out: dict[str, tuple[pathlib.Path, bool]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def import_graph(root: pathlib.Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (any import statement, anywhere in it)."""
    modules = _modules(root)
    package = root.name

    def known(name: str) -> str:
        while name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        base = name.split(".") if is_package else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                graph[name] |= {known(a.name) for a in node.names if a.name.split(".")[0] == package}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = base[: len(base) - node.level + 1]
                    source = ".".join([*anchor, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                if source.split(".")[0] != package:
                    continue
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    graph[name].add(submodule if submodule in modules else known(source))
        graph[name].discard(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _core() -> pathlib.Path:
    return pathlib.Path(importlib.import_module("acpkit_core").__file__ or "").parent


def test_no_import_circle_in_the_core() -> None:
    graph = import_graph(_core())
    found = cycles(graph)
    details = ["; ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) for c in found]
    assert details == []


def test_the_check_sees_type_only_and_lazy_circles(tmp_path: pathlib.Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .c import C\n")
    (package / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    (package / "b.py").write_text("def f():\n    from . import a\n")
    (package / "sub" / "c.py").write_text("import pkg.sub.d\nC = 1\n")
    (package / "sub" / "d.py").write_text("from ..sub.c import C\n")
    (package / "e.py").write_text("from .sub import C\n")  # the package, which imports c: no circle
    assert cycles(import_graph(package)) == [["pkg.a", "pkg.b"], ["pkg.sub.c", "pkg.sub.d"]]


def test_no_module_over_600_lines() -> None:
    core = _core()
    sizes = {str(p.relative_to(core)): len(p.read_text().splitlines()) for p in core.rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_the_top_level_keeps_configuration_and_errors() -> None:
    top = sorted(p.stem for p in _core().glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_LEVEL, top
    # the runner contract, the IR and the CLI's plugin discovery live in their packages
    for moved in ("runner", "emitter", "tool_calls", "presentation", "tools", "host", "ir", "adapters", "local_host"):
        assert moved not in top


@pytest.mark.parametrize("package", ["runner", "prompt", "cli", "client", "server", "telemetry", "store", "remote"])
def test_the_role_packages_exist(package: str) -> None:
    assert (_core() / package / "__init__.py").is_file()
