"""`acpkit chat`'s `/rewind`: a picker of the prompts, the files question, the conversation redrawn,
the rewound prompt back on the input line. A real pseudo-terminal and a real ACP Kit agent process."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from test_cli_chat import PROMPT_READY, TIMEOUT, _env, see

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

AGENT = Path(__file__).parent / "agents" / "scripted_agent.py"


@pytest.fixture
def chat(tmp_path: Path) -> Iterator[pexpect.spawn]:
    agent = f"{sys.executable} {AGENT} --store {tmp_path / 'sessions.sqlite3'}"
    child = pexpect.spawn(
        sys.executable,
        ["-m", "acpkit_core.cli", "chat", "--agent", agent],
        cwd=str(tmp_path),
        env=_env(),
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(40, 160),
    )
    see(child, "connected to scripted-agent")
    child.expect(PROMPT_READY)
    yield child
    if child.isalive():
        child.terminate(force=True)


def _turn(chat: pexpect.spawn, line: str) -> None:
    chat.send(line + "\r")
    see(chat, "stop: end_turn")
    chat.expect(PROMPT_READY)


def test_rewind_picks_a_prompt_restores_files_redraws_and_offers_the_prompt_again(
    chat: pexpect.spawn, tmp_path: Path
) -> None:
    _turn(chat, f"write {tmp_path}/a.txt first")
    _turn(chat, f"write {tmp_path}/b.txt second")
    _turn(chat, "say three")
    chat.send("/rewind\r")
    see(chat, "go back to before which prompt?")
    see(chat, f"2  write {tmp_path}/b.txt second")
    see(chat, "3  say three")
    see(chat, "prompt [1-3, Enter: 3, q: cancel]:")
    chat.send("2\r")
    see(chat, "permission: Restore the file the agent changed since prompt 2?")
    see(chat, "answer [1-2, y/n]:")
    chat.send("y\r")
    see(chat, "── the conversation, rewound ──")
    see(chat, f"write {tmp_path}/a.txt first")
    see(chat, "Rewound to before prompt 2")
    see(chat, f"Files the agent created, removed: {tmp_path / 'b.txt'}.")
    see(chat, "the prompt is on the input line")
    chat.expect(PROMPT_READY)
    assert (tmp_path / "a.txt").read_text() == "first"
    assert not (tmp_path / "b.txt").exists()
    chat.send("\x15history\r")  # Ctrl-U clears the offered prompt; ask what the agent remembers
    see(chat, f"write {tmp_path}/a.txt first")
    see(chat, "stop: end_turn")
    chat.expect(PROMPT_READY)
    chat.send("/rewind 9\r")
    see(chat, "✗ cannot rewind: there is no prompt 9: this session has 2 prompts")
    chat.expect(PROMPT_READY)
    chat.send("/rewind\r")
    see(chat, "prompt [1-2, Enter: 2, q: cancel]:")
    chat.send("q\r")
    see(chat, "not rewound")
    chat.expect(PROMPT_READY)
    chat.send("/help\r")
    see(chat, "/rewind [N]  go back to before a prompt")
    chat.expect(PROMPT_READY)
    chat.send("/quit\r")
    chat.expect(pexpect.EOF)


def test_the_offered_prompt_is_sent_again_with_enter(chat: pexpect.spawn, tmp_path: Path) -> None:
    _turn(chat, "say one")
    _turn(chat, "history")
    chat.send("/rewind 2\r")
    see(chat, "Rewound to before prompt 2")
    chat.expect(PROMPT_READY)
    chat.send("\r")  # the rewound prompt, as it was
    see(chat, "say one")
    see(chat, "stop: end_turn")
    chat.expect(PROMPT_READY)
    chat.send("/quit\r")
    chat.expect(pexpect.EOF)
