"""Every Python example in docs/pydantic/{index,configuration,features}.md runs and builds an ACP agent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from acpkit_core.server import AcpAgent

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pydantic"
BLOCKS = [
    (f"{name}:{i}", code)
    for name in ("index.md", "configuration.md", "features.md")
    for i, code in enumerate(re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(encoding="utf-8"), re.S))
]


def test_the_docs_have_examples() -> None:
    assert len([b for b in BLOCKS if b[0].startswith("features.md")]) >= 10


@pytest.mark.parametrize(("where", "code"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_doc_example(where: str, code: str) -> None:
    if "run_acp(" in code:  # serves stdio forever: check it compiles
        compile(code, where, "exec")
        return
    namespace: dict[str, object] = {"__name__": "docs_example"}
    exec(compile(code, where, "exec"), namespace)
    assert isinstance(namespace["acp_agent"], AcpAgent)
