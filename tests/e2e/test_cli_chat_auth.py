"""`acpkit chat` and an agent requiring authentication: it authenticates from its environment, or says what to set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

AGENT = f"{sys.executable} {Path(__file__).parent / 'agents' / 'scripted_agent.py'} --store memory --auth"


def _chat(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "ACME_API_KEY"}
    environ.update({"NO_COLOR": "1", **env})
    return subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", "chat", "--agent", AGENT, "-p", "say authenticated"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=environ,
    )


def test_chat_authenticates_with_the_key_in_its_environment_or_says_what_to_set(tmp_path: Path) -> None:
    ok = _chat(tmp_path, ACME_API_KEY="k-123")
    assert ok.returncode == 0, ok.stderr
    assert "authenticated" in ok.stdout
    refused = _chat(tmp_path)
    assert refused.returncode == 2
    assert (
        "acpkit chat: cannot open the session: the agent requires authentication: set ACME_API_KEY "
        "(ACME API key, see https://acme.example/keys), then start again"
    ) in refused.stderr
