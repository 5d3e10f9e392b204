"""A throwaway Postgres server for the tests: Debian's binaries, a fresh cluster in a temp directory.

`PostgresCluster.start()` runs `initdb` and `pg_ctl start` (as the `postgres` user, or `nobody`,
when the tests run as root: initdb refuses root) on a free loopback port, with trust
authentication, no fsync and the unix socket in the data directory. `stop()` stops it
(`immediate`) and removes the directory. The fixtures in `tests/conftest.py` start one per test
session, lazily, and give each test its own schema.

Without the binaries, `postgres_missing()` says why: the tests skip locally and FAIL in CI
(`CI` set), where `.ci/run` installs Debian's `postgresql` first.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

__all__ = ["PostgresCluster", "bin_dir", "new_schema_name", "postgres_missing", "schema_url"]


def bin_dir() -> Path | None:
    """The newest `/usr/lib/postgresql/*/bin` holding `initdb` and `pg_ctl` (`$ACPKIT_PG_BIN` first)."""
    explicit = os.environ.get("ACPKIT_PG_BIN")
    candidates = [explicit] if explicit else []
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)
    for candidate in candidates:
        path = Path(candidate)
        if (path / "initdb").exists() and (path / "pg_ctl").exists():
            return path
    return None


def postgres_missing() -> str | None:
    """Why no throwaway cluster can start here, or `None` when it can."""
    if bin_dir() is None:
        return "Postgres is not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install postgresql"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> str | None:
    """The user to run the server as: none of ours unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("running as root and no 'postgres' or 'nobody' user to run initdb as")


@dataclass
class PostgresCluster:
    """One Postgres server in a temporary directory."""

    root: Path
    port: int
    user: str | None

    @property
    def url(self) -> str:
        """The superuser's URL of the `postgres` database."""
        return f"postgresql://acpkit@127.0.0.1:{self.port}/postgres"

    @classmethod
    def start(cls) -> PostgresCluster:
        """initdb + pg_ctl start; raises with the server's log when it does not come up."""
        binaries = bin_dir()
        if binaries is None:
            raise RuntimeError(postgres_missing())
        user = _run_as()
        root = Path(tempfile.mkdtemp(prefix="acpkit-pg-"))
        data = root / "data"
        if user is not None:
            info = pwd.getpwnam(user)
            os.chown(root, info.pw_uid, info.pw_gid)
        cluster = cls(root=root, port=_free_port(), user=user)
        try:
            cluster._run(
                binaries / "initdb",
                "-D",
                str(data),
                "-U",
                "acpkit",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            )
            options = (
                f"-c listen_addresses=127.0.0.1 -c port={cluster.port} -c unix_socket_directories={data} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
            )
            cluster._run(binaries / "pg_ctl", "-D", str(data), "-l", str(root / "log"), "-o", options, "-w", "start")
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _run(self, *argv: object) -> None:
        proc = subprocess.run(
            [str(a) for a in argv],
            user=self.user,
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if proc.returncode != 0:
            log = self.root / "log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            name = Path(str(argv[0])).name
            raise RuntimeError(f"{name} failed ({proc.returncode}):\n{proc.stderr}{proc.stdout}{tail}")

    def stop(self) -> None:
        """Stop the server (no checkpoint) and remove its directory."""
        binaries = bin_dir()
        data = self.root / "data"
        if binaries is not None and (data / "postmaster.pid").exists():
            with contextlib.suppress(Exception):
                self._run(binaries / "pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def schema_url(url: str, schema: str) -> str:
    """`url` with its `search_path` set to `schema` (tables created through it land there)."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-csearch_path={schema}')}"


def new_schema_name() -> str:
    """A fresh schema name for one test."""
    return f"t_{uuid.uuid4().hex[:12]}"
