"""The per-run capability that ties a pydantic-ai run to an ACP turn.

It is passed as `capabilities=[...]` to each run (the user's agent is never changed). The run's
events reach the [`EventProjector`][pydantic_acp.EventProjector] through a run-level
`event_stream_handler` (or `on_event`, when the agent has a handler of its own). The hooks:

- `prepare_tools`: the session mode hides tools ([`filter_tools`][pydantic_acp._modes.filter_tools]);
  the projector learns the step's function tools, whose calls it shows as soon as they start;
- `before_tool_execute`: tools the policy or the mode asks about are deferred for approval;
- `wrap_tool_execute`: the tool call turns `in_progress` when it really starts; an edit tool's call
  gets a diff of its file (read before, and from disk after, the tool ran);
- `on_tool_execute_error`: an unexpected exception becomes a failed tool result the model can read;
- `handle_deferred_tool_calls`: approvals through `session/request_permission`;
- `after_model_request`: `usage_update` after each model response (context used and size, and the
  session's cost where pydantic-ai knows the model's prices), and a notice when the response came
  from a fallback model (its `failed_attempts`: a `FallbackModel`, the `ModelFallback` capability,
  or `fallback_models=`).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any, Literal

from acpkit_core.runner.notices import notice_model_fallback
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.tool_classification import diff_content
from acpkit_core.runner.types import TurnUsage
from pydantic_ai.capabilities.abstract import ValidatedToolArgs, WrapToolExecuteHandler
from pydantic_ai.exceptions import ApprovalRequired, ToolFailed
from pydantic_ai.messages import AgentStreamEvent, ModelResponse, ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, RunContext, ToolDefinition

from ._approvals import resolve_deferred
from ._capability import RunCapability
from ._events import EventProjector
from ._modes import filter_tools

__all__ = ["AcpBridge", "ListeningAcpBridge"]

logger = logging.getLogger("pydantic_acp")


@dataclass
class AcpBridge(RunCapability):
    """Connects one pydantic-ai run to one ACP turn."""

    turn: Turn
    """The ACP turn."""
    projector: EventProjector
    """Projects the run's events."""
    keep_tools: frozenset[str] = field(default_factory=frozenset[str])
    """Tools every mode keeps (the plan tool)."""
    report_tool_errors: bool = True
    """Turn unexpected tool exceptions into failed tool results instead of ending the turn."""
    self_diffing: frozenset[str] = field(default_factory=frozenset[str])
    """Edit tools that attach their own diff (the client tools); others get one from the file before and after."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def prepare_tools(self, ctx: RunContext[Any], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        kept = filter_tools(self.turn, tool_defs, keep=self.keep_tools)
        self.projector.function_tools = frozenset(t.name for t in kept)
        return kept

    async def before_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: ValidatedToolArgs
    ) -> ValidatedToolArgs:
        if self._needs_approval(ctx, call):
            raise ApprovalRequired()
        return args

    def _needs_approval(self, ctx: RunContext[Any], call: ToolCallPart) -> bool:
        """True when the turn's gate must answer before this call runs (it is then deferred)."""
        if ctx.tool_call_approved or call.tool_name in self.keep_tools:
            return False
        return self.turn.needs_permission(call.tool_name, self.turn.classify_tool(call.tool_name, call.args_as_dict()))

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        if self._needs_approval(ctx, call):  # deferred for approval: it is not running
            return await handler(args)
        state = await self.projector.started(call)
        if state is None or state.kind != "edit" or call.tool_name in self.self_diffing:
            return await handler(args)
        locations = self.turn.tool_locations(state.args or {})
        path = locations[0][0] if locations else None
        before = await _text_before(self.turn, path)
        result = await handler(args)
        if path is not None and before is not False and not state.content:
            after = _text_on_disk(path)
            if after is not None and after != before:
                await self.projector.attach(call.tool_call_id, diff_content(path, before, after))
        return result

    async def on_tool_execute_error(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        error: Exception,
    ) -> Any:
        if not self.report_tool_errors:
            raise error
        logger.warning(
            "session %s: tool %r raised %s", self.turn.session.id, call.tool_name, type(error).__name__, exc_info=error
        )
        raise ToolFailed(f"{type(error).__name__}: {error}") from error

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        return await resolve_deferred(self.turn, self.projector, requests)

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        self.projector.end_message()
        if response.failed_attempts:
            failed = [(a.model_name, a.error) for a in response.failed_attempts]
            await notice_model_fallback(self.turn.emit, failed, now=response.model_name, answered=True)
        usage = response.usage
        await self.turn.emit.usage(
            TurnUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                thought_tokens=usage.output_reasoning_tokens or None,
                cached_read_tokens=usage.cache_read_tokens or None,
                cached_write_tokens=usage.cache_write_tokens or None,
                context_size=_context_window(ctx),
                cost=_cost(response),
                model=response.model_name,
                provider=response.provider_name,
            )
        )
        return response


@dataclass
class ListeningAcpBridge(AcpBridge):
    """An `AcpBridge` that also receives the run's events through `on_event`.

    Used when the agent has its own `event_stream_handler` (a run-level handler would replace it);
    otherwise the runner passes a cheaper run-level handler that feeds the projector directly.
    """

    def listens_to(self, event: AgentStreamEvent) -> bool:
        return True

    async def on_event(self, ctx: RunContext[Any], *, event: AgentStreamEvent) -> None:
        await self.projector.handle(event)


_DIFF_LIMIT = 1_000_000


async def _text_before(turn: Turn, path: str | None) -> str | Literal[False] | None:
    """The file's text before an edit tool runs (`None`: no such file; `False`: no diff for this one)."""
    if path is None:
        return False
    try:
        if os.path.getsize(path) > _DIFF_LIMIT:
            return False
    except OSError:
        pass
    try:
        return await turn.host.read_for_diff(path)
    except Exception:  # outside the allowed directories, unreadable, not text: no diff, the tool still runs
        return False


def _text_on_disk(path: str) -> str | None:
    try:
        if os.path.getsize(path) > _DIFF_LIMIT:
            return None
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError):
        return None


def _cost(response: ModelResponse) -> float | None:
    """The response's price in US dollars from pydantic-ai's price data, when the model's prices are known."""
    if not response.model_name:
        return None
    try:
        return float(response.cost().total_price)
    except Exception:  # unknown model, usage not measured, or no price for it: no cost on the meter
        return None


def _context_window(ctx: RunContext[Any]) -> int | None:
    try:
        return ctx.model.context_window
    except Exception:
        return None
