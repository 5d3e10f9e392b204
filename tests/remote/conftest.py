"""The remote tests import their helpers (`replicas`) from this directory."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _collect_garbage_here() -> Iterator[None]:
    """Collect each test's garbage before the next test starts.

    A socket a test left to the garbage collector (one the test knows about and lets through with
    `filterwarnings`, or a real leak) warns when it is collected. Collected in this test's own
    teardown, the warning is this test's; otherwise it lands in whichever later test on the same
    worker happens to trigger a full collection, and fails that one.
    """
    yield
    gc.collect()
