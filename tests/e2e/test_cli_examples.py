"""The README's main-job command: `acpkit chat examples/<agent>.py -p ...` shows a whole offline turn."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ESC = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"


def _text(text: str) -> str:
    return ESC.join(re.escape(c) for c in text)


def _example(name: str) -> Path:
    return EXAMPLES / name


@pytest.mark.parametrize("name", ["pydantic_agent.py", "langgraph_agent.py"])
def test_one_shot_turn_with_permission_from_stdin(tmp_path: Path, name: str) -> None:
    example = _example(name)
    (tmp_path / "notes.md").write_text("# Notes\nACP Kit serves Python agents to editors.\n")
    (tmp_path / "README.md").write_text("# Project\nA README the LangGraph example reads.\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "ACPKIT_MODEL"}
    result = subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", "chat", str(example), "-p", "Read notes.md and save a summary"],
        cwd=tmp_path,
        input="y\n",
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "thinking: " in out
    assert "[read]" in out
    assert "permission: " in out and "permission answered: " in out and "(allow_once)" in out
    assert "plan:" in out
    assert "stop: end_turn" in out
    written = [p for p in tmp_path.iterdir() if p.name not in {"notes.md", "README.md"} and p.is_file()]
    assert written, "the agent wrote nothing after permission was given"
    # a diff sent again with the completed update is shown once
    assert out.count("    diff ") <= 1
    if name == "pydantic_agent.py":
        assert out.count("    diff ") == 1


def test_interactive_turn_in_a_terminal(tmp_path: Path) -> None:
    example = _example("pydantic_agent.py")
    (tmp_path / "notes.md").write_text("hello\n")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "acpkit_core.cli", "chat", str(example)],
        cwd=str(tmp_path),
        env={**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"},
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )
    child.expect(r"\x1b\[\?2004h")
    child.sendline("Read @notes.md and save a summary")
    child.expect(_text("attached notes.md"))
    child.expect(_text("answer [1-4, y/n]:"))
    child.sendline("y")
    child.expect(_text("stop: end_turn"))
    child.expect(r"\x1b\[\?2004h")
    child.sendeof()
    child.expect(pexpect.EOF)
