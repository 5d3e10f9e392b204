"""The finish-reason table both adapters use."""

from __future__ import annotations

import pytest
from acpkit_core.runner.stop import stop_reason_from_finish


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        (None, "end_turn"),
        ("", "end_turn"),
        ("stop", "end_turn"),
        ("tool_calls", "end_turn"),
        ("tool_call", "end_turn"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("end_turn", "end_turn"),
        ("tool_use", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("refusal", "refusal"),
        ("STOP", "end_turn"),
        ("MAX_TOKENS", "max_tokens"),
        ("SAFETY", "refusal"),
        ("PROHIBITED_CONTENT", "refusal"),
        ("something_new", "end_turn"),
    ],
)
def test_finish_reasons(reason: str | None, expected: str) -> None:
    assert stop_reason_from_finish(reason) == expected
