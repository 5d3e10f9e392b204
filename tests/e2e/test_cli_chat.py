"""`acpkit chat` and `acpkit sessions` end to end: a real pseudo-terminal (pexpect) and real stdio pipes."""

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

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

AGENT = Path(__file__).parent / "agents" / "sdk_cli_agent.py"
TIMEOUT = 30
PROMPT_READY = "\x1b\\[\\?2004h"
"""prompt_toolkit turns on bracketed paste when the input line is ready (its prompt text is drawn with cursor moves)."""


_ESC = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"


def see(child: pexpect.spawn, text: str) -> None:
    """Wait for `text` on the terminal, whatever styling escape codes sit between its characters."""
    child.expect(_ESC.join(re.escape(c) for c in text))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("hello notes\n")
    return tmp_path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm", "NO_COLOR": "1", "COLUMNS": "120"})
    return env


@pytest.fixture
def chat(workdir: Path) -> Iterator[pexpect.spawn]:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "acpkit_core.cli", "chat", str(AGENT)],
        cwd=str(workdir),
        env=_env(),
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(40, 120),
    )
    see(child, "connected to Scripted agent 1.0")
    child.expect(PROMPT_READY)
    yield child
    if child.isalive():
        child.terminate(force=True)


def test_attachment_and_permission_answered(chat: pexpect.spawn, workdir: Path) -> None:
    chat.sendline("summarize @notes.txt please")
    see(chat, "attached notes.txt (text, 12 bytes)")
    see(chat, "thinking: The user wants notes")
    see(chat, "Read notes.txt  [read]")
    see(chat, "permission: Write out.txt  [edit]")
    see(chat, "1) Allow once (allow_once)")
    see(chat, "answer [1-3, y/n]:")
    chat.sendline("1")
    see(chat, "permission answered: Allow once")
    see(chat, "+HELLO NOTES")
    see(chat, "[x] Write out.txt")
    see(chat, "Done: out.txt written. Attachments: resource.")
    see(chat, "stop: end_turn")
    chat.expect(PROMPT_READY)
    assert (workdir / "out.txt").read_text() == "HELLO NOTES\n"
    chat.sendeof()
    chat.expect(pexpect.EOF)
    chat.close()
    assert chat.exitstatus == 0


def test_ctrl_c_cancels_then_second_quits(chat: pexpect.spawn) -> None:
    chat.sendline("slow please")
    see(chat, "working slowly...")
    chat.sendintr()
    see(chat, "cancelling the turn")
    see(chat, "stop: cancelled")
    chat.expect(PROMPT_READY)
    chat.sendline("slow again")
    see(chat, "working slowly...")
    chat.sendintr()
    see(chat, "cancelling the turn")
    see(chat, "stop: cancelled")  # the agent honours the first cancel
    chat.expect(PROMPT_READY)
    chat.sendline("/quit")
    chat.expect(pexpect.EOF)


def test_ctrl_c_twice_quits_a_stuck_turn(workdir: Path) -> None:
    stuck = workdir / "stuck.py"
    stuck.write_text(
        f"import sys\nsys.path.insert(0, {str(AGENT.parent)!r})\n"
        "import asyncio\nfrom sdk_cli_agent import ScriptedAgent\n"
        "class Stuck(ScriptedAgent):\n"
        "    async def cancel(self, session_id, **kwargs):\n"
        "        pass  # ignores session/cancel\n"
        "agent = Stuck()\n"
    )
    child = pexpect.spawn(
        sys.executable, ["-m", "acpkit_core.cli", "chat", str(stuck)], cwd=str(workdir), env=_env(), encoding="utf-8"
    )
    child.timeout = TIMEOUT
    child.expect(PROMPT_READY)
    child.sendline("slow")
    see(child, "working slowly...")
    child.sendintr()
    see(child, "Ctrl-C again to quit")
    child.sendintr()
    see(child, "quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_slash_command_completion(chat: pexpect.spawn) -> None:
    chat.send("/ec")
    chat.send("\t")
    see(chat, "Repeat the text after the command")  # the completion menu, from available_commands_update
    chat.send(" hi there\r")
    see(chat, "echo: hi there")
    chat.expect(PROMPT_READY)  # Ctrl-D typed before the line is ready would be lost
    chat.sendeof()
    chat.expect(pexpect.EOF)


def _chat(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", "chat", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=TIMEOUT,
        env=_env(),
    )


@pytest.mark.parametrize(
    ("stdin", "note"),
    [
        ("", "(no input left: rejected; --yes allows every request, --no rejects without asking)"),
        ("maybe\n", "('maybe' names no option: rejected)"),
    ],
    ids=["no-input", "no-such-option"],
)
def test_one_shot_without_an_answer_rejects_and_says_why(workdir: Path, stdin: str, note: str) -> None:
    result = _chat(str(AGENT), "-p", "go @notes.txt", cwd=workdir, stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert "permission answered: Reject (reject_once)" in result.stdout
    assert note in result.stderr
    assert not (workdir / "out.txt").exists()


def test_one_shot_answers_permission_from_stdin(workdir: Path) -> None:
    result = _chat(str(AGENT), "-p", "go @notes.txt", cwd=workdir, stdin="n\n")
    assert result.returncode == 0, result.stderr
    assert "permission: Write out.txt" in result.stdout
    assert "permission answered: Reject (reject_once)" in result.stdout
    assert "Done: out.txt not written (rejected). Attachments: resource." in result.stdout
    assert "✗ Write out.txt failed" in result.stdout
    assert "plan:\n  [x] Read notes.txt\n  [x] Write out.txt" in result.stdout
    assert "context: 120/1000 tokens" in result.stdout
    assert "stop: end_turn · tokens: 100 in, 20 out" in result.stdout
    assert not (workdir / "out.txt").exists()


def test_one_shot_without_an_answer_rejects(workdir: Path) -> None:
    result = _chat(str(AGENT), "-p", "go", "--no-thoughts", cwd=workdir)
    assert result.returncode == 0
    assert "not written (rejected)" in result.stdout
    assert "thinking:" not in result.stdout


@pytest.mark.parametrize(("prompt", "code"), [("refuse", 5), ("/echo x", 0)])
def test_one_shot_exit_code_follows_the_stop_reason(workdir: Path, prompt: str, code: int) -> None:
    assert _chat(str(AGENT), "-p", prompt, cwd=workdir).returncode == code


def test_json_transcript(workdir: Path) -> None:
    result = _chat(str(AGENT), "-p", "go", "--yes", "--json", cwd=workdir)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    methods = [(m["direction"], m["message"].get("method")) for m in lines]
    assert methods[0] == ("client->agent", "initialize")
    assert ("agent->client", "fs/read_text_file") in methods
    assert ("agent->client", "session/request_permission") in methods
    assert ("agent->client", "fs/write_text_file") in methods
    assert lines[-1]["message"]["result"]["stopReason"] == "end_turn"
    init = lines[0]["message"]["params"]["clientCapabilities"]
    assert init["fs"] == {"readTextFile": True, "writeTextFile": True} and init["terminal"] is True
    assert (workdir / "out.txt").read_text() == "HELLO NOTES\n"


def test_chat_drives_any_agent_command(workdir: Path) -> None:
    script = Path(sys.executable).parent / "acpkit"  # the console script, as an editor would run it
    agent = f"{script} run {AGENT}" if script.exists() else f"{sys.executable} -m acpkit_core.cli run {AGENT}"
    result = _chat("--agent", agent, "-p", "shell", cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert "terminal said 'from-the-terminal' and exited 3" in result.stdout
    result = _chat("--agent", agent, "-p", "escape", cwd=workdir)
    assert "refused: Invalid params" in result.stdout


def test_chat_reports_an_agent_that_cannot_start(workdir: Path) -> None:
    (workdir / "broken.py").write_text("import pydantic_ai.no_such_module_here\n")
    result = _chat("broken.py", "-p", "hi", cwd=workdir)
    assert result.returncode == 2
    root = Path(__file__).resolve().parents[2]
    # run from outside the workspace: `uv add` is told which project, so the hint runs as printed
    hint = f"Install the adapter with: uv add --project {root} --editable {root / 'packages' / 'pydantic-acp'}, then"
    assert hint in result.stderr
    assert "acpkit chat: the agent exited before answering (exit code 2)" in result.stderr


def test_sessions_lists_stored_sessions(workdir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", "sessions", str(AGENT), "--json"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows == [
        {"sessionId": "sess_stored", "cwd": str(workdir), "title": "A stored session", "updatedAt": None, "agent": None}
    ]


def test_session_resumed_one_shot(workdir: Path) -> None:
    result = _chat(str(AGENT), "-p", "/echo again", "--session", "sess_stored", "--json", cwd=workdir)
    assert result.returncode == 0, result.stderr
    methods = [json.loads(line)["message"].get("method") for line in result.stdout.splitlines()]
    assert "session/resume" in methods and "session/new" not in methods


def test_session_loaded_interactively_shows_history(workdir: Path) -> None:
    core_agent = Path(__file__).parent / "agents" / "scripted_agent.py"
    agent = f"{sys.executable} {core_agent} --store {workdir / 'sessions.sqlite3'}"
    first = _chat("--agent", agent, "-p", "remember the word kumquat", "--json", cwd=workdir)
    assert first.returncode == 0, first.stderr
    session_id = next(
        m["message"]["result"]["sessionId"]
        for m in map(json.loads, first.stdout.splitlines())
        if "sessionId" in m["message"].get("result", {})
    )
    listed = subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", "sessions", "--agent", agent],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert session_id in listed.stdout
    child = pexpect.spawn(
        sys.executable,
        ["-m", "acpkit_core.cli", "chat", "--agent", agent, "--session", session_id],
        cwd=str(workdir),
        env=_env(),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    # the banner first, then the history session/load replays under it
    see(child, "connected to scripted-agent 0.1.0")
    see(child, f"session {session_id}")
    see(child, "you: remember the word kumquat")
    child.expect(PROMPT_READY)
    assert "connected to" not in str(child.before)  # said once
    child.sendeof()
    child.expect(pexpect.EOF)


def test_mode_switched_before_the_prompt(workdir: Path) -> None:
    core_agent = Path(__file__).parent / "agents" / "scripted_agent.py"
    agent = f"{sys.executable} {core_agent} --modes --store memory"
    result = _chat("--agent", agent, "-p", "hello", "--mode", "readonly", "--json", cwd=workdir)
    assert result.returncode == 0, result.stderr
    messages = [json.loads(line)["message"] for line in result.stdout.splitlines()]
    methods = [m.get("method") for m in messages]
    assert methods.index("session/set_mode") < methods.index("session/prompt")
    modes = [m["params"]["modeId"] for m in messages if m.get("method") == "session/set_mode"]
    assert modes == ["readonly"]


def test_one_shot_ctrl_c_exits_130(workdir: Path) -> None:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "acpkit_core.cli", "chat", str(AGENT), "-p", "slow"],
        cwd=str(workdir),
        env=_env(),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    see(child, "working slowly...")
    child.sendintr()
    see(child, "stop: cancelled")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130


def test_path_completion_after_at(chat: pexpect.spawn) -> None:
    chat.send("/echo @no")
    chat.send("\t")
    see(chat, "tes.txt")  # completed to @notes.txt
    chat.send("\r")
    see(chat, "attached notes.txt (text, 12 bytes)")
    see(chat, "echo: @notes.txt")
    chat.expect(PROMPT_READY)
    chat.sendeof()
    chat.expect(pexpect.EOF)


@pytest.mark.parametrize(("command", "shown"), [("/mode", "Modes: agentic (current)"), ("/tools", "update_plan")])
def test_built_in_commands_end_without_a_stop_line(workdir: Path, command: str, shown: str) -> None:
    """`/mode` and `/tools` are answered by the agent itself (no model runs): no "stop: end_turn" after them."""
    example = Path(__file__).resolve().parents[2] / "examples" / "pydantic_agent.py"
    result = _chat(str(example), "-p", command, cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert shown in result.stdout
    assert "stop:" not in result.stdout
    turn = _chat(str(example), "-p", "hello", "--no", cwd=workdir)  # a model turn still ends with its stop line
    assert "stop: " in turn.stdout
