"""mkdocs hook: option reference tables generated from the options' own docstrings.

A page writes `<!-- options-table: package.module.Name -->` on a line of its own; the hook puts
there a table of the class's fields (a dataclass's with their defaults, a `TypedDict`'s with their
types), each described by the docstring under the field. The options are documented once, in the
code, and the tables cannot drift from it (`tests/test_options.py` checks that too).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import textwrap
from typing import Any

MARKER = re.compile(r"^<!-- options-table: ([\w.]+) -->$", re.MULTILINE)


def field_docs(cls: type) -> list[tuple[str, str, str]]:
    """`(name, annotation, docstring)` of each field of `cls`, its bases' first (as `TypedDict` merges them)."""
    rows: dict[str, tuple[str, str, str]] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__ in {"builtins", "typing", "typing_extensions"}:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in zip(body, [*body[1:], None], strict=True):
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            if node.target.id.startswith("_"):  # private state, not an option
                continue
            doc = ""
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                doc = " ".join(str(after.value.value).split())
            rows[node.target.id] = (node.target.id, ast.unparse(node.annotation), doc)
    return list(rows.values())


def _default(cls: type, name: str) -> str:
    for f in dataclasses.fields(cls):
        if f.name == name:
            if f.default is not dataclasses.MISSING:
                return f"`{f.default!r}`"
            if f.default_factory is not dataclasses.MISSING:
                return f"`{f.default_factory()!r}`"
    return "required"


def options_table(path: str) -> str:
    """The markdown table for the class at `path` (`package.module.Name`)."""
    module, _, name = path.rpartition(".")
    cls: Any = getattr(importlib.import_module(module), name)
    cell = lambda text: text.replace("|", "\\|")  # noqa: E731
    if dataclasses.is_dataclass(cls):
        lines = ["| keyword | default | meaning |", "|---|---|---|"]
        lines += [f"| `{n}` | {cell(_default(cls, n))} | {cell(d)} |" for n, _, d in field_docs(cls)]
    else:
        own = set(inspect.get_annotations(cls))
        lines = ["| keyword | type | meaning |", "|---|---|---|"]
        lines += [f"| `{n}` | `{cell(t)}` | {cell(d)} |" for n, t, d in field_docs(cls) if n in own]
    return "\n".join(lines)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Replace each marker with its table."""
    return MARKER.sub(lambda m: options_table(m.group(1)), markdown)
