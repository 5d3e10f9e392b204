"""The shipped conformance suite (`acpkit_core.testing.conformance`): run against a third runner, and guarded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from acpkit_core.config import AgentOptions
from acpkit_core.testing.conformance import REQUIRED_SCENARIOS, RunnerConformance, conformance_override
from acpkit_core.testing.conformance_memory import AgentFactory

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "conformance_runner.py"

sys.path.insert(0, str(EXAMPLE.parent))
from conformance_runner import TestScenarioRunnerConformance  # noqa: E402  (collected here: the core run)

__all__ = ["TestScenarioRunnerConformance"]


def test_the_required_scenarios_are_the_suite() -> None:
    assert {
        "test_text",
        "test_thought",
        "test_tool_completed",
        "test_tool_failed",
        "test_tool_presentation",
        "test_permission",
        "test_cancel_mid_tool",
        "test_load_after_restart",
        "test_bad_prompt",
        "test_auth_required_before_sessions",
        "test_question_by_elicitation",
        "test_question_by_permission_fallback",
        "test_cancel_while_a_question_is_open",
        "test_tools_command",
        "test_cancel_request_for_a_running_prompt",
        "test_a_cancelled_turn_cancels_its_open_question",
        "test_question_by_the_developers_fallback",
        "test_show_thinking_off_hides_reasoning",
        "test_context_meter_and_prompt_usage",
        "test_logout_ends_authentication",
        "test_delete_of_an_unknown_session_succeeds",
        "test_rewind",
        "test_retry",
        "test_fork_at_a_prompt",
        "test_mcp_over_acp_needs_negotiation",
        "test_mcp_over_acp",
        "test_custom_llm_endpoint",
        "test_tool_call_name_where_negotiated",
        "test_plan_operations_where_negotiated",
        "test_a_limit_reached_is_a_notice",
    } == REQUIRED_SCENARIOS


def test_redefining_a_required_scenario_is_refused() -> None:
    with pytest.raises(TypeError, match=r"Lenient\.test_permission replaces a required conformance scenario"):

        class Lenient(RunnerConformance):  # pyright: ignore[reportUnusedClass]  (refused as it is made)
            async def test_permission(self, agent_factory: AgentFactory, options: AgentOptions, answer: str) -> None:
                pass

    with pytest.raises(TypeError, match="test_text"):

        class Dropped(RunnerConformance):  # pyright: ignore[reportUnusedClass]  (refused as it is made)
            test_text = None  # pyright: ignore[reportAssignmentType]  (the mistake under test)


def test_a_redefinition_with_a_reason_is_allowed() -> None:
    class Different(RunnerConformance):
        @conformance_override("this framework answers in two messages")
        async def test_text(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
            pass

    assert Different.test_text is not RunnerConformance.test_text
    with pytest.raises(ValueError, match="reason"):
        conformance_override("  ")


def test_a_third_party_pytest_run_uses_the_suite(tmp_path: Path) -> None:
    """The example, run by pytest from a directory that knows nothing of this repository's tests."""
    (tmp_path / "test_third_party.py").write_text(EXAMPLE.read_text())
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    env = {**os.environ, "ACPKIT_STATE_DIR": str(tmp_path / "state")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-W", "error", "test_third_party.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "34 passed, 1 skipped" in result.stdout
