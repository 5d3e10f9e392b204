"""The documentation site builds with `mkdocs build --strict` (broken links and references fail)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr[-4000:]
    # the API reference is split by module group: no page an editor or a browser chokes on
    pages = {
        str(page.relative_to(tmp_path / "site")): page.stat().st_size for page in (tmp_path / "site").rglob("*.html")
    }
    reference = {name: size for name, size in pages.items() if name.startswith("reference/")}
    assert len([name for name in reference if name.startswith("reference/acpkit_core/")]) >= 10
    assert {name: size for name, size in reference.items() if size > 400_000} == {}
