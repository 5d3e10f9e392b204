"""`acpkit run`: target resolution errors, and answering `initialize` from a real subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from acpkit_core.cli.target import TargetError, parse_target
from acpkit_core.testing import AcpTestClient
from wire_client import run_in_terminal

pytestmark = pytest.mark.e2e

AGENTS = Path(__file__).parent / "agents"
SDK_AGENT = AGENTS / "sdk_cli_agent.py"


def acpkit(*args: str, cwd: Path | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", *args],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=cwd,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import pydantic_ai.no_such_module_here\n", "/packages/pydantic-acp, then run the command again."),
        ("import langgraph.no_such_module_here\n", "/packages/langchain-acp, then run the command again."),
        ("import no_such_dependency_xyz\n", "no module named 'no_such_dependency_xyz'"),
        ("def broken(:\n", "SyntaxError"),
        ("raise RuntimeError('boom at import')\n", "RuntimeError: boom at import"),
        ("x = 1\n", "found nothing to serve"),
    ],
)
def test_target_import_errors_exit_2_before_any_json_rpc(tmp_path: Path, source: str, expected: str) -> None:
    target = tmp_path / "agent_mod.py"
    target.write_text(source)
    # the stdin holds an initialize request: it must never be answered
    request = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
    result = acpkit("run", str(target), stdin=request)
    assert result.returncode == 2
    assert result.stdout == ""
    assert expected in result.stderr
    assert result.stderr.startswith("acpkit run: ")
    assert "Traceback" not in result.stderr


def test_several_candidates_are_listed(tmp_path: Path) -> None:
    (tmp_path / "two.py").write_text(
        f"import sys\nsys.path.insert(0, {str(AGENTS)!r})\n"
        "from sdk_cli_agent import ScriptedAgent\nfirst = ScriptedAgent()\nsecond = ScriptedAgent()\n"
    )
    result = acpkit("run", "two.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "two.py defines several agents: first (" in result.stderr
    assert "second (" in result.stderr
    assert "two.py:ATTRIBUTE" in result.stderr


def test_unknown_module_and_attribute(tmp_path: Path) -> None:
    result = acpkit("run", "no_such_target_module")
    assert result.returncode == 2
    assert "no module named 'no_such_target_module'" in result.stderr
    result = acpkit("run", f"{SDK_AGENT}:nope")
    assert result.returncode == 2
    assert "has no attribute 'nope'" in result.stderr
    assert "agent" in result.stderr.split("names defined there:")[1]
    result = acpkit("run", f"{SDK_AGENT}:ScriptedAgent")
    assert result.returncode == 2
    assert "acpkit cannot serve" in result.stderr


def test_parse_target_forms() -> None:
    assert parse_target("pkg.mod") == ("pkg.mod", None, False)
    assert parse_target("pkg.mod:agent") == ("pkg.mod", "agent", False)
    assert parse_target("dir/agent.py:make.agent") == ("dir/agent.py", "make.agent", True)
    assert parse_target("agent.py") == ("agent.py", None, True)
    with pytest.raises(TargetError, match="nothing after ':'"):
        parse_target("mod:")
    with pytest.raises(TargetError, match="neither a module name"):
        parse_target("not a module")


async def test_run_answers_initialize_and_a_prompt(tmp_path: Path) -> None:
    async with AcpTestClient.spawn(
        sys.executable, "-X", "importtime", "-m", "acpkit_core.cli", "run", str(SDK_AGENT), cwd=tmp_path
    ) as client:
        init = await client.initialize()
        assert init.agent_info is not None and init.agent_info.name == "scripted"
        sid = await client.new_session()
        result = await client.prompt("/echo hi", session_id=sid)
        assert result.stop_reason == "end_turn"
        assert result.text == "echo: hi"
        stderr = client.stderr
    assert "acpkit run: serving" in stderr and "sdk_cli_agent.py:agent" in stderr
    imported = {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}
    assert "acpkit_core.cli.run" in imported
    # the editor's agent process never loads the terminal libraries, nor an adapter it does not use
    assert not {n for n in imported if n.split(".")[0] in {"rich", "prompt_toolkit", "pydantic_ai", "langchain_core"}}


def test_stray_prints_in_the_agent_go_to_stderr(tmp_path: Path) -> None:
    (tmp_path / "noisy.py").write_text(
        f"import sys\nsys.path.insert(0, {str(AGENTS)!r})\n"
        "print('hello from import')\n"
        "from sdk_cli_agent import ScriptedAgent\n"
        "class Noisy(ScriptedAgent):\n"
        "    async def initialize(self, protocol_version, **kwargs):\n"
        "        print('hello from initialize')\n"
        "        return await super().initialize(protocol_version, **kwargs)\n"
        "agent = Noisy()\n"
    )
    request = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
    result = acpkit("run", "noisy.py", cwd=tmp_path, stdin=request)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and '"id":0' in lines[0] and '"agentInfo"' in lines[0]
    assert "hello from import" in result.stderr and "hello from initialize" in result.stderr


def test_factory_of_a_ready_agent_is_found_and_called(tmp_path: Path) -> None:
    (tmp_path / "factory.py").write_text(
        f"import sys\nsys.path.insert(0, {str(AGENTS)!r})\n"
        "from sdk_cli_agent import ScriptedAgent\n"
        "def make() -> ScriptedAgent:\n    return ScriptedAgent()\n"
        "def helper(x):\n    return x\n"
    )
    request = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
    result = acpkit("run", "factory.py", cwd=tmp_path, stdin=request)
    assert result.returncode == 0, result.stderr
    assert "serving factory.py:make() (ACP agent sdk_cli_agent.ScriptedAgent)" in result.stderr
    assert '"name":"scripted"' in result.stdout


def test_run_in_a_terminal_says_how_to_talk_to_the_agent_and_exits() -> None:
    code, shown = run_in_terminal(sys.executable, "-m", "acpkit_core.cli", "run", str(SDK_AGENT))
    assert code == 0
    last = shown.strip().splitlines()[-1]
    assert last.startswith("acpkit run: ") and "is an ACP agent: it talks JSON-RPC over stdin/stdout" in last
    assert last.endswith(f"To chat with it here: acpkit chat {SDK_AGENT} (or add it to your editor's agent servers).")
    assert "Traceback" not in shown


INIT_AND_NEW = (
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
    '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n'
)


@pytest.mark.parametrize(
    ("flags", "refused"),
    [
        ([], None),
        (["--default-store", "memory"], None),  # what acpkit_run_command passes: a default, not a request
        (["--store", "memory"], "--store"),
        (["--name", "x"], "--name"),
        (["--store", "memory", "--name", "x"], "--store, --name"),
    ],
)
def test_a_raw_sdk_agent_refuses_only_the_options_given(tmp_path: Path, flags: list[str], refused: str | None) -> None:
    """An agent written on the SDK alone cannot take `--store` or `--name`: asked for, they are refused
    (exit 2, naming exactly the flags given), never silently ignored; a default store is no request."""
    result = acpkit("run", str(SDK_AGENT), *flags, cwd=tmp_path, stdin=INIT_AND_NEW)
    if refused is None:
        assert result.returncode == 0, result.stderr
        assert "cannot apply" not in result.stderr
        return
    assert result.returncode == 2
    (line,) = [line for line in result.stderr.splitlines() if "cannot apply" in line]
    assert line.startswith(f"acpkit run: {refused} cannot apply to ")
    assert "written on the raw SDK" in line


async def test_the_delegate_command_passes_its_store_as_a_default(tmp_path: Path) -> None:
    """`AcpModel.from_target` / `AcpChatModel.from_target` start `acpkit_run_command(target)`: an agent acpkit
    builds keeps its sessions in memory, a ready ACP agent is served as built, and neither prints a note."""
    from acpkit_core.delegate import acpkit_run_command

    command = acpkit_run_command(str(SDK_AGENT))
    assert command[-2:] == ["--default-store", "memory"]
    ready = subprocess.run(command, capture_output=True, text=True, input=INIT_AND_NEW, cwd=tmp_path, timeout=60)
    assert ready.returncode == 0 and "not apply" not in ready.stderr, ready.stderr
    (tmp_path / "my_agent.py").write_text('from pydantic_ai import Agent\n\nagent = Agent("test")\n')
    state = tmp_path / "state"
    for args, stored in ((acpkit_run_command("my_agent.py")[5:], False), ([], True)):
        argv = ["-m", "acpkit_core.cli", "run", "my_agent.py", *args]
        async with AcpTestClient.spawn(sys.executable, *argv, cwd=tmp_path, env={"ACPKIT_STATE_DIR": str(state)}) as c:
            await c.initialize()
            await c.new_session()
            stderr = c.stderr
        assert "not apply" not in stderr
        assert (state / "sessions.sqlite3").exists() is stored
