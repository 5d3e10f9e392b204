"""The install commands the `acpkit` command prints: runnable as printed, and always THIS release.

On the package index, the names `pydantic-acp` and `langchain-acp` also carry ACP Kit 1.x (1.10.0
and older), which has no `acpkit.adapters` entry point and a different API, and ACP Kit 2.0 is not
there at all. A hint is therefore built from two facts about the running environment:

- **where this release came from** ([`release_source`][acpkit_core.cli.install.release_source]):
  `acpkit-core`'s PEP 610 `direct_url.json` (a clone, a wheel file, a git commit), else the uv
  project's `uv.lock` (the `--find-links` directory, path or git URL uv recorded), else a directory
  of the project holding this release's wheel files;
- **how to install into this environment** ([`current_environment`][acpkit_core.cli.install.current_environment]):
  `uv add` in a uv project (with `--project` when run from outside it), `uv pip install --python`
  in another uv-made environment, `python -m pip install` with this environment's own interpreter
  otherwise (a bare `pip` may be another environment's).

When the source cannot be known (pip keeps no record of a `--find-links` directory), a hint for an
extra installs the extra's packages from the index, which always works; a hint for a package says
which directory to add. The three packages are released in lockstep, so "this release" is
`acpkit-core`'s own version.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, distribution, requires
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlparse

__all__ = [
    "Environment",
    "Install",
    "Source",
    "core_version",
    "current_environment",
    "extra_requirements",
    "install_command",
    "install_for",
    "release_source",
    "requirement_args",
]

CORE = "acpkit-core"


@dataclass(frozen=True, slots=True)
class Install:
    """How to install one package of this release, for uv projects and for pip."""

    uv: str
    """The `uv add ...` command (in a uv project)."""
    pip: str
    """The `pip install ...` command (in any other virtual environment)."""
    note: str = ""
    """What else is needed when the source is unknown (the wheel directory)."""

    def __str__(self) -> str:
        text = f"{self.uv}  (or, with pip: {self.pip})"
        return f"{text}; {self.note}" if self.note else text


@dataclass(frozen=True, slots=True)
class Source:
    """Where the files of this release are."""

    kind: Literal["clone", "wheels", "git", "unknown"]
    location: str = ""
    """The clone's `packages` directory, the wheel directory, or the git URL."""
    editable: bool = False
    """A clone installed editable (`uv add --editable`, `pip install -e`)."""
    commit: str | None = None
    """The git commit (for `git`)."""
    subdirectory: str = f"packages/{CORE}"
    """`acpkit-core`'s directory in the git repository (for `git`)."""


@dataclass(frozen=True, slots=True)
class Environment:
    """The Python environment `acpkit` runs in, and the installer that fits it."""

    installer: Literal["uv-project", "uv", "pip"]
    python: str = field(default_factory=lambda: sys.executable)
    """This environment's interpreter."""
    project: Path | None = None
    """The uv project owning the environment (for `uv-project`)."""


def core_version() -> str:
    """The installed `acpkit-core` version (`2.0.0`), or `unknown` when its metadata is missing."""
    try:
        return distribution(CORE).version
    except PackageNotFoundError:
        return "unknown"


def _read_metadata(name: str) -> str:
    try:
        return distribution(CORE).read_text(name) or ""
    except PackageNotFoundError:
        return ""


def _direct_url() -> dict[str, object]:
    text = _read_metadata("direct_url.json")
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _local_path(url: str) -> Path | None:
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def _environment_home() -> Path:
    """The directory holding this environment (`my-project` for `my-project/.venv`)."""
    return Path(sys.prefix).resolve().parent


def _uv_project() -> Path | None:
    """The uv project whose environment this is: a `uv.lock` beside the environment or above it."""
    home = _environment_home()
    for directory in (home, *home.parents):
        if (directory / "uv.lock").is_file() and (directory / "pyproject.toml").is_file():
            return directory
    return None


def current_environment() -> Environment:
    """How to install into the running environment (a uv project, another uv environment, or pip)."""
    installer = _read_metadata("INSTALLER").strip()
    project = _uv_project()
    if project is not None and installer in ("uv", ""):
        return Environment("uv-project", project=project)
    return Environment("uv" if installer == "uv" else "pip")


def _source_from_direct_url(origin: dict[str, object]) -> Source | None:
    url = origin.get("url")
    if not isinstance(url, str):
        return None
    path = _local_path(url)
    dir_info = origin.get("dir_info")
    if path is not None and isinstance(dir_info, dict):
        editable = bool(dir_info.get("editable"))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        return Source("clone", str(path.parent), editable=editable)
    if path is not None and path.suffix == ".whl":
        return Source("wheels", str(path.parent))
    vcs = origin.get("vcs_info")
    if isinstance(vcs, dict):
        commit = vcs.get("commit_id")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        return Source(
            "git",
            url,
            commit=commit if isinstance(commit, str) else None,
            subdirectory=str(origin.get("subdirectory") or f"packages/{CORE}"),
        )
    return None


def _source_from_lock(project: Path) -> Source | None:
    """What `uv.lock` recorded for `acpkit-core`: a `--find-links` directory, a path or a git URL."""
    try:
        lock = tomllib.loads((project / "uv.lock").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    packages: list[dict[str, Any]] = lock.get("package", [])
    entry = next((p for p in packages if p.get("name") == CORE), None)
    source: dict[str, str] = (entry or {}).get("source", {})
    if "registry" in source and "://" not in source["registry"]:
        return Source("wheels", str((project / source["registry"]).resolve()))
    if "path" in source and source["path"].endswith(".whl"):
        return Source("wheels", str((project / source["path"]).resolve().parent))
    for key, editable in (("editable", True), ("directory", False)):
        if key in source:
            return Source("clone", str((project / source[key]).resolve().parent), editable=editable)
    if "git" in source:
        url, _, commit = source["git"].partition("#")
        url, _, query = url.partition("?")
        fields = [part.split("=", 1) for part in query.split("&") if "=" in part]
        subdirectory = next((unquote(value) for key, value in fields if key == "subdirectory"), None)
        return Source("git", url, commit=commit or None, subdirectory=subdirectory or f"packages/{CORE}")
    return None


def _source_from_wheel_files(version: str) -> Source | None:
    """A directory of the project (beside its environment) that holds this release's `acpkit-core` wheel."""
    for wheel in sorted(_environment_home().glob(f"*/acpkit_core-{version}-py3-none-any.whl")):
        return Source("wheels", str(wheel.parent))
    return None


def release_source(origin: dict[str, object] | None = None, *, version: str | None = None) -> Source:
    """Where this release's files are, as far as the environment says (see the module's doc).

    `origin` (a PEP 610 `direct_url.json` object) defaults to the installed `acpkit-core`'s; given
    explicitly, it alone decides.
    """
    if origin is not None:
        return _source_from_direct_url(origin) or Source("unknown")
    found = _source_from_direct_url(_direct_url())
    if found is None and (project := _uv_project()) is not None:
        found = _source_from_lock(project)
    if found is None:
        found = _source_from_wheel_files(version or core_version())
    return found or Source("unknown")


def requirement_args(package: str, extra: str | None, source: Source, version: str) -> tuple[list[str], bool]:
    """The installer arguments naming `package[extra]` of this release, and whether it is editable."""
    name = f"{package}[{extra}]" if extra else package
    pinned = f"{name}=={version}" if version != "unknown" else name
    if source.kind == "clone":
        folder = Path(source.location) / package
        if (folder / "pyproject.toml").is_file():
            return [f"{folder}[{extra}]" if extra else str(folder)], source.editable
    if source.kind == "wheels":
        return ["--find-links", source.location, pinned], False
    if source.kind == "git":
        sibling = str(Path(source.subdirectory).parent / package)
        revision = f"@{source.commit}" if source.commit else ""
        return [f"{name} @ git+{source.location}{revision}#subdirectory={sibling}"], False
    return [pinned], False


def install_for(
    package: str, *, extra: str | None = None, origin: dict[str, object] | None = None, version: str | None = None
) -> Install:
    """The `uv add` and `pip install` commands installing `package` (optionally with `extra`) of this release.

    `origin` (a PEP 610 `direct_url.json` object) and `version` default to the installed `acpkit-core`'s.
    """
    version = version or core_version()
    source = release_source(origin, version=version)
    args, editable = requirement_args(package, extra, source, version)
    quoted = shlex.join(args)
    note = ""
    if source.kind == "unknown":
        note = (
            "add --find-links and the directory of the ACP Kit wheel files you installed acpkit-core from "
            "(2.0 is not on the package index)"
        )
    if editable:
        return Install(uv=f"uv add --editable {quoted}", pip=f"pip install -e {quoted}", note=note)
    return Install(uv=f"uv add {quoted}", pip=f"pip install {quoted}", note=note)


def _installer_prefix(environment: Environment, *, editable: bool) -> list[str]:
    if environment.installer == "uv-project":
        prefix = ["uv", "add"]
        project = environment.project
        if project is not None and not Path.cwd().resolve().is_relative_to(project):
            prefix += ["--project", str(project)]
        return [*prefix, "--editable"] if editable else prefix
    if environment.installer == "uv":
        prefix = ["uv", "pip", "install", "--python", environment.python]
    else:
        prefix = [environment.python, "-m", "pip", "install"]
    return [*prefix, "-e"] if editable else prefix


def extra_requirements(extra: str) -> list[str]:
    """The requirements `acpkit-core[extra]` adds (`rich>=13.7`, ...), read from the installed metadata."""
    try:
        requirements = requires(CORE) or []
    except PackageNotFoundError:
        return []
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    return [r.split(";", 1)[0].strip() for r in requirements if ";" in r and marker.search(r.split(";", 1)[1])]


def install_command(
    package: str, *, extra: str | None = None, environment: Environment | None = None, source: Source | None = None
) -> str:
    """One command, runnable as printed in this environment, installing `package[extra]` of this release.

    `environment` and `source` default to [`current_environment`][acpkit_core.cli.install.current_environment]
    and [`release_source`][acpkit_core.cli.install.release_source]. With an unknown source, an extra of
    `acpkit-core` is installed as its packages from the index, and a package's command is followed by
    what it still needs (the wheel directory).
    """
    environment = environment or current_environment()
    version = core_version()
    source = source or release_source(version=version)
    if source.kind == "unknown" and package == CORE and extra and (packages := extra_requirements(extra)):
        return shlex.join([*_installer_prefix(environment, editable=False), *packages])
    args, editable = requirement_args(package, extra, source, version)
    command = shlex.join([*_installer_prefix(environment, editable=editable), *args])
    if source.kind == "unknown":
        command += (
            " --find-links DIR, DIR being the directory of the ACP Kit wheel files acpkit-core was installed from "
            "(2.0 is not on the package index)"
        )
    return command
