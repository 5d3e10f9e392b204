"""`AcpPermissionMiddleware`: ask the user through ACP before gated tool calls run.

After each model response the tool calls are split by the policy into auto-approved, asked and
denied. Asked calls become `session/request_permission` with the tool call's own id. Then:

- approve: the call runs as the model wrote it;
- edit: the `edit` hook returned new arguments, the call runs with them;
- reject (or deny by policy): the call gets an error `ToolMessage` saying so and does not run;
  when no call is left to run, control goes back to the model to re-plan;
- cancelled: every call is answered as cancelled and the run ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from acp.schema import ToolKind
from acpkit_core.permissions import STANDARD_MODES, EditHook, Mode, PermissionPolicy, refusal_reason
from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.runtime import Runtime

from ._context import Binding
from ._history import NOT_RUN_TEXT
from ._middleware import current_acp

__all__ = ["AcpPermissionMiddleware"]

_Verdict = Literal["allow", "ask", "deny"]


def _message(call: ToolCall, text: str) -> ToolMessage:
    return ToolMessage(content=text, name=call["name"], tool_call_id=call["id"] or "", status="error")


class AcpPermissionMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Asks the user (over ACP) before running the tool calls the policy gates."""

    def __init__(
        self,
        policy: PermissionPolicy | None = None,
        *,
        edit: EditHook | None = None,
        modes: tuple[Mode, ...] = STANDARD_MODES,
    ) -> None:
        """Gate tools by `policy` (inside a server turn, the server's policy and mode apply as well).

        Args:
            policy: Glob patterns and per-kind rules (`PermissionPolicy(ask=("delete_*", "*_file"))`).
            edit: Replace the arguments of an approved call.
            modes: Modes whose `ask_kinds` apply when the state's `acp_mode` names one (hand-built servers).
        """
        super().__init__()
        self.policy = policy
        """The middleware's own policy."""
        self.edit = edit
        """The edit hook."""
        self.modes = {m.id: m for m in modes}
        """Modes by id."""

    def _kind(self, binding: Binding, call: ToolCall) -> ToolKind:
        return binding.tools.classifier.classify_tool(call["name"], call["args"])

    def refusal(self, binding: Binding, state: Mapping[str, Any], name: str, kind: ToolKind) -> str:
        """Why a denied call may not run, naming what refused it: this policy, the turn's rules, or the mode."""
        if self.policy is not None and self.policy.decide(name, kind) == "deny":
            return refusal_reason(name, kind, policy=self.policy)
        if not binding.gate.tool_allowed(name, kind):
            return binding.gate.refusal(name, kind)
        return refusal_reason(name, kind, mode=self.modes.get(str(state.get("acp_mode", ""))))

    def verdict(self, binding: Binding, state: Mapping[str, Any], name: str, kind: ToolKind) -> _Verdict:
        """`allow`, `ask` or `deny` for one call: the most cautious of this policy and the turn's gate."""
        verdicts: list[_Verdict] = []
        if self.policy is not None:
            verdicts.append(self.policy.decide(name, kind))
        gate = binding.gate
        if not gate.tool_allowed(name, kind):
            verdicts.append("deny")
        elif gate.needs_permission(name, kind):
            verdicts.append("ask")
        if binding.turn is None:
            mode = self.modes.get(str(state.get("acp_mode", "")))
            if mode is not None:
                verdicts.append("deny" if not mode.allows(kind) else "ask" if mode.asks(kind) else "allow")
        for strongest in ("deny", "ask"):
            if strongest in verdicts:
                return cast(_Verdict, strongest)
        return "allow"

    @hook_config(can_jump_to=["model", "end"])
    async def aafter_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Split the last response's tool calls, ask, and apply the answers."""
        binding = current_acp()
        messages = state["messages"]
        last = messages[-1] if messages else None
        if binding is None or not isinstance(last, AIMessage) or not last.tool_calls:
            return None
        calls: list[ToolCall] = []
        answers: list[ToolMessage] = []
        edited = False
        for n, call in enumerate(last.tool_calls):
            kind = self._kind(binding, call)
            verdict = self.verdict(binding, cast(Mapping[str, Any], state), call["name"], kind)
            if verdict == "deny":
                answers.append(
                    _message(call, self.refusal(binding, cast(Mapping[str, Any], state), call["name"], kind))
                )
                await binding.tools.fail(call["id"] or "", "Not allowed", name=call["name"])
            elif verdict == "ask" and call["id"]:
                await binding.tools.announce(call["id"], call["name"], call["args"])
                decision = await binding.gate.request_permission(
                    call["id"],
                    tool_name=call["name"],
                    title=binding.tools.title_for(call["name"], call["args"]),
                    kind=kind,
                    raw_input=call["args"],
                )
                if decision.outcome == "cancelled":
                    rest = [c for c in last.tool_calls[n:] if c["id"]]
                    for other in rest:
                        await binding.tools.fail(other["id"] or "", "Cancelled", name=other["name"])
                    done = [*answers, *(_message(c, NOT_RUN_TEXT) for c in rest)]
                    return {"messages": done, "jump_to": "end"}
                if not decision.allowed:
                    reason = f"The user rejected the call to `{call['name']}`; do not retry it unless asked."
                    answers.append(_message(call, reason))
                    await binding.tools.fail(call["id"], "Rejected by the user", name=call["name"])
                    calls.append(call)
                    continue
                new_args = self.edit(call["name"], call["args"], decision) if self.edit else None
                if new_args is not None:
                    call = ToolCall(name=call["name"], args=dict(new_args), id=call["id"], type="tool_call")
                    edited = True
            calls.append(call)
        update: list[Any] = []
        if edited:
            update.append(last.model_copy(update={"tool_calls": calls}))
        update.extend(answers)
        if not update:
            return None
        result: dict[str, Any] = {"messages": update}
        if len(answers) == len(last.tool_calls):
            result["jump_to"] = "model"
        return result
