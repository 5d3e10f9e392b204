"""What `acpkit chat` shows on a terminal and in a pipe: markdown, the status line, errors, keys, safety.

Each test drives a real agent subprocess (the raw-SDK `sdk_cli_agent.py` or the core server's
`scripted_agent.py`) from a real `acpkit chat` process, through a pseudo-terminal (pexpect) when the
test is about the terminal, and reads what the user would see through a small terminal emulator.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from terminal_screen import Screen

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

AGENTS = Path(__file__).parent / "agents"
SDK_AGENT = f"{sys.executable} {AGENTS / 'sdk_cli_agent.py'}"
CORE_AGENT = f"{sys.executable} {AGENTS / 'scripted_agent.py'}"
TIMEOUT = 30
ROWS, COLS = 40, 100
PROMPT_READY = "\x1b\\[\\?2004h"
"""prompt_toolkit turns on bracketed paste when the input line is ready."""
_ESC = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"


def see(child: pexpect.spawn, text: str) -> None:
    """Wait for `text` on the terminal, whatever styling escape codes sit between its characters."""
    child.expect(_ESC.join(re.escape(c) for c in text))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("hello notes\n")
    (tmp_path / "state").mkdir()
    return tmp_path


def _env(workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "PROMPT_TOOLKIT_NO_CPR": "1",
            "TERM": "xterm",
            "NO_COLOR": "1",
            "COLUMNS": str(COLS),
            "LINES": str(ROWS),
            "ACPKIT_STATE_DIR": str(workdir / "state"),
        }
    )
    return env


def _spawn(workdir: Path, *args: str) -> pexpect.spawn:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "acpkit_core.cli", "chat", *args],
        cwd=str(workdir),
        env=_env(workdir),
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(ROWS, COLS),
    )
    child.logfile_read = _Recorder()
    return child


class _Recorder:
    """Everything the child wrote to the terminal."""

    def __init__(self) -> None:
        self.data = ""

    def write(self, text: str) -> None:
        self.data += text

    def flush(self) -> None:
        pass


def _raw(child: pexpect.spawn) -> str:
    recorder = child.logfile_read
    assert isinstance(recorder, _Recorder)
    return recorder.data


def _screen(child: pexpect.spawn) -> str:
    screen = Screen(ROWS, COLS)
    screen.feed(_raw(child))
    return screen.text()


def _finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None
    return child.exitstatus


def _chat(workdir: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", "chat", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=TIMEOUT,
        env=_env(workdir),
    )


def _logs(workdir: Path) -> str:
    return "".join(p.read_text() for p in sorted((workdir / "state" / "logs").glob("chat-*.log")))


# --- markdown (issue 13 item 7) ----------------------------------------------------------------------


def test_markdown_is_rendered_once_on_a_terminal(workdir: Path) -> None:
    child = _spawn(workdir, "--agent", SDK_AGENT, "-p", "markdown")
    assert _finish(child) == 0
    screen = _screen(child)
    assert "Release notes" in screen
    for raw in ("# Release", "**", "`inline", "```"):
        assert raw not in screen, raw  # markdown syntax is rendered, not shown
    lines = screen.splitlines()
    assert [ln.strip() for ln in lines if "important" in ln] == ["This is important and inline code."]
    assert sum("first item" in ln for ln in lines) == 1  # streamed in 3-character chunks, printed once
    assert any(ln.strip() == "• first item" for ln in lines)
    assert sum("print('hi')" in ln for ln in lines) == 1
    assert sum("The end." in ln for ln in lines) == 1
    assert screen.index("Release notes") < screen.index("important") < screen.index("The end.") < screen.index("stop:")


def test_markdown_stays_plain_in_a_pipe(workdir: Path) -> None:
    result = _chat(workdir, "--agent", SDK_AGENT, "-p", "markdown")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "# Release notes\n\nThis is **important** and `inline code`.\n\n- first item\n- second item\n\n"
        "```python\nprint('hi')\n```\n\nThe end.\nstop: end_turn\n"
    )


# --- the status line (issue 13 item 6) ---------------------------------------------------------------


def test_status_line_while_waiting_and_while_a_tool_runs_then_cleared(workdir: Path) -> None:
    child = _spawn(
        workdir, "--agent", f"{CORE_AGENT} --store memory", "-p", "sleep 1\ntool search open\nsleep 1.5\nsay all done"
    )
    see(child, "waiting for the agent")  # from the prompt until the first update
    see(child, "running search")  # while the tool call is open
    see(child, "all done")
    assert _finish(child) == 0
    screen = _screen(child)
    assert "▸ search  [search]" in screen
    assert "all done" in screen and "stop: end_turn" in screen
    for status in ("waiting for the agent", "running search", "Ctrl-C to cancel", "starting the agent"):
        assert status not in screen, status  # the status line never stays behind


def test_no_status_line_in_a_pipe(workdir: Path) -> None:
    result = _chat(workdir, "--agent", f"{CORE_AGENT} --store memory", "-p", "sleep 0.5\nsay done")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\nstop: end_turn\n"
    assert "waiting" not in result.stderr


# --- control characters (issue 17 item 9) ------------------------------------------------------------

_FORBIDDEN = ("\x1b[2J", "\x1b]0;", "\x07", "\x00", "\x9b", "\x1b[31m")


def test_control_sequences_from_the_agent_are_shown_not_obeyed(workdir: Path) -> None:
    child = _spawn(workdir, "--agent", SDK_AGENT, "-p", "controls")
    assert _finish(child) == 0
    raw = _raw(child)
    for sequence in _FORBIDDEN:
        assert sequence not in raw, repr(sequence)
    screen = _screen(child)
    assert "thinking: pondering␇␛[2J␛]0;pwned␇␀" in screen
    assert "▸ tool␛]0;pwned␇title  [execute]" in screen
    assert "out␛[31mput␀" in screen
    assert "[ ] step␛[2J␀one" in screen
    assert "visible ␛[2J␛]0;pwned␇␀text\\x9b2J end" in screen


def test_control_sequences_are_shown_not_obeyed_in_a_pipe(workdir: Path) -> None:
    result = _chat(workdir, "--agent", SDK_AGENT, "-p", "controls")
    assert result.returncode == 0, result.stderr
    for sequence in _FORBIDDEN:
        assert sequence not in result.stdout, repr(sequence)
    assert "visible ␛[2J␛]0;pwned␇␀text\\x9b2J end" in result.stdout


# --- a failing turn (issue 13 item 9, client side) ---------------------------------------------------


def test_turn_answered_with_an_error_is_one_line_and_exit_1(workdir: Path) -> None:
    result = _chat(workdir, "--agent", SDK_AGENT, "-p", "fail")
    assert result.returncode == 1
    out = result.stdout + result.stderr
    lines = [ln for ln in out.splitlines() if "the turn failed" in ln]
    assert len(lines) == 1
    assert lines[0].startswith("✗ the turn failed: The agent failed: ValueError: the model said no (details: ")
    assert "Traceback" not in out
    assert '"traceback": "Traceback ...\\nValueError"' in _logs(workdir)  # the error's data, in the log


def test_runner_failure_shows_the_cause_and_logs_the_traceback(workdir: Path) -> None:
    result = _chat(workdir, "--agent", f"{CORE_AGENT} --store memory", "-p", "fail the model is down")
    out = result.stdout + result.stderr
    assert "Traceback" not in out  # the agent's traceback goes to the log file
    assert "RuntimeError: the model is down" in out
    assert "(details: " in out
    log = _logs(workdir)
    assert "Traceback (most recent call last)" in log and "RuntimeError: the model is down" in log
    verbose = _chat(workdir, "--agent", f"{CORE_AGENT} --store memory", "-p", "fail again", "--verbose")
    assert "Traceback (most recent call last)" in verbose.stderr  # --verbose shows it


# --- agents that cannot start or are not ACP agents (issue 13 item 12) -------------------------------


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("no-such-agent-command-xyz --flag", "acpkit chat: no-such-agent-command-xyz: command not found"),
        (
            f"{sys.executable} -c \"print('hello, I am not ACP')\"",
            "is not an ACP agent: it exited (code 0) without answering initialize. "
            "It printed, instead of JSON-RPC: hello, I am not ACP",
        ),
        ("cat", "acpkit chat: cat refused initialize (Method not found); is it an ACP agent?"),
        (f'{sys.executable} -c "import time; time.sleep(60)"', "did not answer initialize within 1 s"),
    ],
    ids=["missing", "prints-text", "echoes", "silent"],
)
def test_agent_that_is_missing_or_not_acp_gets_a_clear_error(workdir: Path, agent: str, message: str) -> None:
    result = _chat(workdir, "--agent", agent, "-p", "hi", "--timeout", "1")
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# --- keys and commands at the prompt (issue 13 item 8) ------------------------------------------------


@pytest.fixture
def chat(workdir: Path) -> Iterator[pexpect.spawn]:
    (workdir / "subdir").mkdir()
    child = _spawn(workdir, "--agent", SDK_AGENT)
    see(child, "connected to Scripted agent 1.0")
    child.expect(PROMPT_READY)
    yield child
    if child.isalive():
        child.terminate(force=True)


def test_ctrl_c_at_the_prompt_clears_the_line_and_twice_quits(chat: pexpect.spawn) -> None:
    chat.send("a line I do not want")
    see(chat, "want")
    chat.sendintr()
    see(chat, "(Ctrl-C again or Ctrl-D to quit)")
    chat.expect(PROMPT_READY)
    chat.send("/echo kept\r")
    see(chat, "echo: kept")  # the cleared text was not sent with it
    chat.expect(PROMPT_READY)
    chat.sendintr()
    see(chat, "(Ctrl-C again or Ctrl-D to quit)")
    chat.expect(PROMPT_READY)
    chat.sendintr()
    assert _finish(chat) == 0
    assert "want/echo" not in _screen(chat)


def test_help_and_unknown_commands_stay_local(chat: pexpect.spawn) -> None:
    chat.send("/help\r")
    see(chat, "the agent's commands:")
    see(chat, "/echo  Repeat the text after the command")
    see(chat, "/quit  end the chat")
    chat.expect(PROMPT_READY)
    chat.send("/nosuch please\r")
    see(chat, "unknown command /nosuch (not sent; /help lists the commands)")
    chat.expect(PROMPT_READY)
    chat.send("/echo after\r")
    see(chat, "echo: after")
    chat.expect(PROMPT_READY)
    screen = _screen(chat)
    assert screen.count("echo: ") == 1  # only /echo reached the agent
    assert "stop: " not in screen  # a command the agent answered itself is not a turn: no stop line
    chat.send("/qu")
    chat.send("\t")  # completes the chat's own /quit
    chat.send("\r")
    assert _finish(chat) == 0


def test_directory_completion_adds_a_slash(chat: pexpect.spawn) -> None:
    chat.send("/echo @sub")
    chat.send("\t")
    see(chat, "dir/")
    chat.send("\r")
    see(chat, "linked directory subdir")
    see(chat, "echo: @subdir/")
    chat.expect(PROMPT_READY)
    chat.sendeof()
    assert _finish(chat) == 0


# --- sessions of several agents (issue 13 item 10) ---------------------------------------------------


def _sessions(workdir: Path, agent: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", "sessions", "--agent", agent, *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=_env(workdir),
    )


@pytest.mark.timeout(240)  # seven agent starts
def test_sessions_show_their_agent_and_resuming_another_agents_warns(workdir: Path) -> None:
    store = workdir / "shared.sqlite3"
    alpha = f"{CORE_AGENT} --store {store} --name alpha"
    beta = f"{CORE_AGENT} --store {store} --name beta"
    first = _chat(workdir, "--agent", alpha, "-p", "remember @notes.txt please", "--json")
    assert first.returncode == 0, first.stderr
    session_id = next(
        m["message"]["result"]["sessionId"]
        for m in map(json.loads, first.stdout.splitlines())
        if "sessionId" in m["message"].get("result", {})
    )
    rows = [json.loads(line) for line in _sessions(workdir, beta, "--json").stdout.splitlines()]
    assert [(r["sessionId"], r["agent"]) for r in rows] == [(session_id, "alpha")]
    listed = _sessions(workdir, beta)
    assert re.search(rf"^{session_id}  \S+\s+alpha  remember @notes.txt please", listed.stdout, re.M), listed.stdout
    assert "1 of these sessions belong to other agents than 'beta'" in listed.stderr
    assert "other agents" not in _sessions(workdir, alpha).stderr

    child = _spawn(workdir, "--agent", beta, "--session", session_id)
    see(child, f"warning: session {session_id} belongs to the agent 'alpha', not 'beta'")
    see(child, "you: remember @notes.txt please [resource:")  # the replay, with its space
    child.expect(PROMPT_READY)
    child.sendeof()
    assert _finish(child) == 0
    same = _spawn(workdir, "--agent", alpha, "--session", session_id)
    see(same, "you: remember @notes.txt please [resource:")
    same.expect(PROMPT_READY)
    same.sendeof()
    assert _finish(same) == 0
    assert "warning: session" not in _screen(same)
