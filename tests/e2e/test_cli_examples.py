"""The README's main-job command: `acpkit chat examples/<agent>.py -p ...` shows a whole offline turn."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from acpkit_core.testing import AcpTestClient

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


ANNOUNCED = {
    "pydantic_agent.py": ("pydantic-example", "pydantic-ai example agent", ["offline-planner", "offline-summariser"]),
    "langgraph_agent.py": ("langgraph-example", "LangGraph example", ["offline-planner", "offline-summariser"]),
}


async def _announced(*command: str, root: Path) -> tuple[Any, dict[str, Any]]:
    async with AcpTestClient.spawn(*command, root=root, env={"ACPKIT_MODEL": ""}) as c:
        init = await c.initialize()
        await c.new_session()
        session = c.last_session
    assert session is not None
    return init.agent_info, session.model_dump(mode="json", exclude={"session_id"}, by_alias=True)


@pytest.mark.parametrize("name", ["pydantic_agent.py", "langgraph_agent.py"])
async def test_an_example_is_the_same_agent_however_it_is_started(tmp_path: Path, name: str) -> None:
    """`acpkit run example.py` (as its docstring says) and `python example.py` serve the same agent."""
    acpkit = str(Path(sys.executable).with_name("acpkit"))
    direct = await _announced(sys.executable, str(_example(name)), root=tmp_path)
    served = await _announced(acpkit, "run", str(_example(name)), root=tmp_path)
    assert served == direct
    info, session = served
    agent_name, title, models = ANNOUNCED[name]
    assert (info.name, info.title) == (agent_name, title)
    modes: list[dict[str, Any]] = session["modes"]["availableModes"]
    assert [m["id"] for m in modes] == ["agentic", "interactive", "readonly", "planning"]
    options: list[dict[str, Any]] = session["configOptions"]
    (model,) = [o for o in options if o["id"] == "model"]
    assert (model["category"], model["currentValue"]) == ("model", models[0])
    values: list[dict[str, Any]] = model["options"]
    assert [v["value"] for v in values] == models


@pytest.mark.parametrize("name", ["pydantic_agent.py", "langgraph_agent.py"])
async def test_an_examples_reasoning_can_be_switched_off_by_a_client_with_boolean_options(
    tmp_path: Path, name: str
) -> None:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    async with AcpTestClient.spawn(
        sys.executable,
        str(_example(name)),
        root=tmp_path,
        env={"ACPKIT_MODEL": ""},
        boolean_options=True,
        permission_answers=["reject_once", "reject_once"],
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        assert c.last_session is not None
        (switch,) = [o for o in c.last_session.config_options or [] if o.id == "show_thinking"]
        assert (switch.type, switch.current_value) == ("boolean", True)
        shown = await c.prompt("Summarise notes.txt", session_id=sid)
        await c.set_config_option(sid, "show_thinking", False)
        hidden = await c.prompt("Summarise notes.txt", session_id=sid)
    assert shown.thoughts and "agent_thought_chunk" in shown.kinds
    assert "agent_thought_chunk" not in hidden.kinds and hidden.text
