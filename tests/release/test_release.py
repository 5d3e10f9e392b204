"""RELEASE CHECK: build the wheels and sdists, install them as a user would, serve an agent from them.

What the Installation page (docs/installation.md) tells a user to do, done for real in empty
directories outside the workspace:

- `uv build --all-packages` into a temporary directory;
- the pip path: a fresh plain venv (`python -m venv`), the wheels in the project's `wheels/`,
  `pip install --find-links wheels "pydantic-acp==2.0.0"`;
- the uv path: an empty `uv init --bare` project, `uv add --find-links DIST "langchain-acp==2.0.0"`;

then: the installed `acpkit-core` and adapter are 2.0.0 and byte-for-byte our wheels (their RECORD
hashes match the built files), the adapter imports, `acpkit run` serves a small agent that answers
`initialize` and a prompt over the SDK client, `run_acp` does the same, `langchain-acp` pulls no
pydantic-ai and `pydantic-acp` no LangChain, neither pulls the terminal UI extra, and every install
hint `acpkit` prints there (the terminal UI, the `serve` extra, a missing adapter) is run exactly as
printed and does what it says.

Every install command of the docs (a `bash` block line installing an ACP Kit package, in docs/,
README.md and the package READMEs) is run in an empty project, with the `/path/to/...` placeholders
and the repository URL pointing at this clone; what it names (extras included) must be installed, and
a documented install with the `cli` extra must give a working `acpkit chat`. Upgrading a 1.x
environment in place (the real `acpkit` 1.10.0 from the index) is replayed: each warning's fix is run
as printed. Third-party dependencies come from the package index (the network is needed); our three
packages can only come from the built files (2.0.0 exists nowhere else).

This never skips: without `uv` or the package index it fails. Deselect it with `-m "not release"`.
"""

from __future__ import annotations

import asyncio
import csv
import email.parser
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Sequence
from email.message import Message
from pathlib import Path

import pytest
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.release, pytest.mark.timeout(900), pytest.mark.xdist_group("release")]

ROOT = Path(__file__).resolve().parents[2]
VERSION = "2.0.0"
PACKAGES = {"acpkit-core": "acpkit_core", "pydantic-acp": "pydantic_acp", "langchain-acp": "langchain_acp"}
LANGCHAIN_DISTS = ("langchain", "langchain-core", "langgraph", "langchain-acp")
PYDANTIC_AI_DISTS = ("pydantic-ai", "pydantic-ai-slim", "pydantic-acp")
TERMINAL_DISTS = ("prompt-toolkit",)

PYDANTIC_AGENT = """\
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

agent = Agent(TestModel(custom_output_text="hello from the wheel"), name="release-check")
"""
PYDANTIC_RUN_ACP = PYDANTIC_AGENT + "\nfrom pydantic_acp import run_acp\n\nrun_acp(agent)\n"

LANGCHAIN_GRAPH = """\
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph


def answer(state: MessagesState) -> dict[str, list[AIMessage]]:
    return {"messages": [AIMessage("hello from the wheel")]}


builder = StateGraph(MessagesState)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
graph = builder.compile(name="release-check")
"""
LANGCHAIN_RUN_ACP = LANGCHAIN_GRAPH + '\nfrom langchain_acp import run_acp\n\nrun_acp(graph, name="release-check")\n'


def _env() -> dict[str, str]:
    """The environment for uv/pip/venv commands: nothing pointing back at the workspace's venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env = {k: v for k, v in env.items() if not k.startswith("UV_") or k == "UV_CACHE_DIR"}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # pip compiles every installed module to bytecode (uv does not, unless asked): a third of the time of
    # these installs, and nothing the checks look at. (`PIP_NO_COMPILE=1` would mean the opposite.)
    env["PIP_COMPILE"] = "0"
    return env


def _run(args: Sequence[str | Path], *, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, (
        f"{' '.join(map(str, args))} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


def _uv() -> str:
    uv = shutil.which("uv")
    assert uv, "the release check needs `uv` on PATH (pip install uv)"
    return uv


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run([_uv(), "build", "--all-packages", "--out-dir", out, "--quiet"], cwd=ROOT)
    return out


@pytest.fixture(scope="module")
def projects(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two empty project directories, installed into at the same time (pip is slow; uv runs meanwhile).

    `pip`: `python -m venv .venv` then `.venv/bin/python -m pip install --find-links DIST "pydantic-acp==2.0.0"`.
    `uv`: `uv init --bare` then `uv add --find-links DIST "langchain-acp==2.0.0"`.
    """
    pip_project = tmp_path_factory.mktemp("pip") / "my-project"
    uv_project = tmp_path_factory.mktemp("uv") / "my-project"
    pip_project.mkdir()
    uv_project.mkdir()
    shutil.copytree(dist, pip_project / "wheels")  # where docs/installation.md builds them
    _run([sys.executable, "-m", "venv", ".venv"], cwd=pip_project)
    _run([_uv(), "init", "--bare", "--name", "my-project", "--python", sys.executable], cwd=uv_project)
    pip_args = ["--find-links", "wheels", "pydantic-acp==2.0.0"]
    commands = {
        pip_project: [_venv_python(pip_project / ".venv"), "-m", "pip", "install", "--quiet", *pip_args],
        uv_project: [_uv(), "add", "--find-links", dist, "langchain-acp==2.0.0"],
    }
    running = {
        cwd: subprocess.Popen(
            [str(a) for a in args], cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for cwd, args in commands.items()
    }
    for cwd, process in running.items():
        output, _ = process.communicate(timeout=600)
        assert process.returncode == 0, f"{commands[cwd]} failed:\n{output[-4000:]}"
    return {"pip": pip_project, "uv": uv_project}


def _wheel(dist: Path, package: str) -> Path:
    (wheel,) = dist.glob(f"{PACKAGES[package]}-{VERSION}-py3-none-any.whl")
    return wheel


def _metadata(wheel: Path) -> Message:
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(f"{wheel.name.split('-')[0]}-{VERSION}.dist-info/METADATA").decode()
    return email.parser.Parser().parsestr(text)


# --- metadata ------------------------------------------------------------------------------------


@pytest.mark.parametrize("package", list(PACKAGES))
def test_wheel_and_sdist_metadata(dist: Path, package: str) -> None:
    module = PACKAGES[package]
    wheel = _wheel(dist, package)
    meta = _metadata(wheel)
    assert meta["Name"] == package and meta["Version"] == VERSION
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["Author"] == "ACP Kit contributors"
    assert meta["Requires-Python"] == ">=3.11"
    classifiers = meta.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.11" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert set(urls) >= {"Homepage", "Documentation", "Source", "Issues", "Changelog"}
    assert all(u.startswith("https://") for u in urls.values())
    # the README is the long description, rendered as Markdown, with links that work off-site
    assert meta["Description-Content-Type"] == "text/markdown"
    readme = meta.get_payload()
    assert isinstance(readme, str)
    assert readme.startswith(f"# {package}\n") and len(readme) > 600
    relative = [link for link in re.findall(r"\]\(([^)]+)\)", readme) if not link.startswith(("https://", "#"))]
    assert relative == [], f"{package}'s README has links that break on the package index: {relative}"
    requires = meta.get_all("Requires-Dist") or []
    if package != "acpkit-core":
        assert "acpkit-core==2.0.0" in requires
    else:
        lean = ("rich", "prompt-toolkit", "psycopg")  # the terminal UI and the Postgres store are extras
        assert not any(r.startswith(lean) and "extra ==" not in r for r in requires)
        assert {"cli", "postgres"} <= set(meta.get_all("Provides-Extra") or [])
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert f"{module}/py.typed" in names
    assert f"{module}-{VERSION}.dist-info/licenses/LICENSE" in names
    with tarfile.open(dist / f"{module}-{VERSION}.tar.gz") as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
        license_text = sdist.extractfile(f"{module}-{VERSION}/LICENSE")
        assert license_text is not None and license_text.read().decode().startswith("MIT License")
    assert {"LICENSE", "README.md", "pyproject.toml", f"src/{module}/py.typed"} <= members


def test_the_license_files_are_one_text() -> None:
    texts = {(ROOT / "LICENSE").read_text()} | {(ROOT / "packages" / p / "LICENSE").read_text() for p in PACKAGES}
    assert len(texts) == 1 and next(iter(texts)).startswith("MIT License")


# --- installing into fresh projects ----------------------------------------------------------------


def _installed(python: Path, cwd: Path) -> dict[str, str]:
    code = "import json, importlib.metadata as m; "
    code += "print(json.dumps({d.name.lower(): d.version for d in m.distributions()}))"
    return json.loads(_run([python, "-c", code], cwd=cwd).stdout)


def _record(lines: str) -> dict[str, str]:
    """RECORD rows with a hash (path -> hash); files the installer writes (INSTALLER, ...) have none."""
    return {row[0]: row[1] for row in csv.reader(io.StringIO(lines)) if len(row) > 1 and row[1]}


def _assert_installed_from(dist: Path, python: Path, cwd: Path, package: str) -> None:
    """The installed files of `package` are exactly those of the wheel we built (same RECORD hashes)."""
    wheel = _wheel(dist, package)
    with zipfile.ZipFile(wheel) as archive:
        built = _record(archive.read(f"{PACKAGES[package]}-{VERSION}.dist-info/RECORD").decode())
    code = f"import importlib.metadata as m; print(m.distribution({package!r}).read_text('RECORD'))"
    installed = _record(_run([python, "-c", code], cwd=cwd).stdout)
    assert {path: installed.get(path) for path in built} == built
    extra = {path for path in installed if path not in built}
    assert all(".dist-info/" in path or path.startswith("../") for path in extra), extra  # INSTALLER, scripts


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


async def _serve_and_prompt(command: Sequence[str | Path], cwd: Path, *, name: str) -> None:
    """Spawn the agent command, then `initialize`, `session/new` and one prompt over the SDK client."""
    async with AcpTestClient.spawn(str(command[0]), *map(str, command[1:]), cwd=cwd) as client:
        init = await asyncio.wait_for(client.initialize(), 60)
        assert init.agent_info is not None and init.agent_info.name == name
        session = await asyncio.wait_for(client.new_session(cwd), 30)
        result = await asyncio.wait_for(client.prompt("hi", session_id=session), 60)
        assert result.text == "hello from the wheel", client.stderr
        assert result.stop_reason == "end_turn"


def _shell(command: str, cwd: Path, *, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run `command` as a user pasting it into a shell would, in `cwd`; it must succeed."""
    result = subprocess.run(
        ["sh", "-c", command], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, f"{command!r} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def _hint(stderr: str, before: str, after: str = "\n") -> str:
    """The command a message prints between `before` and `after` (it ends the message by default)."""
    assert before in stderr, stderr
    command = stderr.split(before, 1)[1]
    assert after in command, stderr
    return command.split(after, 1)[0]


def _check_lean_cli(acpkit: Path, cwd: Path, installed: dict[str, str], expected_hint: str) -> str:
    """Without the `cli` extra, `acpkit chat` and `acpkit sessions` print the one command that installs it."""
    assert not set(TERMINAL_DISTS) & set(installed), "the terminal UI extra was installed without [cli]"
    missing = "prompt_toolkit" if "rich" in installed else "rich"  # pydantic-ai's MCP client brings rich
    for command in ("chat", "sessions"):
        result = subprocess.run(
            [str(acpkit), command, "agent.py"], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr == (
            f"acpkit {command}: the terminal UI is not installed (no module named {missing!r}). "
            "It is the `cli` extra (of acpkit-core, pydantic-acp and langchain-acp); install it with: "
            f"{expected_hint}\n"
        )
    return expected_hint


def _chat_works(acpkit: Path, target: str, cwd: Path) -> None:
    """`acpkit chat TARGET -p hi` shows the agent's answer and ends `end_turn` (exit 0)."""
    result = subprocess.run(
        [str(acpkit), "chat", target, "-p", "hi"], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "hello from the wheel" in result.stdout and "stop: end_turn" in result.stdout, result.stdout


def _serve_starts(acpkit: Path, target: list[str], cwd: Path) -> str | None:
    """Start `acpkit serve TARGET --port 0`: None once it serves (then stopped), else what it said on stderr."""
    process = subprocess.Popen(
        [str(acpkit), "serve", *target, "--port", "0"], cwd=cwd, env=_env(), stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        said = ""
        for line in process.stderr:  # what it says before serving (the open-file limit), or why it cannot
            if line.startswith("acpkit serve: serving "):
                return None
            said += line
        return said
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()


def _serve_hint_works(acpkit: Path, target: list[str], cwd: Path) -> None:
    """`acpkit serve` without its extra prints the command that installs it; once run, `acpkit serve` serves.

    (An adapter's own dependencies may bring every module the server needs: the MCP client brings most.)"""
    refused = _serve_starts(acpkit, target, cwd)
    if refused is not None:
        _shell(_hint(refused, "It is the `serve` extra of acpkit-core; install it with: "), cwd)
        assert _serve_starts(acpkit, target, cwd) is None


def test_pip_path_pydantic_acp(dist: Path, projects: dict[str, Path]) -> None:
    """docs/installation.md, "With pip": a plain venv, pip, the built wheels, a pydantic-ai agent."""
    project = projects["pip"]
    venv = project / ".venv"
    python = _venv_python(venv)
    installed = _installed(python, project)
    assert installed["acpkit-core"] == installed["pydantic-acp"] == VERSION
    for package in ("acpkit-core", "pydantic-acp"):
        _assert_installed_from(dist, python, project, package)
    assert not set(LANGCHAIN_DISTS) & set(installed), "pydantic-acp pulled LangChain"
    _run([python, "-c", "import pydantic_acp, acpkit_core; print(pydantic_acp.run_acp)"], cwd=project)

    (project / "agent.py").write_text(PYDANTIC_AGENT)
    (project / "serve.py").write_text(PYDANTIC_RUN_ACP)
    acpkit = venv / "bin" / "acpkit"
    asyncio.run(_serve_and_prompt([acpkit, "run", "agent.py"], project, name="release-check"))
    asyncio.run(_serve_and_prompt([python, "serve.py"], project, name="release-check"))
    version = subprocess.run([acpkit, "--version"], capture_output=True, text=True, env=_env(), timeout=60, check=True)
    assert version.stdout == "acpkit 2.0.0 (adapters: pydantic-acp 2.0.0)\n" and version.stderr == ""
    # pip keeps no record of --find-links: the release is found in the project's wheels/ directory, and the
    # hint uses this environment's own pip (a bare `pip` may be another environment's)
    wheels = project / "wheels"
    hint = f"{python} -m pip install --find-links {wheels} 'acpkit-core[cli]==2.0.0'"
    _shell(_check_lean_cli(acpkit, project, installed, hint), cwd=project)
    _chat_works(acpkit, "agent.py", project)
    _serve_hint_works(acpkit, ["agent.py"], project)


def test_uv_path_langchain_acp(dist: Path, projects: dict[str, Path]) -> None:
    """docs/installation.md, "With uv": an empty uv project, `uv add --find-links`, a LangGraph graph."""
    project = projects["uv"]
    python = _venv_python(project / ".venv")
    installed = _installed(python, project)
    assert installed["acpkit-core"] == installed["langchain-acp"] == VERSION
    for package in ("acpkit-core", "langchain-acp"):
        _assert_installed_from(dist, python, project, package)
    assert not set(PYDANTIC_AI_DISTS) & set(installed), "langchain-acp pulled pydantic-ai"
    assert not {"rich", "pygments", "prompt-toolkit"} & set(installed), "langchain-acp pulled the terminal UI"
    _run([python, "-c", "import langchain_acp, acpkit_core"], cwd=project)

    (project / "graph.py").write_text(LANGCHAIN_GRAPH)
    (project / "serve.py").write_text(LANGCHAIN_RUN_ACP)
    (project / "plain.py").write_text("x = 1\n")
    (project / "uses_pydantic_ai.py").write_text("import pydantic_ai\n")
    acpkit = project / ".venv" / "bin" / "acpkit"
    asyncio.run(
        _serve_and_prompt([acpkit, "run", "graph.py", "--name", "release-check"], project, name="release-check")
    )
    asyncio.run(_serve_and_prompt([python, "serve.py"], project, name="release-check"))
    # uv.lock records the --find-links directory: the hint names it, for `uv add` in this project
    cli_hint = _check_lean_cli(acpkit, project, installed, f"uv add --find-links {dist} 'acpkit-core[cli]==2.0.0'")

    # the misreport of 1.x days: an installed adapter that does not apply is listed, not "none installed"
    result = subprocess.run(
        [acpkit, "run", "plain.py"], cwd=project, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "adapters installed: langchain (not loaded: plain uses none of its framework)" in result.stderr
    assert "none installed" not in result.stderr
    # a missing adapter's hint pins this release (a bare name would resolve to ACP Kit 1.x on the index),
    # names where it is, and runs as printed
    result = subprocess.run(
        [acpkit, "run", "uses_pydantic_ai.py"], cwd=project, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    adapter_hint = _hint(result.stderr, "Install the adapter with: ", ", then run the command again.")
    assert adapter_hint == f"uv add --find-links {dist} pydantic-acp==2.0.0"
    # the serve extra's hint, then the server (before pydantic-acp, whose MCP client brings the same modules)
    _serve_hint_works(acpkit, ["graph.py"], project)
    _shell(adapter_hint, cwd=project)
    (project / "uses_pydantic_ai.py").write_text(PYDANTIC_AGENT)
    asyncio.run(_serve_and_prompt([acpkit, "run", "uses_pydantic_ai.py"], project, name="release-check"))
    # the terminal UI's hint, then the chat it installs
    _shell(cli_hint, cwd=project)
    _chat_works(acpkit, "graph.py", project)


# --- every install command of the docs, run in an empty project -------------------------------------

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "packages").glob("*/README.md"))]
OURS = re.compile(r"(?<![\w-])(acpkit-core|pydantic-acp|langchain-acp)(?:\[([a-z,]+)\])?")
REPOSITORY = "https://github.com/acpkit/acpkit"
FENCE = re.compile(r"^```(?:bash|sh|shell)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _install_words(words: list[str]) -> str | None:
    """Which installer a command line runs (`uv`, `pip`, `acpkit-install`, `build`), None for another command."""
    if words[:2] == ["uv", "add"] or words[:3] == ["uv", "pip", "install"]:
        return "uv"
    if words[:2] == ["pip", "install"] or (
        len(words) > 3 and words[0].endswith("python") and words[1:4] == ["-m", "pip", "install"]
    ):
        return "pip"
    if words[:2] == ["uv", "build"]:
        return "build"
    if words[:2] == ["uv", "run"] and "acpkit" in words and words[words.index("acpkit") + 1 :][:1] == ["install"]:
        return "acpkit-install"
    return None


def _doc_commands() -> dict[str, list[str]]:
    """Every install command in a bash block of the docs (comments dropped, continuations joined): where."""
    found: dict[str, list[str]] = {}
    for path in DOCS:
        text = path.read_text()
        for block in FENCE.findall(text):
            for number, line in enumerate(block.replace("\\\n", " ").splitlines()):
                words = shlex.split(line, comments=True)
                kind = _install_words(words)
                if kind is None or (kind in ("uv", "pip") and not OURS.search(line)):
                    continue  # a provider package (pydantic-ai-slim[openai], ...) or another command
                found.setdefault(shlex.join(words), []).append(f"{path.relative_to(ROOT)} (block line {number + 1})")
    return found


def _inline_install_spans() -> list[str]:
    """Inline code spans outside the bash blocks that hold an install command of an ACP Kit package."""
    spans: list[str] = []
    for path in DOCS:
        text = FENCE.sub("", path.read_text())
        text = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
        for span in re.findall(r"`([^`\n]+)`", text):
            if re.search(r"\b(pip install|uv add|uv pip install)\b", span) and OURS.search(span):
                spans.append(f"{path.relative_to(ROOT)}: {span}")
    return spans


def test_every_documented_install_command_is_pinned_and_run_by_this_check() -> None:
    """An install command naming an ACP Kit package names this release: a pin, a clone path or a git URL
    (a bare name resolves to 1.x on the index). And each one is in a bash block, where the next test runs it."""
    commands = _doc_commands()
    assert len(commands) >= 10, commands
    for command, where in commands.items():
        for match in OURS.finditer(command):
            if command[match.start() - 1] == "/":  # a directory (`#subdirectory=packages/pydantic-acp`)
                continue
            rest = command[match.end() :]
            pinned = rest.startswith(("==2.0.0", " @ git+")) or "/path/to/acpkit/" in command
            assert pinned or _install_words(shlex.split(command)) == "acpkit-install", f"{where}: {command} unpinned"
    assert _inline_install_spans() == [], "put install commands in bash blocks (they are run there)"


VERIFY = r"""
import importlib.metadata as m, json, re, sys

def check(name, extras, problems, seen):
    if (name, extras) in seen:
        return
    seen.add((name, extras))
    try:
        version = m.version(name)
    except m.PackageNotFoundError:
        problems.append(f"{name} is not installed")
        return
    if name in ("acpkit-core", "pydantic-acp", "langchain-acp") and version != "2.0.0":
        problems.append(f"{name} {version} is installed, not 2.0.0")
    for requirement in m.requires(name) or []:
        spec, _, marker = requirement.partition(";")
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)", marker)
        if extra and extra.group(1) in extras:
            found = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(?:\[([^\]]*)\])?", spec)
            sub = tuple(e.strip() for e in (found.group(2) or "").split(",") if e.strip())
            check(found.group(1), sub, problems, seen)

problems = []
for name, extras in json.loads(sys.argv[1]):
    check(name, tuple(extras), problems, set())
print(json.dumps(problems))
"""

AGENTS = {"pydantic-acp": ("agent.py", PYDANTIC_AGENT), "langchain-acp": ("graph.py", LANGCHAIN_GRAPH)}


def _named(words: list[str]) -> list[tuple[str, list[str]]]:
    """The ACP Kit packages (with extras) a command installs."""
    if _install_words(words) == "acpkit-install":
        adapter = words[words.index("install") + 1]
        return [(f"{adapter}-acp" if not adapter.endswith("-acp") else adapter, ["cli"])]
    named: list[tuple[str, list[str]]] = []
    for word in words:
        match = OURS.search(word.rsplit("/", 1)[-1] if "/path/to/" in word else word.split(" @ ")[0])
        if match:
            named.append((match.group(1), (match.group(2) or "").split(",") if match.group(2) else []))
    return named


def _run_documented(command: str, dist: Path, clone: Path, base: Path) -> str | None:
    """Run one documented command in an empty project; None when it did what it says, else the problem."""
    project = base / "my-project"
    project.mkdir(parents=True)
    words = shlex.split(command)
    kind = _install_words(words)
    text = command.replace("/path/to/acpkit", str(ROOT)).replace("/path/to/my-project", str(project))
    text = text.replace(REPOSITORY, f"file://localhost{clone}")  # pip's URL parser wants a host
    env = _env()
    if kind == "build":
        result = subprocess.run(["sh", "-c", text], cwd=base, env=env, capture_output=True, text=True, timeout=600)
        wheels = sorted(p.name for p in (project / "wheels").glob("*.whl"))
        ok = result.returncode == 0 and len(wheels) == 3
        return None if ok else f"{result.stderr[-2000:]} (wheels: {wheels})"
    shutil.copytree(dist, project / "wheels")
    if kind == "uv":
        _run([_uv(), "init", "--bare", "--name", "my-project", "--python", sys.executable], cwd=project)
    elif kind == "pip":
        _run([sys.executable, "-m", "venv", ".venv"], cwd=project)
        env["PATH"] = f"{project / '.venv' / 'bin'}{os.pathsep}{env['PATH']}"  # as after `source .venv/bin/activate`
        env["VIRTUAL_ENV"] = str(project / ".venv")
    result = subprocess.run(["sh", "-c", text], cwd=project, env=env, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        return f"exit {result.returncode}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    python = _venv_python(project / ".venv")
    named = _named(words)
    verify = subprocess.run(
        [str(python), "-c", VERIFY, json.dumps(named)], cwd=project, env=_env(), capture_output=True, text=True
    )
    if verify.returncode != 0 or json.loads(verify.stdout) != []:
        return f"installed, but: {verify.stdout or verify.stderr}"
    for package, extras in named:  # a documented install with the terminal UI gives a working chat
        if "cli" in extras and package in AGENTS:
            target, source = AGENTS[package]
            (project / target).write_text(source)
            try:
                _chat_works(project / ".venv" / "bin" / "acpkit", target, project)
            except AssertionError as exc:
                return f"`acpkit chat {target}` failed after it: {exc}"
    return None


@pytest.fixture(scope="module")
def git_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository's committed state, cloned: what the docs' git URLs stand for here."""
    clone = tmp_path_factory.mktemp("git") / "acpkit"
    _run(["git", "clone", "--quiet", ROOT, clone], cwd=clone.parent)
    return clone


def test_every_documented_install_command_works_in_an_empty_project(
    dist: Path, git_clone: Path, tmp_path: Path
) -> None:
    """Each install command of the docs, as written (placeholders pointing here), in an empty project of
    its kind (`uv init --bare` for uv, `python -m venv` then activated for pip), with the built wheels in
    `wheels/`; what it names must be installed, extras included, and a `[cli]` install must chat."""
    from concurrent.futures import ThreadPoolExecutor

    commands = _doc_commands()
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {
            command: pool.submit(_run_documented, command, dist, git_clone, tmp_path / f"c{i}")
            for i, command in enumerate(commands)
        }
        failures = {command: future.result() for command, future in futures.items()}
    failed = {f"{command}  [{', '.join(commands[command])}]": why for command, why in failures.items() if why}
    assert failed == {}


# --- upgrading a 1.x environment in place ------------------------------------------------------------


def _migration_block() -> list[str]:
    """The commands of docs/migrating-from-1x.md's "Upgrading an environment in place" block."""
    text = (ROOT / "docs" / "migrating-from-1x.md").read_text()
    section = text.split("## Upgrading an environment in place", 1)[1]
    (block, *_) = FENCE.findall(section)
    return [line for line in block.splitlines() if line.strip()]


def test_upgrading_a_1x_environment_in_place(dist: Path, tmp_path: Path) -> None:
    """The real `acpkit` 1.10.0 (its command file and RECORD; its dependencies left out) and 2.0 in one
    environment: the migration page's order works, and each other order is detected with a fix that runs."""
    project = tmp_path / "my-project"
    project.mkdir()
    shutil.copytree(dist, project / "wheels")
    _run([sys.executable, "-m", "venv", ".venv"], cwd=project)
    python = _venv_python(project / ".venv")
    acpkit = project / ".venv" / "bin" / "acpkit"
    install_1x = [python, "-m", "pip", "install", "--quiet", "--no-deps", "acpkit==1.10.0"]
    _run(install_1x, cwd=project)
    assert "acpkit.__main__" in acpkit.read_text()

    def version() -> subprocess.CompletedProcess[str]:
        return subprocess.run([acpkit, "--version"], cwd=project, env=_env(), capture_output=True, text=True)

    def module_version() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [python, "-m", "acpkit_core.cli", "--version"], cwd=project, env=_env(), capture_output=True, text=True
        )

    def clean() -> None:
        done = version()
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert done.stdout == "acpkit 2.0.0 (adapters: pydantic-acp 2.0.0)\n"
        assert module_version().stderr == ""
        assert subprocess.run([python, "-c", "import acpkit"], capture_output=True).returncode == 1

    # the migration page's way: uninstall 1.x first, then install 2.0
    for line in _migration_block():
        _shell(line, cwd=project)
    clean()

    # 2.0 installed over 1.x: `acpkit` says so, and its command removes 1.x and keeps 2.0's command
    reinstall_core = [python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall"]
    _run(install_1x, cwd=project)
    _run([*reinstall_core, _wheel(dist, "acpkit-core")], cwd=project)
    warned = version()
    assert warned.stdout == "acpkit 2.0.0 (adapters: pydantic-acp 2.0.0)\n"
    assert warned.stderr.startswith("acpkit: ACP Kit 1.x's `acpkit` package (1.10.0) is still installed")
    _shell(_hint(warned.stderr, "Remove 1.x and keep the command with: "), cwd=project)
    clean()

    # ... and the clean-up that deletes the command: `pip uninstall acpkit` afterwards
    _run(install_1x, cwd=project)
    _run([*reinstall_core, _wheel(dist, "acpkit-core")], cwd=project)
    _run([python, "-m", "pip", "uninstall", "--quiet", "-y", "acpkit"], cwd=project)
    assert not acpkit.exists()
    gone = module_version()
    assert gone.stdout == "acpkit 2.0.0 (adapters: pydantic-acp 2.0.0)\n"
    assert gone.stderr.startswith(f"acpkit: this environment's `acpkit` command ({acpkit}) is missing")
    _shell(_hint(gone.stderr, "Restore it with: "), cwd=project)
    clean()

    # 1.x installed over 2.0: its command runs 1.x; `python -m acpkit_core.cli` says so, and the fix runs
    _run(install_1x, cwd=project)
    replaced = module_version()
    assert f"acpkit: this environment's `acpkit` command ({acpkit}) runs ACP Kit 1.x" in replaced.stderr
    _shell(_hint(replaced.stderr, "Restore it with: "), cwd=project)
    clean()
