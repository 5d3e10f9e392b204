"""`acpkit chat` and an agent requiring authentication: it authenticates from its environment, or says what to set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect
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


TERMINAL_AGENT = (
    f"{sys.executable} {Path(__file__).parent / 'agents' / 'scripted_agent.py'} --store memory --terminal-auth"
)


PAINTER = str(Path(__file__).parents[1] / "pydantic" / "pyd_auth_ask_app.py") + ":acp_agent"


@pytest.mark.parametrize(
    ("agent", "prompt", "answer"),
    [
        (["--agent", TERMINAL_AGENT], "say hello after the login", "hello after the login"),
        # a TARGET: the chat starts `acpkit run TARGET`, whose login runs in the terminal too
        ([PAINTER, "--yes"], "Paint something.", "Painted it."),
    ],
    ids=["agent-command", "acpkit-run-target"],
)
def test_chat_runs_a_terminal_login_in_its_own_terminal_then_reconnects(
    tmp_path: Path, agent: list[str], prompt: str, answer: str
) -> None:
    key_file = tmp_path / "acme.key"
    env = {k: v for k, v in os.environ.items() if k != "ACME_API_KEY"}
    env.update({"NO_COLOR": "1", "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "ACME_KEY_FILE": str(key_file)})
    child = pexpect.spawn(
        sys.executable,
        ["-m", "acpkit_core.cli", "chat", *agent, "-p", prompt],
        cwd=str(tmp_path),
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )
    child.expect_exact("acpkit chat: the agent needs a login: Log in to ACME (in this terminal)")
    child.expect_exact("ACME API key: ")  # the agent's own program, asking in the chat's terminal
    child.sendline("k-789")
    child.expect_exact("acpkit chat: logged in; connecting again")
    child.expect_exact(answer)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert key_file.read_text() == "k-789"


def test_chat_says_so_when_the_terminal_login_fails(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ACME_API_KEY"}
    env.update({"NO_COLOR": "1", "TERM": "xterm", "ACME_KEY_FILE": str(tmp_path / "acme.key")})
    child = pexpect.spawn(
        sys.executable,
        ["-m", "acpkit_core.cli", "chat", "--agent", TERMINAL_AGENT, "-p", "say hi"],
        cwd=str(tmp_path),
        env=env,
        encoding="utf-8",
        timeout=60,
    )
    child.expect_exact("ACME API key: ")
    child.sendline("not-a-key")
    child.expect_exact("that is not an ACME key")
    child.expect_exact("acpkit chat: the login 'Log in to ACME' did not succeed (exit code 1)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
