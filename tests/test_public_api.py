"""Each package's public API is its `__all__`: every name listed resolves and is documented."""

from __future__ import annotations

import importlib
import inspect

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


def test_core_never_imports_an_adapter() -> None:
    import pathlib

    core = pathlib.Path(importlib.import_module("acpkit_core").__file__ or "").parent
    offenders = [
        str(p.relative_to(core))
        for p in core.rglob("*.py")
        if any(f"{word} " in p.read_text() for word in ("import pydantic_acp", "import langchain_acp"))
        or any(f"from {pkg}" in p.read_text() for pkg in ("pydantic_acp", "langchain_acp", "pydantic_ai", "langchain"))
    ]
    assert offenders == []


def test_adapters_never_import_each_other() -> None:
    import pathlib

    for pkg, other in (("pydantic_acp", "langchain_acp"), ("langchain_acp", "pydantic_acp")):
        root = pathlib.Path(importlib.import_module(pkg).__file__ or "").parent
        offenders = [str(p) for p in root.rglob("*.py") if other in p.read_text()]
        assert offenders == [], f"{pkg} imports {other}"
