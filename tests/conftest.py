"""Shared test fixtures: every test runs with its own ACP Kit state directory; Postgres on demand."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres_cluster import PostgresCluster, new_schema_name, postgres_missing, schema_url

pytest.register_assert_rewrite("rewind_scenario")  # a shared scenario, not a test module: show its failures


@pytest.fixture(autouse=True)
def _isolated_state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ACPKIT_STATE_DIR at a fresh temp directory so no test touches the real home."""
    state = tmp_path_factory.mktemp("acpkit-state")
    monkeypatch.setenv("ACPKIT_STATE_DIR", str(state))
    return state


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a throwaway Postgres server, started once per test session (first use) and removed.

    Without Postgres installed the requesting tests skip, except in CI (`CI` set), where they fail.
    """
    reason = postgres_missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must run the Postgres tests (.ci/run installs it)")
        pytest.skip(reason)
    cluster = PostgresCluster.start()
    try:
        yield cluster.url
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A `postgresql://` URL whose tables land in a schema of this test's own (dropped afterwards)."""
    import psycopg
    from psycopg import sql

    schema = new_schema_name()
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    yield schema_url(postgres_server, schema)
    with contextlib.suppress(psycopg.Error), psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute("SET lock_timeout = '5s'")
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


FIRST = (
    "tests/release/",  # one xdist group of about four minutes: on a worker of its own from the start
    "tests/test_performance_page.py",
    "tests/remote/test_reconnect.py",
    "tests/e2e/test_schema_conformance.py",
    "tests/remote/test_reconnect_race.py",
    "tests/remote/test_serve_command.py",
)
"""The longest modules, started first (longest first), so no worker is left alone with one at the end."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the tests longest module first (a stable sort: each module keeps its own order)."""
    root = config.rootpath

    def rank(item: pytest.Item) -> int:
        path = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        return next((i for i, prefix in enumerate(FIRST) if path.startswith(prefix)), len(FIRST))

    items.sort(key=rank)
