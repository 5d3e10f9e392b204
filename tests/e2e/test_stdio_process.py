"""The agent process's own stdin and stdout: a regular file for stdout, a terminal for stdin."""

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
