"""`acpkit --version`, help without a command, every subcommand's description and example, and install hints
that name this release (never a bare name, which the package index resolves to ACP Kit 1.x)."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from acpkit_core.cli import build_parser
from acpkit_core.cli.install import install_for
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
    for command in ("run", "chat", "sessions", "render"):
        assert f"\n    {command} " in result.stdout
    assert "examples:\n  acpkit run my_agent:agent" in result.stdout
    assert result.stderr == ""


@pytest.mark.parametrize("command", ["run", "chat", "sessions", "render"])
def test_every_subcommand_has_a_description_and_an_example(command: str) -> None:
    sub = build_parser()._subparsers._group_actions[0].choices[command]  # pyright: ignore[reportOptionalMemberAccess, reportAttributeAccessIssue, reportIndexIssue, reportOptionalSubscript]
    assert sub.description and len(sub.description) > 40
    help_text = sub.format_help()
    assert f"examples:\n  acpkit {command}" in help_text or "examples:\n  echo" in help_text


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
    # from an index or --find-links (no direct_url.json): the exact version, which never resolves to 1.x
    hint = install_for("acpkit-core", extra="cli", origin={}, version="2.0.0")
    assert (hint.uv, hint.pip) == ("uv add 'acpkit-core[cli]==2.0.0'", "pip install 'acpkit-core[cli]==2.0.0'")
    assert str(hint) == (
        "uv add 'acpkit-core[cli]==2.0.0'  (or, with pip: pip install 'acpkit-core[cli]==2.0.0'); "
        "add --find-links DIR if you installed ACP Kit from wheel files in DIR"
    )


def test_the_workspace_hint_installs_this_clone_s_package() -> None:
    hint = install_for("langchain-acp")
    assert hint.uv == f"uv add --editable {ROOT / 'packages' / 'langchain-acp'}"


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
