"""The permission and mode gate of one turn: asks the client when the rules say `ask`, once per
tool call, and gives the question up on `session/cancel`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallUpdate, ToolKind

from ..permissions import (
    Decision,
    Mode,
    PermissionPolicy,
    RememberedPermissions,
    decision_from_response,
    effective_decision,
    logger,
    permission_options,
    refusal_reason,
)
from .types import PermissionDecision

__all__ = ["PermissionAsker", "PermissionGate"]


PermissionAsker: TypeAlias = Callable[[ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]
"""Sends one `session/request_permission` (the tool call and the options) and returns the client's answer."""


class PermissionGate:
    """The permission and mode gate of one turn: every tool call of every runner goes through one.

    It composes the developer's [`PermissionPolicy`][acpkit_core.permissions.PermissionPolicy], the
    session's mode and the user's remembered "always" answers
    ([`effective_decision`][acpkit_core.permissions.effective_decision]), asks the client when the
    result is `ask`, and keeps the answer given for each tool call id, so a call asked about by one
    layer (a middleware, an interrupt) is not asked again by another (the tool node, a callback).

    While a question is open, [`cancel`][acpkit_core.runner.permission_gate.PermissionGate.cancel] (a
    `session/cancel`) gives it up at once with the outcome `cancelled`; a `cancelled` answer from
    the client cancels the gate too.

    An answer the gate cannot read (a JSON-RPC error, a result that is not a permission outcome)
    is a refusal: the call does not run, the turn goes on, and one line on stderr says why. A
    connection that closes while the question is open cancels the gate: nobody is left to answer.
    """

    def __init__(
        self,
        *,
        policy: PermissionPolicy | None = None,
        mode: Mode | None = None,
        remembered: RememberedPermissions | None = None,
        asker: PermissionAsker | None = None,
        before_ask: Callable[[], Awaitable[None]] | None = None,
        cancelled: asyncio.Event | None = None,
    ) -> None:
        """Gate by `policy` and `mode`, asking through `asker` (no asker: an `ask` is a `reject`).

        Args:
            policy: The developer's rules (none: every tool is allowed unless the mode says otherwise).
            mode: The session's current mode.
            remembered: The session's "always" answers so far.
            asker: Sends `session/request_permission` to the client.
            before_ask: Awaited before each question (the server flushes buffered text).
            cancelled: The turn's cancellation event (shared with the turn; a new one by default).
        """
        self.policy = policy
        """The developer's rules."""
        self.mode = mode
        """The session's current mode."""
        self.remembered = remembered if remembered is not None else RememberedPermissions()
        """The session's "always" answers, updated by the answers given through this gate."""
        self._asker = asker
        self._before_ask = before_ask
        self._cancel = cancelled if cancelled is not None else asyncio.Event()
        self.answers: dict[str, PermissionDecision] = {}
        """The answer given for each tool call id asked about in this turn."""

    # --- cancellation -----------------------------------------------------------------------------

    @property
    def cancelled(self) -> bool:
        """True once the turn was cancelled."""
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Cancel: an open question is given up, later ones answer `cancelled` without asking."""
        self._cancel.set()

    async def wait_cancelled(self) -> None:
        """Return when the gate is cancelled."""
        await self._cancel.wait()

    # --- decisions --------------------------------------------------------------------------------

    def decide(self, name: str, kind: ToolKind) -> Decision:
        """`allow`, `ask` or `deny` for this tool now: policy, mode and remembered answers."""
        return effective_decision(name, kind, policy=self.policy, mode=self.mode, remembered=self.remembered)

    def tool_allowed(self, name: str, kind: ToolKind) -> bool:
        """False when the policy denies the tool or the mode hides its kind."""
        return effective_decision(name, kind, policy=self.policy, mode=self.mode) != "deny"

    def needs_permission(self, name: str, kind: ToolKind) -> bool:
        """True unless every rule lets this tool run without asking."""
        return self.decide(name, kind) != "allow"

    def refusal(self, name: str, kind: ToolKind) -> str:
        """Why this tool may not run, naming what refused it (`refusal_reason`: the policy, the mode, the user)."""
        return refusal_reason(name, kind, policy=self.policy, mode=self.mode, remembered=self.remembered)

    async def authorize_tool(
        self, tool_call_id: str, *, tool_name: str, title: str, kind: ToolKind = "other", raw_input: Any = None
    ) -> PermissionDecision:
        """May this tool call run now? Asks the client only when the rules say `ask`.

        The client's answer is kept for `tool_call_id`: asking again about the same call returns it
        (a call the rules let through is not recorded, so an explicit question about it, from a
        tool that requires approval, is still asked).
        """
        known = self.answers.get(tool_call_id)
        if known is not None:
            return known
        if self.cancelled:
            return PermissionDecision(outcome="cancelled")
        decision = self.decide(tool_name, kind)
        if decision == "allow":
            return PermissionDecision(outcome="allow")
        if decision == "deny":
            return PermissionDecision(outcome="reject")
        return await self.request_permission(
            tool_call_id, tool_name=tool_name, title=title, kind=kind, raw_input=raw_input
        )

    async def request_permission(
        self, tool_call_id: str, *, tool_name: str, title: str, kind: ToolKind = "other", raw_input: Any = None
    ) -> PermissionDecision:
        """Ask the client about this call, unless a rule or a remembered answer already settles it.

        A denied tool answers `reject` and a remembered "always" answer is returned, without asking.
        The answer is kept for `tool_call_id`; an "always" answer is remembered for the tool.
        """
        known = self.answers.get(tool_call_id)
        if known is not None:
            return known
        result = await self._ask(tool_call_id, tool_name=tool_name, title=title, kind=kind, raw_input=raw_input)
        self.answers[tool_call_id] = result
        self.remembered = self.remembered.remember(tool_name, result)
        return result

    async def _ask(
        self, tool_call_id: str, *, tool_name: str, title: str, kind: ToolKind, raw_input: Any
    ) -> PermissionDecision:
        if effective_decision(tool_name, kind, policy=self.policy, mode=self.mode) == "deny":
            return PermissionDecision(outcome="reject")
        remembered = self.remembered.lookup(tool_name)
        if remembered is not None:
            return PermissionDecision(outcome=remembered, always=True)
        if self.cancelled:
            return PermissionDecision(outcome="cancelled")
        if self._asker is None:
            return PermissionDecision(outcome="reject")
        if self._before_ask is not None:
            await self._before_ask()
        options = permission_options(tool_name)
        tool_call = ToolCallUpdate(
            tool_call_id=tool_call_id, title=title, kind=kind, status="pending", raw_input=raw_input
        )
        ask = asyncio.ensure_future(self._asker(tool_call, options))
        ask.add_done_callback(_read)  # read below, or (given up, this task stopping) by no one
        cancelled = asyncio.ensure_future(self._cancel.wait())
        try:
            await asyncio.wait({ask, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
            if not ask.done():  # given up (a cancel), or this task is stopping: nobody waits for the answer
                ask.cancel()
        if ask.cancelled():
            return PermissionDecision(outcome="cancelled")
        error = ask.exception()
        response = ask.result() if error is None else None
        if isinstance(error, ConnectionError):
            logger.warning("the client went away while asked about %s (%s): the turn stops", tool_name, tool_call_id)
            self.cancel()
            return PermissionDecision(outcome="cancelled")
        if not isinstance(response, RequestPermissionResponse):
            why = _unreadable(error) if error is not None else f"a {type(response).__name__} result"
            logger.warning(
                "the client's answer about %s (%s) could not be read (%s): the call is refused",
                tool_name,
                tool_call_id,
                why,
            )
            return PermissionDecision(outcome="reject")
        decision = decision_from_response(response, options)
        if decision.outcome == "cancelled":
            self.cancel()
        return decision


def _read(future: asyncio.Future[Any]) -> None:
    """Mark a question's outcome read: an answer that failed after the question was given up (the
    connection closed while the turn stopped) is of no interest, and is no "never retrieved" traceback."""
    if not future.cancelled():
        future.exception()


def _unreadable(error: BaseException) -> str:
    """One line saying why an answer could not be read."""
    code = getattr(error, "code", None)
    lines = str(error).strip().splitlines()
    first = lines[0][:200] if lines else ""
    if isinstance(code, int):
        return f"JSON-RPC error {code}: {first}" if first else f"JSON-RPC error {code}"
    return f"{type(error).__name__}: {first}" if first else type(error).__name__
