"""ACP Kit 1.x's `acpkit` package in the same environment as 2.0: said at once, with the fix.

1.x shipped the `acpkit` command in a package named `acpkit`; 2.0 ships it in `acpkit-core`. Both
install the same file (`bin/acpkit`), so upgrading a 1.x environment in place leaves the 1.x
package behind, owning a command that is now 2.0's: the natural clean-up, `pip uninstall acpkit`,
then deletes the command. Each `acpkit` command therefore says, on stderr:

- while a 1.x `acpkit` package is installed: that it is, and the one command that removes it and
  puts 2.0's `acpkit` back ([`legacy_package_problem`][acpkit_core.cli.legacy.legacy_package_problem]);
- started as `python -m acpkit_core.cli` (which still works when the command is gone): that the
  environment's `acpkit` command is missing or is 1.x's, and how to restore it
  ([`command_problem`][acpkit_core.cli.legacy.command_problem]).
"""

from __future__ import annotations

import os
import shlex
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from .install import CORE, Environment, Source, core_version, current_environment, release_source, requirement_args

__all__ = ["command_problem", "legacy_package_problem", "restore_command"]

LEGACY = "acpkit"
"""The distribution that held the `acpkit` command in ACP Kit 1.x."""


def _legacy_version() -> str | None:
    try:
        found = distribution(LEGACY).version
    except PackageNotFoundError:
        return None
    return found if found.split(".")[0].isdigit() and int(found.split(".")[0]) < 2 else None


def restore_command(
    *,
    uninstall_legacy: bool,
    command_is_ours: bool = True,
    environment: Environment | None = None,
    source: Source | None = None,
) -> str:
    """The command (runnable as printed) that removes 1.x's `acpkit` if asked and leaves 2.0's `acpkit` command.

    In a uv project: `uv remove acpkit`, then `uv sync --reinstall-package acpkit-core` (uv.lock knows
    where 2.0 came from). Elsewhere, while the command is still 2.0's (`command_is_ours`), it is kept
    aside during the uninstall and put back (no need to know where 2.0 came from); once it is gone or
    1.x's, `acpkit-core` is reinstalled from its source.
    """
    environment = environment or current_environment()
    command_file = _command_file()
    if environment.installer == "uv-project":
        project = ["--project", str(environment.project)] if environment.project is not None else []
        steps = [["uv", "remove", *project, LEGACY]] if uninstall_legacy else []
        steps.append(["uv", "sync", *project, "--reinstall-package", CORE])
        return " && ".join(shlex.join(step) for step in steps)
    if environment.installer == "uv":
        uninstall = ["uv", "pip", "uninstall", "--python", environment.python, LEGACY]
        reinstall = ["uv", "pip", "install", "--python", environment.python, "--reinstall", "--no-deps"]
    else:
        uninstall = [environment.python, "-m", "pip", "uninstall", "-y", LEGACY]
        reinstall = [environment.python, "-m", "pip", "install", "--force-reinstall", "--no-deps"]
    keep = command_is_ours and command_file is not None and command_file.exists()
    if uninstall_legacy and keep and command_file is not None and os.name != "nt":
        kept = command_file.with_name(command_file.name + ".acpkit-2")
        steps = [["cp", "-p", str(command_file), str(kept)], uninstall, ["mv", str(kept), str(command_file)]]
        return " && ".join(shlex.join(step) for step in steps)
    version = core_version()
    source = source or release_source(version=version)
    args, _ = requirement_args(CORE, None, source, version)
    steps = [uninstall] if uninstall_legacy else []
    steps.append([*reinstall, *args])
    command = " && ".join(shlex.join(step) for step in steps)
    if source.kind == "unknown":
        command += " (add --find-links DIR if ACP Kit 2.0 came from wheel files in DIR)"
    return command


def legacy_package_problem() -> str | None:
    """What to tell while ACP Kit 1.x's `acpkit` package is installed here (None when it is not)."""
    version = _legacy_version()
    if version is None:
        return None
    return (
        f"acpkit: ACP Kit 1.x's `acpkit` package ({version}) is still installed in this environment. "
        "acpkit-core 2.0 now provides the `acpkit` command, and uninstalling the 1.x package deletes it. "
        f"Remove 1.x and keep the command with: {restore_command(uninstall_legacy=True)}"
    )


def _command_file() -> Path | None:
    """Where acpkit-core installed the `acpkit` command (from its RECORD), None when not recorded."""
    try:
        core = distribution(CORE)
    except PackageNotFoundError:
        return None
    for file in core.files or []:
        if Path(str(file)).stem == "acpkit" and Path(str(file)).parent.name in ("bin", "Scripts"):
            return Path(str(core.locate_file(file))).resolve()
    return None


def command_problem() -> str | None:
    """What to tell when this environment's `acpkit` command is missing or is 1.x's (None when it is ours)."""
    path = _command_file()
    if path is None:
        return None
    if not path.exists():
        state = "is missing (uninstalling ACP Kit 1.x's `acpkit` package deletes it)"
    elif path.suffix != ".exe" and "acpkit_core" not in path.read_text(errors="replace"):
        state = "runs ACP Kit 1.x"
    else:
        return None
    uninstall = _legacy_version() is not None
    fix = restore_command(uninstall_legacy=uninstall, command_is_ours=False)
    return f"acpkit: this environment's `acpkit` command ({path}) {state}. Restore it with: {fix}"
