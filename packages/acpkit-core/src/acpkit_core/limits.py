"""Limits on what a client may send and on what one turn may do, and where each one's value comes from.

Each [`Limit`][acpkit_core.limits.Limit] (a size) and the
[`RequestLimit`][acpkit_core.limits.RequestLimit] of a turn are set, first match wins, by the
`acpkit run` flag, the [`AgentOptions`][acpkit_core.config.AgentOptions] field, the environment
variable, or the default. Sizes are bytes; the environment and the flags also take `KiB`, `MiB`
and `GiB` (`64MiB`). A refusal, or a turn stopped by its limit, names the limit and every way to
raise it ([`Limit.refusal`][acpkit_core.limits.Limit.refusal],
[`RequestLimit.stop_message`][acpkit_core.limits.RequestLimit.stop_message]).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Final

from .errors import UserError

__all__ = [
    "MAX_MESSAGE_BYTES",
    "MAX_PROMPT_BYTES",
    "MAX_TURN_REQUESTS",
    "Limit",
    "RequestLimit",
    "format_size",
    "parse_count",
    "parse_size",
]

_UNITS: Final = {
    **dict.fromkeys(("", "b"), 1),
    **dict.fromkeys(("k", "kib"), 1 << 10),
    **dict.fromkeys(("m", "mib"), 1 << 20),
    **dict.fromkeys(("g", "gib"), 1 << 30),
}
_SIZE = re.compile(r"\s*(\d+)\s*([a-zA-Z]*)\s*")


def parse_size(text: str) -> int:
    """Bytes from `"1048576"`, `"1024KiB"`, `"64MiB"` or `"1GiB"` (`K`, `M`, `G` are binary too).

    Raises `ValueError` for anything else, and for zero.
    """
    match = _SIZE.fullmatch(text)
    unit = _UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None or int(match.group(1)) == 0:
        raise ValueError(f"not a size in bytes: {text!r} (write for example 1048576, 512KiB or 64MiB)")
    return int(match.group(1)) * unit


def format_size(size: int) -> str:
    """A size for people: `512 bytes`, `64 MiB`, `100.0 MiB`."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size // scale} {unit}" if size % scale == 0 else f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


@dataclass(frozen=True, slots=True, kw_only=True)
class Limit:
    """One configurable size limit."""

    option: str
    """The [`AgentOptions`][acpkit_core.config.AgentOptions] field (`max_message_bytes`)."""
    env: str
    """The environment variable (`ACPKIT_MAX_MESSAGE_BYTES`)."""
    flag: str
    """The `acpkit run` flag (`--max-message-bytes`)."""
    default: int
    """The value when nothing else sets it."""
    what: str
    """What is measured, for messages (`a JSON-RPC message`)."""

    def value(self, configured: int | None) -> int:
        """The limit in bytes: `configured` (from the options or the flag), else the environment, else the default.

        Raises [`UserError`][acpkit_core.errors.UserError] for a value that is not a positive size.
        """
        if configured is not None:
            if isinstance(configured, bool) or not isinstance(configured, int) or configured <= 0:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise UserError(f"AgentOptions.{self.option} must be a positive number of bytes, got {configured!r}")
            return configured
        raw = os.environ.get(self.env, "").strip()
        if not raw:
            return self.default
        try:
            return parse_size(raw)
        except ValueError as exc:
            raise UserError(f"{self.env}: {exc}") from None

    def over(self, limit: int) -> str:
        """`is over the 32 MiB limit; ... can raise it with ...`: the end of a refusal."""
        return (
            f"is over the {format_size(limit)} limit; the agent's developer can raise it with "
            f"AgentOptions({self.option}=...), the {self.env} environment variable or `acpkit run {self.flag}`"
        )

    def refusal(self, size: int | None, limit: int) -> str:
        """The one-line refusal: what was too large, the limit, and how to raise it."""
        measured = f" of {format_size(size)}" if size is not None else ""
        return f"{self.what}{measured} {self.over(limit)}"


MAX_MESSAGE_BYTES: Final = Limit(
    option="max_message_bytes",
    env="ACPKIT_MAX_MESSAGE_BYTES",
    flag="--max-message-bytes",
    default=32 << 20,
    what="a JSON-RPC message",
)
"""One line of JSON-RPC from the client (default 32 MiB). A longer line is skipped without being
kept in memory and answered -32600."""

MAX_PROMPT_BYTES: Final = Limit(
    option="max_prompt_bytes",
    env="ACPKIT_MAX_PROMPT_BYTES",
    flag="--max-prompt-bytes",
    default=16 << 20,
    what="the prompt",
)
"""The content of one `session/prompt`: text, base64 data and embedded resource text together
(default 16 MiB). A larger prompt is answered -32602 before anything runs or is stored."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestLimit:
    """The most model requests one turn may make (a count, not a size)."""

    option: str
    """The [`AgentOptions`][acpkit_core.config.AgentOptions] field (`max_turn_requests`)."""
    env: str
    """The environment variable (`ACPKIT_MAX_TURN_REQUESTS`)."""
    flag: str
    """The `acpkit run` flag (`--max-turn-requests`)."""
    default: int
    """The value when nothing else sets it."""

    def value(self, configured: int | None) -> int:
        """The limit: `configured` (from the options or the flag), else the environment, else the default.

        Raises [`UserError`][acpkit_core.errors.UserError] for a value that is not a positive whole number.
        """
        if configured is not None:
            if isinstance(configured, bool) or not isinstance(configured, int) or configured <= 0:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise UserError(f"AgentOptions.{self.option} must be a positive whole number, got {configured!r}")
            return configured
        raw = os.environ.get(self.env, "").strip()
        if not raw:
            return self.default
        try:
            return parse_count(raw)
        except ValueError as exc:
            raise UserError(f"{self.env}: {exc}") from None

    def stop_message(self, limit: int) -> str:
        """What the user reads when a turn stops at the limit: which limit, and how to raise it."""
        return (
            f"The turn stopped after {limit:,} model requests, the most one turn may make "
            f"({self.option}). The agent's developer can raise it with AgentOptions({self.option}=...) "
            f"(or the same keyword of `create_acp_agent`), the {self.env} environment variable or "
            f"`acpkit run {self.flag}`; send a new prompt to go on."
        )


def parse_count(text: str) -> int:
    """A positive whole number from `"1000"` or `"1_000"`; raises `ValueError` for anything else."""
    cleaned = text.strip().replace("_", "")
    if not cleaned.isdigit() or int(cleaned) == 0:
        raise ValueError(f"not a positive whole number: {text!r} (write for example 1000)")
    return int(cleaned)


MAX_TURN_REQUESTS: Final = RequestLimit(
    option="max_turn_requests",
    env="ACPKIT_MAX_TURN_REQUESTS",
    flag="--max-turn-requests",
    default=1000,
)
"""The model requests one turn may make, its subagents' included (default 1,000: a coding agent's
long turn makes a few hundred). The turn then ends `max_turn_requests` with a message naming the
limit; pydantic-ai's request limit and LangGraph's model calls are counted alike."""
