"""`acpkit --version`, help without a command, every subcommand's description and example, and install hints
that name this release (never a bare name, which the package index resolves to ACP Kit 1.x)."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from acpkit_core.cli import build_parser
from acpkit_core.cli.install import Environment, Source, install_command, install_for
from acpkit_core.cli.target import TargetError, resolve_target

ROOT = Path(__file__).resolve().parents[2]


def acpkit(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def test_the_three_packages_are_released_in_lockstep() -> None:
    assert version("acpkit-core") == version("pydantic-acp") == version("langchain-acp") == "2.0.0"
    for package in ("pydantic-acp", "langchain-acp"):
        from importlib.metadata import requires

        assert "acpkit-core==2.0.0" in (requires(package) or [])


def test_version_names_core_and_every_adapter() -> None:
    result = acpkit("--version")
    assert result.returncode == 0
    assert result.stdout == "acpkit 2.0.0 (adapters: langchain-acp 2.0.0, pydantic-acp 2.0.0)\n"


def test_bare_acpkit_prints_the_help_and_exits_2() -> None:
    result = acpkit()
    assert result.returncode == 2
    assert result.stdout.startswith("usage: acpkit [-h] [--version] COMMAND ...")
    for command in SUBCOMMANDS:
        assert f"\n    {command} " in result.stdout
    assert "examples:\n  acpkit run my_agent:agent" in result.stdout
    assert result.stderr == ""


SUBCOMMANDS = ["run", "chat", "sessions", "serve", "bridge", "render", "install"]


def _subcommands() -> dict[str, Any]:
    return build_parser()._subparsers._group_actions[0].choices  # pyright: ignore[reportOptionalMemberAccess, reportAttributeAccessIssue, reportUnknownVariableType, reportReturnType]


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_has_a_description_and_an_example(command: str) -> None:
    sub = _subcommands()[command]
    assert sub.description and len(sub.description) > 40
    help_text = sub.format_help()
    example = help_text.split("examples:\n", 1)[1].splitlines()[0]
    assert f"acpkit {command}" in example or example.startswith("  echo")


def test_the_cli_reference_lists_every_subcommand() -> None:
    """docs/cli/reference.md's table names each subcommand `--help` lists, and says how many there are."""
    assert sorted(_subcommands()) == sorted(SUBCOMMANDS)
    text = (ROOT / "docs" / "cli" / "reference.md").read_text()
    listed = re.findall(r"^\| `acpkit (\w+)", text, flags=re.MULTILINE)
    assert sorted(listed) == sorted(SUBCOMMANDS)
    assert "It has seven subcommands" in text and len(SUBCOMMANDS) == 7


WHEEL: dict[str, object] = {"url": "file:///srv/wheels/acpkit_core-2.0.0-py3-none-any.whl", "archive_info": {}}
GIT: dict[str, object] = {
    "url": "https://github.com/acpkit/acpkit.git",
    "vcs_info": {"vcs": "git", "commit_id": "0123abc"},
    "subdirectory": "packages/acpkit-core",
}


def test_install_hints_follow_where_acpkit_core_came_from(tmp_path: Path) -> None:
    clone = tmp_path / "clone" / "packages"
    for name in ("acpkit-core", "pydantic-acp"):
        (clone / name).mkdir(parents=True)
        (clone / name / "pyproject.toml").write_text("[project]\n")
    editable: dict[str, object] = {"url": (clone / "acpkit-core").as_uri(), "dir_info": {"editable": True}}
    hint = install_for("pydantic-acp", origin=editable, version="2.0.0")
    assert (hint.uv, hint.pip) == (
        f"uv add --editable {clone / 'pydantic-acp'}",
        f"pip install -e {clone / 'pydantic-acp'}",
    )
    plain_dir: dict[str, object] = {"url": (clone / "acpkit-core").as_uri(), "dir_info": {}}
    assert install_for("pydantic-acp", origin=plain_dir, version="2.0.0").pip == f"pip install {clone / 'pydantic-acp'}"
    hint = install_for("pydantic-acp", origin=WHEEL, version="2.0.0")
    assert hint.pip == "pip install --find-links /srv/wheels pydantic-acp==2.0.0"
    assert hint.uv == "uv add --find-links /srv/wheels pydantic-acp==2.0.0"
    hint = install_for("langchain-acp", origin=GIT, version="2.0.0")
    git = "'langchain-acp @ git+https://github.com/acpkit/acpkit.git@0123abc#subdirectory=packages/langchain-acp'"
    assert (hint.uv, hint.pip) == (f"uv add {git}", f"pip install {git}")
    # unknown (no direct_url.json): the exact version, which never resolves to 1.x, and what it still needs
    hint = install_for("acpkit-core", extra="cli", origin={}, version="2.0.0")
    assert (hint.uv, hint.pip) == ("uv add 'acpkit-core[cli]==2.0.0'", "pip install 'acpkit-core[cli]==2.0.0'")
    assert "--find-links" in hint.note and "not on the package index" in hint.note


def _lock(project: Path, source: str) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    (project / "uv.lock").write_text(f'version = 1\n\n[[package]]\nname = "acpkit-core"\nversion = "2.0.0"\n{source}\n')


def test_a_uv_project_s_lock_says_where_the_release_came_from(tmp_path: Path) -> None:
    """`uv add --find-links wheels ...` leaves no direct_url.json, but uv.lock records the directory."""
    from acpkit_core.cli.install import _source_from_lock  # pyright: ignore[reportPrivateUsage]

    _lock(tmp_path, 'source = { registry = "../wheels" }')
    assert _source_from_lock(tmp_path) == Source("wheels", str((tmp_path.parent / "wheels").resolve()))
    _lock(tmp_path, 'source = { registry = "https://pypi.org/simple" }')
    assert _source_from_lock(tmp_path) is None
    _lock(tmp_path, 'source = { editable = "../acpkit/packages/acpkit-core" }')
    clone = (tmp_path.parent / "acpkit" / "packages").resolve()
    assert _source_from_lock(tmp_path) == Source("clone", str(clone), editable=True)
    _lock(tmp_path, 'source = { git = "https://github.com/acpkit/acpkit?subdirectory=packages%2Facpkit-core#0123abc" }')
    found = _source_from_lock(tmp_path)
    assert found is not None and (found.kind, found.location, found.commit) == (
        "git",
        "https://github.com/acpkit/acpkit",
        "0123abc",
    )


def test_each_environment_gets_the_command_that_runs_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheels = Source("wheels", "/srv/wheels")
    project = Environment("uv-project", project=tmp_path)
    monkeypatch.chdir(tmp_path)
    assert install_command("pydantic-acp", extra="cli", environment=project, source=wheels) == (
        "uv add --find-links /srv/wheels 'pydantic-acp[cli]==2.0.0'"
    )
    monkeypatch.chdir(tmp_path.parent)  # outside the project: `uv add` is told which one
    assert install_command("pydantic-acp", environment=project, source=wheels) == (
        f"uv add --project {tmp_path} --find-links /srv/wheels pydantic-acp==2.0.0"
    )
    pip = Environment("pip", python="/p/.venv/bin/python")
    assert install_command("langchain-acp", environment=pip, source=wheels) == (
        "/p/.venv/bin/python -m pip install --find-links /srv/wheels langchain-acp==2.0.0"
    )
    uv_venv = Environment("uv", python="/p/.venv/bin/python")
    assert install_command("acpkit-core", extra="serve", environment=uv_venv, source=wheels) == (
        "uv pip install --python /p/.venv/bin/python --find-links /srv/wheels 'acpkit-core[serve]==2.0.0'"
    )
    # an unknown source: an extra is its packages from the index (runnable as printed) ...
    unknown = Source("unknown")
    assert install_command("acpkit-core", extra="cli", environment=pip, source=unknown) == (
        "/p/.venv/bin/python -m pip install 'prompt-toolkit>=3.0.43' 'rich>=13.7'"
    )
    # ... and a package says which directory it still needs
    assert install_command("pydantic-acp", environment=pip, source=unknown).startswith(
        "/p/.venv/bin/python -m pip install pydantic-acp==2.0.0 --find-links DIR, DIR being the directory"
    )


def test_the_workspace_hint_installs_this_clone_s_package(monkeypatch: pytest.MonkeyPatch) -> None:
    hint = install_for("langchain-acp")
    assert hint.uv == f"uv add --editable {ROOT / 'packages' / 'langchain-acp'}"
    monkeypatch.chdir(ROOT)
    assert (
        install_command("langchain-acp", extra="cli")
        == f"uv add --editable '{ROOT / 'packages' / 'langchain-acp'}[cli]'"
    )


def test_nothing_to_serve_lists_the_installed_adapters_not_none(tmp_path: Path) -> None:
    (tmp_path / "plain_mod.py").write_text("x = 1\n")
    with pytest.raises(TargetError) as caught:
        resolve_target("plain_mod", cwd=tmp_path)
    message = str(caught.value)
    assert "none installed" not in message
    assert (
        "adapters installed: langchain (not loaded: plain_mod uses none of its framework), "
        "pydantic (not loaded: plain_mod uses none of its framework)"
    ) in message


def test_an_object_no_adapter_serves_lists_loaded_adapters(tmp_path: Path) -> None:
    (tmp_path / "odd_mod.py").write_text("from pydantic_ai import Agent\nthing = object()\n")
    with pytest.raises(TargetError) as caught:
        resolve_target("odd_mod:thing", cwd=tmp_path)
    message = str(caught.value)
    assert "which acpkit cannot serve" in message
    assert "adapters installed: langchain (not loaded: odd_mod uses none of its framework), pydantic)" in message


def test_the_1x_fix_for_each_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`acpkit` 1.x and 2.0 share `bin/acpkit`: the fix removes 1.x and leaves 2.0's command (replayed for
    real, with the real 1.10.0, by tests/release)."""
    from acpkit_core.cli import legacy

    command = tmp_path / "bin" / "acpkit"
    command.parent.mkdir()
    command.write_text("from acpkit_core.cli import main\n")
    monkeypatch.setattr(legacy, "_command_file", lambda: command)
    wheels = Source("wheels", "/srv/wheels")
    pip = Environment("pip", python="/p/bin/python")
    # 2.0's command is in place: kept aside while pip deletes 1.x's files, whatever the source
    assert legacy.restore_command(uninstall_legacy=True, environment=pip, source=Source("unknown")) == (
        f"cp -p {command} {command}.acpkit-2 && /p/bin/python -m pip uninstall -y acpkit && "
        f"mv {command}.acpkit-2 {command}"
    )
    # the command is gone, or is 1.x's: acpkit-core is reinstalled from where it came from
    assert legacy.restore_command(uninstall_legacy=True, command_is_ours=False, environment=pip, source=wheels) == (
        "/p/bin/python -m pip uninstall -y acpkit && "
        "/p/bin/python -m pip install --force-reinstall --no-deps --find-links /srv/wheels acpkit-core==2.0.0"
    )
    project = Environment("uv-project", project=tmp_path)
    assert legacy.restore_command(uninstall_legacy=True, environment=project) == (
        f"uv remove --project {tmp_path} acpkit && uv sync --project {tmp_path} --reinstall-package acpkit-core"
    )
    # the command's file is checked: missing, or 1.x's
    monkeypatch.setattr(legacy, "_legacy_version", lambda: None)
    assert legacy.command_problem() is None
    command.write_text("from acpkit.__main__ import main\n")
    assert f"acpkit: this environment's `acpkit` command ({command}) runs ACP Kit 1.x" in (
        legacy.command_problem() or ""
    )
    command.unlink()
    assert "is missing (uninstalling ACP Kit 1.x's `acpkit` package deletes it)" in (legacy.command_problem() or "")
    assert legacy.legacy_package_problem() is None
