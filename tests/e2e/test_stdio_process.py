"""The agent process's own stdin and stdout: a regular file for stdout, a terminal, /dev/null, a closed stdin."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from wire_client import run_in_terminal

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

APP = str(Path(__file__).parents[1] / "pydantic" / "pyd_printing_app.py")


def test_stdout_redirected_to_a_regular_file_carries_the_protocol(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with out.open("wb") as sink:
        process = subprocess.Popen([sys.executable, APP], stdin=subprocess.PIPE, stdout=sink, stderr=subprocess.PIPE)
        assert process.stdin is not None
        process.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
        process.stdin.flush()
        for _ in range(600):
            if out.read_bytes().endswith(b"\n"):
                break
            time.sleep(0.05)
        _, err = process.communicate(input=b"", timeout=30)
    assert process.returncode == 0, err.decode()
    (line,) = out.read_bytes().splitlines()
    assert json.loads(line)["result"]["agentInfo"]["name"] == "printing-agent"
    assert b"Traceback" not in err and b"Pipe transport" not in err


def test_stdin_and_stdout_both_regular_files(tmp_path: Path) -> None:
    """`python agent.py < in.jsonl > out.jsonl`: read as a pipe would be (the end of the file ends the session)."""
    (tmp_path / "in.jsonl").write_bytes(b"42\n" + b'{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}\n' * 3)
    with (tmp_path / "in.jsonl").open("rb") as source, (tmp_path / "out.jsonl").open("wb") as sink:
        done = subprocess.run([sys.executable, APP], stdin=source, stdout=sink, stderr=subprocess.PIPE, timeout=60)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    lines = (tmp_path / "out.jsonl").read_bytes().splitlines()
    assert json.loads(lines[0])["error"]["code"] == -32600  # answered as it was read, before the end of input
    assert all(json.loads(line)["id"] in (None, 1) for line in lines)


def test_run_acp_started_in_a_terminal_says_what_it_is_and_exits() -> None:
    code, shown = run_in_terminal(sys.executable, APP)
    text = shown.strip()
    assert code == 0
    assert text == (
        "printing-agent is an ACP agent: it talks JSON-RPC over stdin/stdout to an editor, not to a terminal. "
        f"To chat with it here: acpkit chat --agent 'python {APP}' (or add it to your editor's agent servers)."
    )


MY_AGENT = 'from pydantic_ai import Agent\n\nagent = Agent("test", name="my-agent")\n'
INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
SHELL_STDIN = {
    "dev-null": 'exec "$@" </dev/null',
    "closed": 'exec "$@" <&-',
    "empty-pipe": "printf '' | \"$@\"",
    "file": 'exec "$@" <in.jsonl',
    "pipe": 'cat in.jsonl | "$@"',
}
"""Every stdin a shell can give an agent but a terminal (tested below): `sh -c SCRIPT sh COMMAND...`."""


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    (tmp_path / "my_agent.py").write_text(MY_AGENT)
    (tmp_path / "in.jsonl").write_bytes(INITIALIZE)
    sdk_agent = str(Path(__file__).parent / "agents" / "sdk_cli_agent.py")
    return {
        "acpkit-run": [sys.executable, "-m", "acpkit_core.cli", "run", "my_agent.py"],
        "acpkit-run-sdk-agent": [sys.executable, "-m", "acpkit_core.cli", "run", sdk_agent],
        "run_acp": [sys.executable, APP],
    }


@pytest.mark.parametrize("stdin", list(SHELL_STDIN))
@pytest.mark.parametrize("command", ["acpkit-run", "acpkit-run-sdk-agent", "run_acp"])
def test_any_stdin_a_shell_gives_ends_cleanly(tmp_path: Path, command: str, stdin: str) -> None:
    """`acpkit run my_agent.py </dev/null` (and `<&-`, an empty pipe, a file, a pipe): served to its end,
    exit 0, no traceback, no hang (the event loop refuses `/dev/null`; a closed stdin's descriptor is
    taken by the next file opened)."""
    argv = _commands(tmp_path)[command]
    done = subprocess.run(
        ["sh", "-c", SHELL_STDIN[stdin], "sh", *argv], cwd=tmp_path, capture_output=True, timeout=60, check=False
    )
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "Traceback" not in err and "Error" not in err, err
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    if stdin in ("file", "pipe"):
        (answer,) = answers
        assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1
    else:
        assert answers == []


def test_acpkit_run_in_a_terminal_ends_at_once(tmp_path: Path) -> None:
    (tmp_path / "my_agent.py").write_text(MY_AGENT)
    code, shown = run_in_terminal(sys.executable, "-m", "acpkit_core.cli", "run", "--cwd", str(tmp_path), "my_agent.py")
    assert code == 0 and "Traceback" not in shown
    assert shown.strip().splitlines()[-1].startswith("acpkit run: my_agent.py:agent is an ACP agent")
