"""Shared test fixtures: every test runs with its own ACP Kit state directory."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ACPKIT_STATE_DIR at a fresh temp directory so no test touches the real home."""
    state = tmp_path_factory.mktemp("acpkit-state")
    monkeypatch.setenv("ACPKIT_STATE_DIR", str(state))
    return state
