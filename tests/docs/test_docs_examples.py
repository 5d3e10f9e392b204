"""Every Python block in `docs/`, the README and the package READMEs runs, or is marked as a fragment.

The conventions (also in docs/contributing.md):

- a block runs on its own, in a fresh namespace, from the repository root, with the offline model
  preamble (`docs_preamble.py`: real model names resolve to offline models); top-level `await` is allowed;
- `<!-- docs: continue -->` on the line before the fence: the block runs in the namespace the previous
  block of the same page left (a walkthrough split in steps);
- `<!-- docs: fragment -->`: the block is only compiled (a method body, a diff of an earlier example);
- a block that serves over stdio (`run_acp(`, `run_stdio(`, `acp.run_agent(`) is started as a subprocess and must answer
  `initialize` and `session/new` from the SDK client; marked `continue`, it runs after the blocks it continues;
- a block that leaves a name `acp_agent` must have built an `AcpAgent`.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
import sys
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FENCE = re.compile(r"^(?P<indent>[ \t]*)```python[^\n]*\n(?P<code>.*?)^(?P=indent)```[ \t]*$", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"<!--\s*docs:\s*(?P<kind>fragment|continue)\s*-->")
SERVES = re.compile(r"\b(run_acp|run_stdio|run_agent)\(")


@dataclass(frozen=True)
class Block:
    page: str
    number: int
    line: int
    code: str
    marker: str | None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.number}"


def _pages() -> list[Path]:
    pages = [ROOT / "README.md", *sorted((ROOT / "packages").glob("*/README.md"))]
    return pages + sorted((ROOT / "docs").rglob("*.md"))


def _blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found: list[Block] = []
    for number, match in enumerate(FENCE.finditer(text), 1):
        before = text[: match.start()].rstrip().rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        code = textwrap.dedent(match.group("code"))
        line = text.count("\n", 0, match.start()) + 2
        found.append(Block(str(page.relative_to(ROOT)), number, line, code, marker.group("kind") if marker else None))
    return found


BLOCKS = [block for page in _pages() for block in _blocks(page)]


def _compile(block: Block) -> Any:
    # line numbers in tracebacks point into the Markdown page
    source = "\n" * (block.line - 1) + block.code
    return compile(source, str(ROOT / block.page), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def test_every_page_s_blocks_are_found() -> None:
    assert len(BLOCKS) >= 60
    assert {"README.md", "docs/installation.md", "docs/migrating-from-1x.md"} <= {b.page for b in BLOCKS}
    assert not [b.id for b in BLOCKS if b.marker == "continue" and b.number == 1]


_namespaces: dict[str, dict[str, Any]] = {}


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_doc_block(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _compile(block)  # every block, fragments included, is valid Python
    if block.marker == "fragment":
        return
    if SERVES.search(block.code):
        asyncio.run(_serve(block, tmp_path))
        return
    sys.path.insert(0, str(HERE))
    try:
        import docs_preamble  # pyright: ignore[reportMissingImports]
    finally:
        sys.path.remove(str(HERE))
    docs_preamble.install(monkeypatch.setattr)
    monkeypatch.chdir(ROOT)  # as a reader in a clone: `examples/...` paths resolve
    # `_run` registers each block as the module `docs_example`; restore sys.modules afterwards.
    monkeypatch.setitem(sys.modules, "docs_example", types.ModuleType("docs_example"))
    namespace = _run(block, _namespace_before(block))
    _namespaces[block.id] = namespace
    if "acp_agent" in namespace:
        assert isinstance(namespace["acp_agent"], AcpAgent)


def _run(block: Block, namespace: dict[str, Any]) -> dict[str, Any]:
    """Run the block with `namespace` as its globals; returns the globals it left.

    The globals are a module's, as when a reader runs the file: `dataclasses` looks the class's
    module up in `sys.modules` to read its (string) annotations.
    """
    module = types.ModuleType("docs_example")
    module.__dict__.update(namespace)
    sys.modules["docs_example"] = module
    result = eval(_compile(block), module.__dict__)
    if inspect.iscoroutine(result):
        asyncio.run(result)
    return module.__dict__


def _namespace_before(block: Block) -> dict[str, Any]:
    """A fresh namespace, or for a `continue` block a copy of the one the block before left.

    Under pytest-xdist the block before may have run in another worker: it is then run here first.
    """
    if block.marker != "continue":
        return {"__name__": "docs_example"}
    before = [b for b in BLOCKS if b.page == block.page][block.number - 2]
    if before.id not in _namespaces:
        runs = before.marker != "fragment" and not SERVES.search(before.code)
        assert runs, f"{block.id} continues {before.id}, which does not run"
        _namespaces[before.id] = _run(before, _namespace_before(before))
    return dict(_namespaces[before.id])


def served_code(block: Block) -> str:
    """The code a serving block runs: its own, after that of the blocks it continues (a walkthrough's steps)."""
    page = [b for b in BLOCKS if b.page == block.page]
    chain = [block]
    while chain[0].marker == "continue":
        chain.insert(0, page[chain[0].number - 2])
    return "\n".join(b.code for b in chain)


async def _serve(block: Block, tmp_path: Path) -> None:
    """Start the block as a script (after the preamble) and talk to it over stdio with the SDK client."""
    code = served_code(block)
    preamble = (
        f"import sys\nsys.path.insert(0, {str(HERE)!r})\nimport docs_preamble\n"
        f"docs_preamble.install(pydantic={'pydantic_ai' in code}, langchain={'langchain' in code})\n"
    )
    script = tmp_path / "example.py"
    script.write_text(preamble + code, encoding="utf-8")
    async with AcpTestClient.spawn(sys.executable, str(script), cwd=tmp_path) as client:
        try:
            init = await asyncio.wait_for(client.initialize(), 60)
            session = await asyncio.wait_for(client.new_session(tmp_path), 30)
        except Exception as exc:
            raise AssertionError(f"{block.id} did not serve: {exc!r}\n{client.stderr}") from exc
        assert init.agent_info is not None and init.agent_info.name
        assert session
