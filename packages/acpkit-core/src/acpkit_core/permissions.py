"""Which tools need the user's permission, and the answers the user gave.

[`PermissionPolicy`][acpkit_core.permissions.PermissionPolicy] is the developer's rule book: it
decides `allow`, `ask` or `deny` for a tool from its name and its ACP kind.
[`permission_options`][acpkit_core.permissions.permission_options] builds the four options of a
`session/request_permission` request and
[`decision_from_response`][acpkit_core.permissions.decision_from_response] turns the client's
answer into a `PermissionDecision`.
[`RememberedPermissions`][acpkit_core.permissions.RememberedPermissions] keeps the user's
"always" answers for one session in a JSON-serialisable form.

[`PermissionGate`][acpkit_core.runner.permission_gate.PermissionGate] is the one gate every runner's tool
calls go through (the server's turn uses one; a hand-built LangChain server gets one from
`bind_connection`): it decides, asks the client when it must, remembers "always" answers and
the answer given for each tool call id, and gives up the question when the turn is cancelled.

[`effective_decision`][acpkit_core.permissions.effective_decision] composes the rules for one tool call:

1. `policy.decide(name, kind)` gives `allow`, `ask` or `deny`;
2. a mode that hides the tool's kind turns it into `deny`; a mode that asks for the kind turns
   `allow` into `ask` (for example `interactive` and an `edit` tool);
3. `remembered.apply(name, decision)`: an earlier "always allow" for this tool turns `ask` into
   `allow`; an earlier "always reject" turns anything into `deny`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import translate
from typing import Any, Literal, TypeAlias, cast, get_args

from acp.schema import PermissionOption, PermissionOptionKind, RequestPermissionResponse, ToolKind

from .errors import UserError
from .runner.types import PermissionDecision

logger = logging.getLogger("acpkit_core.permissions")

__all__ = [
    "STANDARD_MODES",
    "Decision",
    "EditHook",
    "Mode",
    "PermissionPolicy",
    "RememberedPermissions",
    "decision_from_response",
    "effective_decision",
    "permission_options",
    "refusal_reason",
]


READ_ONLY_KINDS: frozenset[ToolKind] = frozenset({"read", "search", "think", "fetch"})


MUTATING_KINDS: frozenset[ToolKind] = frozenset({"edit", "delete", "move", "execute"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Mode:
    """A session mode: which tools the model may use and which need the user's permission."""

    id: str
    """Stable id (`readonly`)."""
    name: str
    """Name shown to the user."""
    description: str | None = None
    """One line shown to the user."""
    allowed_kinds: frozenset[ToolKind] | None = None
    """Tool kinds the model may see; `None` means all."""
    ask_kinds: frozenset[ToolKind] = frozenset()
    """Tool kinds that need the user's permission in this mode."""
    plan_only: bool = False
    """The model may plan but not run mutating tools."""

    def allows(self, kind: ToolKind) -> bool:
        """True when tools of this kind are visible in this mode."""
        if self.plan_only and kind in MUTATING_KINDS:
            return False
        return self.allowed_kinds is None or kind in self.allowed_kinds

    def asks(self, kind: ToolKind) -> bool:
        """True when tools of this kind need permission in this mode."""
        return kind in self.ask_kinds


STANDARD_MODES: tuple[Mode, ...] = (
    Mode(
        id="agentic",
        name="Agentic",
        description="Runs tools without asking, except those the agent's own permission rules ask about.",
    ),
    Mode(
        id="interactive",
        name="Interactive",
        description="Also asks before editing, deleting or moving files and before running commands.",
        ask_kinds=MUTATING_KINDS,
    ),
    Mode(
        id="readonly",
        name="Read-only",
        description="Offers only tools that read, search, fetch or think: nothing is changed.",
        allowed_kinds=READ_ONLY_KINDS,
    ),
    Mode(
        id="planning",
        name="Planning",
        description="Investigates and writes a plan; runs no tool that changes anything.",
        plan_only=True,
    ),
)
"""The standard preset: `agentic`, `interactive`, `readonly`, `planning`.

A mode adds to the agent's own permission rules (`permission_policy`, the framework's approvals),
never removes from them: in `agentic` a tool the agent's rules ask about is still asked about."""


Decision: TypeAlias = Literal["allow", "ask", "deny"]
"""What the policy says about a tool: run it, ask the user first, or refuse it without asking."""

EditHook: TypeAlias = Callable[[str, Mapping[str, Any], PermissionDecision], "Mapping[str, Any] | None"]
"""Given an approved tool call (name, arguments, the user's answer), returns replacement arguments or `None`."""

_DECISIONS: frozenset[str] = frozenset(get_args(Decision))
_TOOL_KINDS: frozenset[str] = frozenset(get_args(ToolKind))


def _compile(patterns: Iterable[str]) -> re.Pattern[str] | None:
    """One regular expression matching any of the glob patterns (case-sensitive), or None."""
    parts = [translate(p) for p in patterns]
    return re.compile("|".join(parts)) if parts else None


def _patterns(value: str | Iterable[str], field_name: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = (value,)
    result = tuple(value)
    for pattern in result:
        if not isinstance(pattern, str) or not pattern:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UserError(
                f"PermissionPolicy({field_name}=...): every pattern must be a non-empty string, got {pattern!r}"
            )
    return result


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionPolicy:
    """Which tools need the user's permission.

    ```python
    policy = PermissionPolicy(
        ask=("delete_*", "*_file"),
        allow=("read_file",),
        tools={"rm": "ask", "ls": "allow", "nuke": "deny"},
        kinds={"execute": "ask"},
    )
    policy.decide("write_file", "edit")  # "ask" (matches `*_file`)
    ```

    Precedence, first match wins:

    1. an exact rule in [`tools`][acpkit_core.permissions.PermissionPolicy.tools];
    2. the glob patterns: `deny`, then `ask`, then `allow` (the most cautious matching pattern);
    3. the default for the tool's kind in [`kinds`][acpkit_core.permissions.PermissionPolicy.kinds];
    4. [`default`][acpkit_core.permissions.PermissionPolicy.default] (`allow`).

    Patterns use shell globs (`*`, `?`, `[abc]`) matched case-sensitively against the whole tool
    name, so `*_file` matches `read_file` and `mcp__fs__write_file` but not `file_info`.
    """

    ask: Sequence[str] = ()
    """Glob patterns of tools to ask about before running."""
    allow: Sequence[str] = ()
    """Glob patterns of tools to run without asking."""
    deny: Sequence[str] = ()
    """Glob patterns of tools to refuse without asking."""
    tools: Mapping[str, Decision] = field(default_factory=dict[str, Decision])
    """Exact per-tool rules (`{"rm": "ask", "ls": "allow", "nuke": "deny"}`); they beat every pattern."""
    kinds: Mapping[ToolKind, Decision] = field(default_factory=dict[ToolKind, Decision])
    """Defaults per ACP tool kind (`{"execute": "ask"}`) for tools no rule or pattern names."""
    default: Decision = "allow"
    """The decision for a tool nothing else matches."""
    _deny_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False, default=None)
    _ask_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False, default=None)
    _allow_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        ask, allow, deny = (_patterns(v, n) for v, n in ((self.ask, "ask"), (self.allow, "allow"), (self.deny, "deny")))
        for name, decision in dict(self.tools).items():
            if decision not in _DECISIONS:
                raise UserError(f"PermissionPolicy(tools=...): {name!r}: {decision!r} is not one of allow, ask, deny")
        for kind, decision in dict(self.kinds).items():
            if kind not in _TOOL_KINDS:
                raise UserError(
                    f"PermissionPolicy(kinds=...): {kind!r} is not an ACP tool kind ({', '.join(sorted(_TOOL_KINDS))})"
                )
            if decision not in _DECISIONS:
                raise UserError(f"PermissionPolicy(kinds=...): {kind!r}: {decision!r} is not one of allow, ask, deny")
        if self.default not in _DECISIONS:
            raise UserError(f"PermissionPolicy(default=...): {self.default!r} is not one of allow, ask, deny")
        setter = object.__setattr__
        setter(self, "ask", ask)
        setter(self, "allow", allow)
        setter(self, "deny", deny)
        setter(self, "tools", dict(self.tools))
        setter(self, "kinds", dict(self.kinds))
        setter(self, "_deny_re", _compile(deny))
        setter(self, "_ask_re", _compile(ask))
        setter(self, "_allow_re", _compile(allow))

    def decide(self, name: str, kind: ToolKind = "other") -> Decision:
        """`allow`, `ask` or `deny` for the tool `name` of ACP kind `kind` (see the precedence above)."""
        rule = self.tools.get(name)
        if rule is not None:
            return rule
        for regex, decision in ((self._deny_re, "deny"), (self._ask_re, "ask"), (self._allow_re, "allow")):
            if regex is not None and regex.match(name):
                return cast(Decision, decision)
        return self.kinds.get(kind, self.default)

    def needs_permission(self, name: str, kind: ToolKind = "other") -> bool:
        """True unless the tool may run without asking.

        A denied tool also answers True: it may not run as is. Call
        [`decide`][acpkit_core.permissions.PermissionPolicy.decide] to tell `ask` from `deny`.
        """
        return self.decide(name, kind) != "allow"


# --- Permission options and answers ----------------------------------------------------------

_OPTION_NAMES: Mapping[PermissionOptionKind, str] = {
    "allow_once": "Allow",
    "allow_always": "Always allow",
    "reject_once": "Reject",
    "reject_always": "Always reject",
}


def permission_options(tool_name: str | None = None) -> list[PermissionOption]:
    """The four options of a permission request, in the order clients show them.

    The option ids are stable and equal to the option kinds (`allow_once`, `allow_always`,
    `reject_once`, `reject_always`); the "always" options name the tool when given.
    """
    options: list[PermissionOption] = []
    for kind, label in _OPTION_NAMES.items():
        if tool_name and kind.endswith("_always"):
            label = f"{label} {tool_name}"
        options.append(PermissionOption(option_id=kind, name=label, kind=kind))
    return options


def decision_from_response(
    response: RequestPermissionResponse, options: Sequence[PermissionOption] | None = None
) -> PermissionDecision:
    """Turn the client's answer to `session/request_permission` into a decision.

    - `cancelled` gives `outcome="cancelled"` (the prompt turn was cancelled; treat it as a rejection);
    - a selected option gives `allow` or `reject` from its kind, `always=True` for `*_always`;
    - an option id that is not among `options` gives `reject` (never run a tool on an answer we do
      not understand), keeping the id in `option_id`.

    `options` defaults to [`permission_options()`][acpkit_core.permissions.permission_options].
    """
    outcome = response.outcome
    if outcome.outcome == "cancelled":
        return PermissionDecision(outcome="cancelled")
    option_id = outcome.option_id
    by_id = {o.option_id: o for o in (options if options is not None else permission_options())}
    option = by_id.get(option_id)
    if option is None:
        return PermissionDecision(outcome="reject", option_id=option_id)
    allowed = option.kind in ("allow_once", "allow_always")
    return PermissionDecision(
        outcome="allow" if allowed else "reject",
        always=option.kind.endswith("_always"),
        option_id=option_id,
    )


# --- Remembered "always" answers ---------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RememberedPermissions:
    """The user's "always allow" / "always reject" answers in one session, per tool name.

    An immutable value: [`remember`][acpkit_core.permissions.RememberedPermissions.remember]
    returns a new one. [`to_json`][acpkit_core.permissions.RememberedPermissions.to_json] and
    [`from_json`][acpkit_core.permissions.RememberedPermissions.from_json] convert it for the
    session store.
    """

    allowed: frozenset[str] = frozenset()
    """Tools the user chose "always allow" for."""
    rejected: frozenset[str] = frozenset()
    """Tools the user chose "always reject" for."""

    def lookup(self, tool_name: str) -> Literal["allow", "reject"] | None:
        """The remembered answer for this tool, or None when the user has not answered "always"."""
        if tool_name in self.rejected:
            return "reject"
        if tool_name in self.allowed:
            return "allow"
        return None

    def apply(self, tool_name: str, decision: Decision) -> Decision:
        """Apply the remembered answer for this tool to a decision.

        "Always reject" turns `allow` and `ask` into `deny`: the user said never, even if the mode
        changed since. "Always allow" turns only `ask` into `allow`: a `deny` stays a `deny`.
        """
        remembered = self.lookup(tool_name)
        if remembered == "reject":
            return "deny"
        if remembered == "allow" and decision == "ask":
            return "allow"
        return decision

    def remember(self, tool_name: str, decision: PermissionDecision) -> RememberedPermissions:
        """A copy that records `decision` for this tool when it is an "always" answer (else `self`)."""
        if not decision.always or decision.outcome == "cancelled":
            return self
        if decision.outcome == "allow":
            return RememberedPermissions(allowed=self.allowed | {tool_name}, rejected=self.rejected - {tool_name})
        return RememberedPermissions(allowed=self.allowed - {tool_name}, rejected=self.rejected | {tool_name})

    def forget(self, tool_name: str | None = None) -> RememberedPermissions:
        """A copy without the answer for `tool_name`, or without any answer when it is None."""
        if tool_name is None:
            return RememberedPermissions()
        return RememberedPermissions(allowed=self.allowed - {tool_name}, rejected=self.rejected - {tool_name})

    def __bool__(self) -> bool:
        return bool(self.allowed or self.rejected)

    def to_json(self) -> dict[str, list[str]]:
        """`{"allow_always": [...], "reject_always": [...]}` with sorted tool names."""
        return {"allow_always": sorted(self.allowed), "reject_always": sorted(self.rejected)}

    @classmethod
    def from_json(cls, data: object) -> RememberedPermissions:
        """Read what [`to_json`][acpkit_core.permissions.RememberedPermissions.to_json] wrote.

        `None` gives an empty value. Anything else that is not of that shape raises `ValueError`.
        """
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise ValueError(f"remembered permissions: expected an object, got {type(data).__name__}")
        mapping = cast(Mapping[str, Any], data)
        unknown = set(mapping) - {"allow_always", "reject_always"}
        if unknown:
            raise ValueError(f"remembered permissions: unknown keys {sorted(unknown)}")
        sets: list[frozenset[str]] = []
        for key in ("allow_always", "reject_always"):
            names: object = mapping.get(key, [])
            if not isinstance(names, list | tuple) or not all(
                isinstance(n, str) for n in cast(Sequence[object], names)
            ):
                raise ValueError(f"remembered permissions: {key} must be a list of tool names")
            sets.append(frozenset(cast(Sequence[str], names)))
        allowed, rejected = sets
        return cls(allowed=allowed - rejected, rejected=rejected)


def effective_decision(
    name: str,
    kind: ToolKind,
    *,
    policy: PermissionPolicy | None = None,
    mode: Mode | None = None,
    remembered: RememberedPermissions | None = None,
) -> Decision:
    """What to do about one tool call, all rules considered.

    The policy decides first (no policy: `allow`). A developer's `deny` is final. The mode then
    denies kinds it hides and asks for kinds it asks about. Last, the user's remembered answers: an
    "always allow" settles an `ask` without asking again, and an "always reject" gives `deny`
    whatever came before, so a caller that only runs tools on `allow` never runs it.
    """
    decision = policy.decide(name, kind) if policy is not None else "allow"
    if decision == "deny":
        return "deny"
    if mode is not None:
        if not mode.allows(kind):
            return "deny"
        if mode.asks(kind):
            decision = "ask"
    return remembered.apply(name, decision) if remembered is not None else decision


def refusal_reason(
    name: str,
    kind: ToolKind,
    *,
    policy: PermissionPolicy | None = None,
    mode: Mode | None = None,
    remembered: RememberedPermissions | None = None,
) -> str:
    """Why a tool may not run, naming what refused it: the agent's policy, the session's mode, or the
    user's "always reject" (what the model reads for a call refused without asking)."""
    if policy is not None and policy.decide(name, kind) == "deny":
        return f"The agent's permission policy does not allow `{name}`; do not retry it."
    if mode is not None and not mode.allows(kind):
        return (
            f"The session's mode `{mode.id}` ({mode.name}) does not allow `{name}` (a tool that changes things: "
            f"{kind}); do not retry it unless the user switches to another mode."
            if kind in ("edit", "delete", "move", "execute")
            else f"The session's mode `{mode.id}` ({mode.name}) does not allow `{name}` ({kind}); do not retry it."
        )
    if remembered is not None and remembered.lookup(name) == "reject":
        return f"The user chose to always reject `{name}`; do not retry it unless asked."
    return f"`{name}` may not run in this session; do not retry it."
