"""RELEASE CHECK: build the wheels and sdists, install them as a user would, serve an agent from them.

What the Installation page (docs/installation.md) tells a user to do, done for real in empty
directories outside the workspace:

- `uv build --all-packages` into a temporary directory;
- the pip path: a fresh plain venv (`python -m venv`), `pip install --find-links DIST "pydantic-acp==2.0.0"`;
- the uv path: an empty `uv init --bare` project, `uv add --find-links DIST "langchain-acp==2.0.0"`;

then: the installed `acpkit-core` and adapter are 2.0.0 and byte-for-byte our wheels (their RECORD
hashes match the built files), the adapter imports, `acpkit run` serves a small agent that answers
`initialize` and a prompt over the SDK client, `run_acp` does the same, `langchain-acp` pulls no
pydantic-ai and `pydantic-acp` no LangChain, neither pulls the terminal UI extra and `acpkit chat`
then says what to install. Third-party dependencies come from the package index (the network is
needed); our three packages can only come from the built files (2.0.0 exists nowhere else).

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
    _run([sys.executable, "-m", "venv", ".venv"], cwd=pip_project)
    _run([_uv(), "init", "--bare", "--name", "my-project", "--python", sys.executable], cwd=uv_project)
    pip_args = ["--find-links", dist, "pydantic-acp==2.0.0"]
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


def _check_lean_cli(acpkit: Path, cwd: Path, installed: dict[str, str]) -> None:
    """Without the `cli` extra, `acpkit chat` and `acpkit sessions` say exactly what to install."""
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
            "It is the `cli` extra of acpkit-core; install it with: "
            "uv add 'acpkit-core[cli]==2.0.0'  (or, with pip: pip install 'acpkit-core[cli]==2.0.0'); "
            "add --find-links DIR if you installed ACP Kit from wheel files in DIR. "
            "Or install its packages directly: pip install 'prompt-toolkit>=3.0.43' 'rich>=13.7'\n"
        )


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
    assert version.stdout == "acpkit 2.0.0 (adapters: pydantic-acp 2.0.0)\n"
    _check_lean_cli(acpkit, project, installed)


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
    _check_lean_cli(acpkit, project, installed)

    # the misreport of 1.x days: an installed adapter that does not apply is listed, not "none installed"
    result = subprocess.run(
        [acpkit, "run", "plain.py"], cwd=project, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "adapters installed: langchain (not loaded: plain uses none of its framework)" in result.stderr
    assert "none installed" not in result.stderr
    # a missing adapter's hint pins this release (a bare name would resolve to ACP Kit 1.x on the index)
    result = subprocess.run(
        [acpkit, "run", "uses_pydantic_ai.py"], cwd=project, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "Install the adapter with: uv add pydantic-acp==2.0.0  (or, with pip: pip install pydantic-acp==2.0.0)" in (
        result.stderr
    )
