"""The install commands the `acpkit` command prints: they always name THIS release of an ACP Kit package.

On the package index, the names `pydantic-acp` and `langchain-acp` also carry ACP Kit 1.x (1.10.0
and older), which has no `acpkit.adapters` entry point and a different API. A bare
`pip install pydantic-acp` can therefore install the wrong release line, so a hint is derived from
where `acpkit-core` itself came from (its PEP 610 `direct_url.json`):

- a local directory (a clone, editable or not): the sibling package directory of the same clone;
- a git URL: the same repository and commit, with that package's `subdirectory=`;
- a wheel file: `--find-links` on the wheel's directory, with the exact version;
- anything else (an index, `--find-links`): the exact version, `name==2.0.0`, which never resolves to 1.x.

The three packages are released in lockstep, so "the exact version" is `acpkit-core`'s own.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution, requires
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["Install", "core_version", "extra_requirements", "install_command", "install_for"]

CORE = "acpkit-core"


@dataclass(frozen=True, slots=True)
class Install:
    """How to install one package of this release, for uv projects and for pip."""

    uv: str
    """The `uv add ...` command (in a uv project)."""
    pip: str
    """The `pip install ...` command (in any other virtual environment)."""
    note: str = ""
    """What else may be needed (`--find-links` when the source is unknown)."""

    def __str__(self) -> str:
        text = f"{self.uv}  (or, with pip: {self.pip})"
        return f"{text}; {self.note}" if self.note else text


def core_version() -> str:
    """The installed `acpkit-core` version (`2.0.0`), or `unknown` when its metadata is missing."""
    try:
        return distribution(CORE).version
    except PackageNotFoundError:
        return "unknown"


def _direct_url() -> dict[str, object]:
    try:
        text = distribution(CORE).read_text("direct_url.json")
    except PackageNotFoundError:
        return {}
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


def install_for(
    package: str, *, extra: str | None = None, origin: dict[str, object] | None = None, version: str | None = None
) -> Install:
    """The commands installing `package` (optionally with `extra`) from the same source as `acpkit-core`.

    `origin` (a PEP 610 `direct_url.json` object) and `version` default to the installed `acpkit-core`'s.
    """
    name = f"{package}[{extra}]" if extra else package
    version = version or core_version()
    pinned = f"{name}=={version}" if version != "unknown" else name
    origin = _direct_url() if origin is None else origin
    url = origin.get("url")
    if isinstance(url, str):
        path = _local_path(url)
        dir_info = origin.get("dir_info")
        if path is not None and isinstance(dir_info, dict):
            folder = path.parent / package
            if (folder / "pyproject.toml").is_file():
                target = shlex.quote(f"{folder}[{extra}]" if extra else str(folder))
                if dir_info.get("editable"):  # pyright: ignore[reportUnknownMemberType]
                    return Install(uv=f"uv add --editable {target}", pip=f"pip install -e {target}")
                return Install(uv=f"uv add {target}", pip=f"pip install {target}")
        if path is not None and path.suffix == ".whl":
            links = shlex.quote(str(path.parent))
            quoted = shlex.quote(pinned)
            return Install(uv=f"uv add --find-links {links} {quoted}", pip=f"pip install --find-links {links} {quoted}")
        vcs = origin.get("vcs_info")
        if isinstance(vcs, dict):
            commit = vcs.get("commit_id")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            subdirectory = str(origin.get("subdirectory") or f"packages/{CORE}")
            sibling = str(Path(subdirectory).parent / package)
            revision = f"@{commit}" if isinstance(commit, str) else ""
            requirement = shlex.quote(f"{name} @ git+{url}{revision}#subdirectory={sibling}")
            return Install(uv=f"uv add {requirement}", pip=f"pip install {requirement}")
    quoted = shlex.quote(pinned)
    note = "add --find-links DIR if you installed ACP Kit from wheel files in DIR"
    return Install(uv=f"uv add {quoted}", pip=f"pip install {quoted}", note=note)


def extra_requirements(extra: str) -> list[str]:
    """The requirements `acpkit-core[extra]` adds (`rich>=13.7`, ...), read from the installed metadata."""
    try:
        requirements = requires(CORE) or []
    except PackageNotFoundError:
        return []
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    return [r.split(";", 1)[0].strip() for r in requirements if ";" in r and marker.search(r.split(";", 1)[1])]


def install_command(package: str, *, extra: str | None = None) -> str:
    """One line telling how to install `package` of this release: `uv add ...  (or, with pip: ...)`."""
    return str(install_for(package, extra=extra))
