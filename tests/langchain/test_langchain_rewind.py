"""Rewind with langchain-acp over real stdio: the LangGraph thread taken back to the checkpoint the
prompt started from, the files the tool's diffs changed put back (issue 26's "done means",
`tests/rewind_scenario.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from rewind_scenario import run_rewind_scenario

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

APP = str(Path(__file__).with_name("lc_rewind_app.py"))


async def test_rewind_retry_and_fork_over_stdio(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    await run_rewind_scenario([sys.executable, APP], root)
