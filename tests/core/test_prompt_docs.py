"""The Python examples in the prompt documentation pages run and their assertions hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ["core/prompt.md", "pydantic/prompt.md", "langchain/prompt.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


@pytest.mark.parametrize("page", PAGES)
def test_examples_run(page: str) -> None:
    blocks = BLOCK.findall((DOCS / page).read_text(encoding="utf-8"))
    assert blocks, f"{page} has no Python example"
    for number, code in enumerate(blocks, 1):
        exec(compile(code, f"{page} example {number}", "exec"), {"__name__": f"docs_example_{number}"})
