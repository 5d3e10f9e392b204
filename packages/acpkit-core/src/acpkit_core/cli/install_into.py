"""`acpkit install ADAPTER [PROJECT]`: this clone's release of an adapter, with the chat, in one command.

Run from a clone of the repository (`uv run acpkit install ...` there, or
`uvx --from /path/to/acpkit/packages/acpkit-core acpkit install ...` from anywhere), it:

1. builds the three packages' wheels from the clone into `PROJECT/wheels` (`uv build`);
2. in a uv project (the default; an empty directory becomes one with `uv init --bare`): adds
   `find-links = ["wheels"]` to `[tool.uv]` in `pyproject.toml`, so that every later `uv lock`,
   `uv sync` and `uv add` finds them, then `uv add "ADAPTER[cli]==VERSION"`;
   with `--pip`: installs `ADAPTER[cli]==VERSION` into `PROJECT/.venv` (made with `python -m venv`
   when missing) with pip and `--find-links PROJECT/wheels`;
3. checks the result by running the project's `acpkit --version`.

The project then holds a copy of the release (its `wheels/`), independent of the clone. Running it
again after updating the clone installs the new build (the same version number is re-read, not
taken from a cache).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

from .install import CORE, core_version, release_source

__all__ = ["ADAPTERS", "find_clone", "install_main"]

EXIT_FAILED = 1
EXIT_USAGE = 2

ADAPTERS = {"pydantic": "pydantic-acp", "langchain": "langchain-acp"}
"""The adapters `acpkit install` installs, by short name (the package names are accepted too)."""

WHEELS = "wheels"
"""The directory of the project that holds the release's wheel files."""


def find_clone() -> Path | None:
    """The clone of the repository this `acpkit-core` was installed from (or runs in), if any."""
    candidates: list[Path] = []
    source = release_source()
    if source.kind == "clone":
        candidates.append(Path(source.location).parent)
    candidates.append(Path(__file__).resolve().parents[4])  # packages/acpkit-core/src/acpkit_core/cli
    for root in candidates:
        if all((root / "packages" / name / "pyproject.toml").is_file() for name in (CORE, *ADAPTERS.values())):
            return root
    return None


def _environment() -> dict[str, str]:
    """The environment for uv and pip: not the clone's virtual environment (`uv run` sets it)."""
    return {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH")}


def _run(command: Sequence[str | Path], *, cwd: Path) -> None:
    args = [str(part) for part in command]
    print(f"acpkit install: {shlex.join(args)}", file=sys.stderr)
    done = subprocess.run(args, cwd=cwd, env=_environment(), stdout=sys.stderr, check=False)
    if done.returncode != 0:
        raise _Failed(f"`{shlex.join(args)}` failed (exit code {done.returncode})")


class _Failed(Exception):
    pass


def _uv() -> str:
    uv = os.environ.get("UV") or shutil.which("uv")
    if not uv:
        raise _Failed("uv is needed to build the wheels: install it (pip install uv) and run the command again")
    return uv


def _add_find_links(pyproject: Path) -> None:
    """Make `[tool.uv] find-links` name the wheel directory (uv then finds it for every later lock)."""
    text = pyproject.read_text()
    settings = tomllib.loads(text).get("tool", {}).get("uv", {})
    links = settings.get("find-links", [])
    if WHEELS in links or f"./{WHEELS}" in links:
        return
    if "find-links" in settings:
        raise _Failed(
            f"{pyproject} already sets [tool.uv] find-links = {links!r}: add {WHEELS!r} to it and run the command again"
        )
    line = f'find-links = ["{WHEELS}"]  # ACP Kit 2.0 wheel files (acpkit install)\n'
    header = re.search(r"(?m)^\[tool\.uv\][ \t]*(#.*)?\n", text)
    if header is not None:
        text = text[: header.end()] + line + text[header.end() :]
    else:
        text = text.rstrip("\n") + f"\n\n[tool.uv]\n{line}"
    pyproject.write_text(text)


def _venv_python(project: Path) -> Path:
    return project / ".venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _install(clone: Path, package: str, project: Path, *, pip: bool) -> Path:
    """Build and install; returns the project environment's `acpkit` command."""
    uv = _uv()
    version = core_version()
    wheels = project / WHEELS
    _run([uv, "build", "--all-packages", "--wheel", "--out-dir", wheels, "--quiet"], cwd=clone)
    requirement = f"{package}[cli]=={version}"
    ours = (CORE, *ADAPTERS.values())
    if pip:
        python = _venv_python(project)
        if not python.exists():
            _run([sys.executable, "-m", "venv", project / ".venv"], cwd=project)
        _run([python, "-m", "pip", "install", "--find-links", wheels, requirement], cwd=project)
        # a build of the same version installed before is replaced by this one
        built = [next(wheels.glob(f"{name.replace('-', '_')}-{version}-*.whl")) for name in (CORE, package)]
        _run([python, "-m", "pip", "install", "--no-deps", "--force-reinstall", *built], cwd=project)
    else:
        if not (project / "pyproject.toml").exists():
            _run([uv, "init", "--bare", "--no-workspace", project], cwd=project)
        _add_find_links(project / "pyproject.toml")
        fresh = [arg for name in ours for arg in ("--refresh-package", name, "--reinstall-package", name)]
        _run([uv, "add", "--project", project, *fresh, requirement], cwd=project)
    return project / ".venv" / ("Scripts" if os.name == "nt" else "bin") / "acpkit"


def install_main(args: argparse.Namespace) -> int:
    """Run `acpkit install` with parsed arguments; returns the exit code."""
    package: str = ADAPTERS.get(str(args.adapter), str(args.adapter))
    clone = find_clone()
    if clone is None:
        print(
            "acpkit install: this acpkit-core was not installed from a clone of the ACP Kit repository. "
            "Run the command from a clone: `uv run acpkit install ADAPTER PROJECT` in it, or "
            "`uvx --from /path/to/acpkit/packages/acpkit-core acpkit install ADAPTER PROJECT`.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    project = Path(args.project).expanduser().resolve()
    if project.exists() and not project.is_dir():
        print(f"acpkit install: {project} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    if project == clone or project.is_relative_to(clone / "packages"):
        print(f"acpkit install: {project} is the ACP Kit clone itself; name your own project", file=sys.stderr)
        return EXIT_USAGE
    project.mkdir(parents=True, exist_ok=True)
    try:
        acpkit = _install(clone, package, project, pip=args.pip)
        check = subprocess.run(
            [str(acpkit), "--version"], env=_environment(), capture_output=True, text=True, timeout=120, check=False
        )
    except (_Failed, OSError, subprocess.TimeoutExpired) as exc:
        print(f"acpkit install: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if check.returncode != 0:
        print(f"acpkit install: {acpkit} --version failed:\n{check.stderr}", file=sys.stderr)
        return EXIT_FAILED
    run = f"{shlex.quote(str(acpkit))}" if args.pip else f"uv run --directory {shlex.quote(str(project))} acpkit"
    print(
        f"acpkit install: {check.stdout.strip()} installed in {project}, with the terminal UI "
        f"(wheel files in {project / WHEELS}). Try: {run} chat my_agent.py",
        file=sys.stderr,
    )
    return 0
