"""The "ACP support" page (docs/protocol.md): every method and update of the schema has a status."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _page() -> Any:
    spec = importlib.util.spec_from_file_location("protocol_page", ROOT / "docs/hooks/protocol_page.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_method_and_update_of_the_schema_has_a_status_and_no_status_is_stale() -> None:
    page = _page()
    listed = {**page.schema_methods(), **page.schema_updates()}
    assert page.missing_statuses() == []
    assert sorted(set(page.STATUS) - set(listed)) == []  # nothing the schema no longer has
    # what the page is generated from is the schema's full lists, both ways and every update kind
    assert listed["protocol:$/cancel_request"] is True and listed["agent:session/fork"] is False
    assert listed["update:usage_update"] is True and listed["update:notice"] is False
    assert sum(1 for k in listed if k.startswith("update:")) == 16


def test_a_method_without_a_status_fails_the_page() -> None:
    page = _page()
    del page.STATUS["agent:logout"]
    try:
        page.table("methods")
    except KeyError as error:
        assert "agent:logout" in str(error)
    else:
        raise AssertionError("the page was built with a method that has no status")


def test_the_page_has_a_row_per_method_and_update_and_every_marker_is_replaced() -> None:
    page = _page()
    markdown = page.on_page_markdown((ROOT / "docs" / "protocol.md").read_text())
    assert "<!-- acp-" not in markdown
    assert "| `$/cancel_request` | both ways | stable | yes |" in markdown
    assert "| `session/fork` | client → agent | unstable | yes, when negotiated |" in markdown
    assert "| `notice` | unstable | yes, when negotiated |" in markdown
    assert "| `compaction_summary_chunk` | unstable | yes, when negotiated |" in markdown
    assert "| `promptUsage` |" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| `")]
    assert len(rows) >= len(page.STATUS)
