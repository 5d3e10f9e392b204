"""PermissionPolicy precedence, permission options and answers, remembered "always" answers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AllowedOutcome, DeniedOutcome, PermissionOption, RequestPermissionResponse, ToolKind
from acpkit_core.errors import UserError
from acpkit_core.permissions import (
    STANDARD_MODES,
    Decision,
    Mode,
    PermissionPolicy,
    RememberedPermissions,
    decision_from_response,
    effective_decision,
    permission_options,
)
from acpkit_core.runner.types import PermissionDecision
from hypothesis import given
from hypothesis import strategies as st

POLICY = PermissionPolicy(
    ask=("delete_*", "*_file"),
    allow=("read_file", "safe_*"),
    deny=("drop_*",),
    tools={"rm": "ask", "ls": "allow", "nuke": "deny", "delete_tmp": "allow"},
    kinds={"execute": "ask", "fetch": "deny"},
)


@pytest.mark.parametrize(
    ("name", "kind", "expected"),
    [
        # exact tool rules beat everything
        ("rm", "delete", "ask"),
        ("ls", "execute", "allow"),
        ("nuke", "other", "deny"),
        ("delete_tmp", "delete", "allow"),  # exact allow beats the `delete_*` ask pattern
        # patterns: deny > ask > allow, whatever the kind says
        ("drop_table", "other", "deny"),
        ("delete_user", "other", "ask"),
        ("write_file", "edit", "ask"),
        ("read_file", "read", "ask"),  # matches both `*_file` (ask) and `read_file` (allow): the cautious one wins
        ("safe_exec", "execute", "allow"),  # a pattern beats the kind default
        ("mcp__fs__write_file", "edit", "ask"),
        # kind defaults
        ("bash", "execute", "ask"),
        ("http_get", "fetch", "deny"),
        # the default
        ("grep", "search", "allow"),
        ("file_info", "read", "allow"),  # `*_file` matches the whole name only
        ("Delete_user", "other", "allow"),  # case-sensitive
    ],
)
def test_decide_precedence(name: str, kind: ToolKind, expected: Decision) -> None:
    assert POLICY.decide(name, kind) == expected
    assert POLICY.needs_permission(name, kind) is (expected != "allow")


def test_empty_policy_allows_everything() -> None:
    policy = PermissionPolicy()
    assert policy.decide("anything", "delete") == "allow"
    assert not policy.needs_permission("rm", "delete")


def test_default_can_be_changed_and_single_pattern_string() -> None:
    policy = PermissionPolicy(allow="read_*", default="ask")
    assert policy.allow == ("read_*",)
    assert policy.decide("read_file", "read") == "allow"
    assert policy.decide("write_file", "edit") == "ask"


def test_policy_copies_its_mappings() -> None:
    tools: dict[str, Decision] = {"rm": "ask"}
    policy = PermissionPolicy(tools=tools)
    tools["rm"] = "allow"
    assert policy.decide("rm", "delete") == "ask"


def test_glob_character_classes() -> None:
    policy = PermissionPolicy(ask=("tool_[ab]", "x?"))
    assert [policy.decide(n) for n in ("tool_a", "tool_c", "xy", "xyz")] == ["ask", "allow", "ask", "allow"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tools": {"rm": "maybe"}}, "'rm': 'maybe' is not one of allow, ask, deny"),
        ({"kinds": {"execute": "never"}}, "'execute': 'never' is not one of"),
        ({"kinds": {"shell": "ask"}}, "'shell' is not an ACP tool kind"),
        ({"default": "sometimes"}, "PermissionPolicy(default=...)"),
        ({"ask": ("",)}, "every pattern must be a non-empty string"),
    ],
)
def test_policy_validates(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=re.escape(message)):
        PermissionPolicy(**kwargs)


@given(name=st.text(min_size=1, max_size=30))
def test_exact_rule_always_wins(name: str) -> None:
    policy = PermissionPolicy(ask=("*",), deny=("*",), tools={name: "allow"}, kinds={"other": "deny"})
    assert policy.decide(name, "other") == "allow"
    assert policy.decide(name + "x", "other") == "deny"


# --- options -------------------------------------------------------------------------------------


def test_permission_options_are_the_four_kinds_with_stable_ids() -> None:
    options = permission_options("write_file")
    assert [(o.option_id, o.kind) for o in options] == [
        ("allow_once", "allow_once"),
        ("allow_always", "allow_always"),
        ("reject_once", "reject_once"),
        ("reject_always", "reject_always"),
    ]
    assert [o.name for o in options] == ["Allow", "Always allow write_file", "Reject", "Always reject write_file"]
    assert [o.name for o in permission_options()] == ["Allow", "Always allow", "Reject", "Always reject"]
    wire = [o.model_dump(by_alias=True, exclude_none=True) for o in options]
    assert wire[0] == {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"}


def _selected(option_id: str) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))


@pytest.mark.parametrize(
    ("option_id", "expected"),
    [
        ("allow_once", PermissionDecision(outcome="allow", always=False, option_id="allow_once")),
        ("allow_always", PermissionDecision(outcome="allow", always=True, option_id="allow_always")),
        ("reject_once", PermissionDecision(outcome="reject", always=False, option_id="reject_once")),
        ("reject_always", PermissionDecision(outcome="reject", always=True, option_id="reject_always")),
        ("bogus", PermissionDecision(outcome="reject", always=False, option_id="bogus")),
    ],
)
def test_decision_from_selected(option_id: str, expected: PermissionDecision) -> None:
    decision = decision_from_response(_selected(option_id), permission_options("x"))
    assert decision == expected
    assert decision.allowed is (expected.outcome == "allow")


def test_decision_from_cancelled() -> None:
    decision = decision_from_response(RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled")))
    assert decision == PermissionDecision(outcome="cancelled")
    assert not decision.allowed


def test_decision_uses_the_kind_of_custom_options() -> None:
    options = [
        PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
        PermissionOption(option_id="never", name="Never", kind="reject_always"),
    ]
    assert decision_from_response(_selected("never"), options) == PermissionDecision(
        outcome="reject", always=True, option_id="never"
    )
    # an id from the default set is unknown when custom options were sent
    assert decision_from_response(_selected("allow_once"), options).outcome == "reject"


def test_decision_from_wire_json() -> None:
    response = RequestPermissionResponse.model_validate(
        {"outcome": {"outcome": "selected", "optionId": "allow_always"}}
    )
    assert decision_from_response(response).always


# --- remembered answers ------------------------------------------------------------------------


def test_remembered_permissions_flow() -> None:
    remembered = RememberedPermissions()
    assert not remembered
    assert remembered.apply("rm", "ask") == "ask"

    remembered = remembered.remember("rm", PermissionDecision(outcome="allow", always=True))
    remembered = remembered.remember("nuke", PermissionDecision(outcome="reject", always=True))
    same = remembered.remember("ls", PermissionDecision(outcome="allow"))  # not "always": nothing to remember
    assert same is remembered
    assert remembered.remember("ls", PermissionDecision(outcome="cancelled", always=True)) is remembered

    assert remembered.lookup("rm") == "allow"
    assert remembered.lookup("nuke") == "reject"
    assert remembered.lookup("ls") is None
    assert remembered.apply("rm", "ask") == "allow"
    assert remembered.apply("nuke", "ask") == "deny"
    assert remembered.apply("nuke", "allow") == "deny"  # "always reject" holds even where nothing asks
    assert remembered.apply("rm", "allow") == "allow"
    assert remembered.apply("rm", "deny") == "deny"  # a developer's deny is never overridden
    assert remembered.apply("ls", "ask") == "ask"

    flipped = remembered.remember("rm", PermissionDecision(outcome="reject", always=True))
    assert flipped.lookup("rm") == "reject"
    assert "rm" not in flipped.allowed

    assert remembered.forget("rm").lookup("rm") is None
    assert remembered.forget("rm").lookup("nuke") == "reject"
    assert not remembered.forget()


def test_remembered_permissions_json_round_trip() -> None:
    remembered = RememberedPermissions(allowed=frozenset({"b", "a"}), rejected=frozenset({"c"}))
    data = remembered.to_json()
    assert data == {"allow_always": ["a", "b"], "reject_always": ["c"]}
    assert RememberedPermissions.from_json(json.loads(json.dumps(data))) == remembered
    assert RememberedPermissions.from_json(None) == RememberedPermissions()
    assert RememberedPermissions.from_json({}) == RememberedPermissions()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expected an object, got list"),
        ({"allow_always": "rm"}, "allow_always must be a list of tool names"),
        ({"reject_always": [1]}, "reject_always must be a list of tool names"),
        ({"allow": ["rm"]}, "unknown keys"),
    ],
)
def test_remembered_permissions_rejects_bad_json(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RememberedPermissions.from_json(data)


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["allow", "reject"]), st.booleans())))
def test_remembered_keeps_the_last_always_answer(answers: list[tuple[str, str, bool]]) -> None:
    remembered = RememberedPermissions()
    last: dict[str, str] = {}
    for tool, outcome, always in answers:
        decision = PermissionDecision(outcome="allow" if outcome == "allow" else "reject", always=always)
        remembered = remembered.remember(tool, decision)
        if always:
            last[tool] = outcome
    assert {t: remembered.lookup(t) for t in "abc"} == {t: last.get(t) for t in "abc"}
    assert RememberedPermissions.from_json(remembered.to_json()) == remembered


# --- the whole chain ------------------------------------------------------------------------------

INTERACTIVE, READONLY = (next(m for m in STANDARD_MODES if m.id == i) for i in ("interactive", "readonly"))
REMEMBERED = RememberedPermissions(allowed=frozenset({"write_file", "nuke"}), rejected=frozenset({"bash"}))


@pytest.mark.parametrize(
    ("name", "kind", "mode", "remembered", "expected"),
    [
        ("grep", "search", None, None, "allow"),
        ("write_file", "edit", None, None, "ask"),  # policy pattern
        ("write_file", "edit", None, REMEMBERED, "allow"),  # remembered "always allow"
        ("bash", "execute", None, REMEMBERED, "deny"),  # remembered "always reject" is never "no need to ask"
        ("nuke", "other", None, REMEMBERED, "deny"),  # a developer's deny beats a remembered allow
        ("edit", "edit", INTERACTIVE, None, "ask"),  # the mode asks for edits
        ("edit", "edit", INTERACTIVE, RememberedPermissions(allowed=frozenset({"edit"})), "allow"),
        ("ls", "search", INTERACTIVE, None, "allow"),
        ("bash", "execute", None, RememberedPermissions(rejected=frozenset({"bash"})), "deny"),  # even if not asked
        ("grep", "search", None, RememberedPermissions(rejected=frozenset({"grep"})), "deny"),
        ("edit", "edit", READONLY, None, "deny"),  # the mode hides edits
        ("ls", "execute", READONLY, None, "deny"),  # even when the policy allows the tool
        ("grep", "search", READONLY, None, "allow"),
    ],
)
def test_effective_decision(
    name: str, kind: ToolKind, mode: Mode | None, remembered: RememberedPermissions | None, expected: Decision
) -> None:
    assert effective_decision(name, kind, policy=POLICY, mode=mode, remembered=remembered) == expected


def test_effective_decision_without_policy() -> None:
    assert effective_decision("rm", "delete") == "allow"
    assert effective_decision("rm", "delete", mode=INTERACTIVE) == "ask"


def test_doc_examples_run() -> None:
    page = Path(__file__).parents[2] / "docs" / "core" / "permissions.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    assert len(blocks) == 6
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page}[{i}]", "exec"), {"__name__": "docs"})
