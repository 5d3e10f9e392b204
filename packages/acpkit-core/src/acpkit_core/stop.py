"""Model finish reasons as ACP stop reasons: one table for every framework.

Providers spell the reason a model stopped differently (OpenAI `length`, Anthropic
`max_tokens`, Google `MAX_TOKENS`, pydantic-ai's normalised `length`); each adapter reads the
spelling its framework reports and asks [`stop_reason_from_finish`][acpkit_core.stop.stop_reason_from_finish].
"""

from __future__ import annotations

from collections.abc import Mapping

from acp.schema import StopReason

__all__ = ["FINISH_REASONS", "stop_reason_from_finish"]

FINISH_REASONS: Mapping[str, StopReason] = {
    # OpenAI and compatible; pydantic-ai's normalised values
    "stop": "end_turn",
    "tool_calls": "end_turn",
    "tool_call": "end_turn",
    "function_call": "end_turn",
    "error": "end_turn",
    "length": "max_tokens",
    "content_filter": "refusal",
    # Anthropic
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "end_turn",
    "pause_turn": "end_turn",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
    # Google (compared case-insensitively)
    "safety": "refusal",
    "recitation": "refusal",
    "prohibited_content": "refusal",
    "blocklist": "refusal",
    "spii": "refusal",
    "image_safety": "refusal",
}
"""Model finish reasons (OpenAI, Anthropic, Google, pydantic-ai spellings) -> ACP stop reasons."""


def stop_reason_from_finish(reason: str | None) -> StopReason:
    """The ACP stop reason for a model's finish reason; unknown or missing reasons are `end_turn`."""
    if not reason:
        return "end_turn"
    return FINISH_REASONS.get(reason) or FINISH_REASONS.get(reason.lower(), "end_turn")
