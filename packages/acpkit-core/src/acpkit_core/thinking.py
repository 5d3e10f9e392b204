"""The standard `thinking` config option: how hard the model should think, chosen per session.

Offer it with `config_options=[thinking_option()]`; the server then also serves `/thinking [level]`,
keeps the value per session (persisted with the session's config values) and shows it in the
client's option list (category `thought_level`). The adapters hand the level to the model call:
pydantic-acp as pydantic-ai's `thinking` model setting, langchain-acp through
`AcpThinkingMiddleware` (a model setting such as `reasoning_effort`).

`show_thinking_option()` is an on/off switch (a boolean config option, ACP 1.18): off, the
session's reasoning is not sent to the editor (nor kept in its transcript); the model still
thinks. Boolean options reach only clients that advertised them; for the others it stays at its
default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from .config import BooleanOption, SelectOption, SelectValue
from .errors import UserError

__all__ = [
    "SHOW_THINKING_OPTION",
    "THINKING_LEVELS",
    "THINKING_OPTION",
    "ThinkingLevel",
    "show_thinking",
    "show_thinking_option",
    "thinking_level",
    "thinking_option",
]

SHOW_THINKING_OPTION = "show_thinking"
"""Id of the boolean config option that shows or hides the model's reasoning."""

THINKING_OPTION = "thinking"
"""Id of the thinking config option (and name of its `/thinking` command)."""

ThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
"""A thinking effort: `off`, or an effort from `minimal` to `max`."""

THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
"""Every level, least effort first."""

_DEFAULT = "default"

_DESCRIPTIONS: dict[str, str] = {
    _DEFAULT: "The model's own default",
    "off": "No thinking (or as little as the model allows)",
}


def thinking_option(
    levels: Sequence[ThinkingLevel] = ("off", "low", "medium", "high"), *, default: ThinkingLevel | None = None
) -> SelectOption:
    """The `thinking` select option offering `default` (the model's own behaviour) and `levels`.

    `default` is the initial level of a new session; `None` leaves the model's default.
    """
    unknown = [level for level in levels if level not in THINKING_LEVELS]
    if unknown or not levels:
        raise UserError(f"thinking_option: levels must be a non-empty subset of {list(THINKING_LEVELS)}, not {unknown}")
    if default is not None and default not in levels:
        raise UserError(f"thinking_option: default {default!r} is not one of the levels {list(levels)}")
    values = [SelectValue(value=_DEFAULT, name="Default", description=_DESCRIPTIONS[_DEFAULT])]
    values += [SelectValue(value=v, name=v.capitalize(), description=_DESCRIPTIONS.get(v)) for v in levels]
    return SelectOption(
        id=THINKING_OPTION,
        name="Thinking",
        description="How much the model thinks before answering",
        values=values,
        default=default or _DEFAULT,
        category="thought_level",
    )


def show_thinking_option(*, default: bool = True) -> BooleanOption:
    """The `show_thinking` boolean option: the editor shows the model's reasoning while it is on."""
    return BooleanOption(
        id=SHOW_THINKING_OPTION,
        name="Show thinking",
        description="Stream the model's reasoning into the conversation",
        default=default,
    )


def show_thinking(config: Mapping[str, Any]) -> bool:
    """False when the session's `show_thinking` option is off (True when it is on or not offered)."""
    return config.get(SHOW_THINKING_OPTION) is not False


def thinking_level(config: Mapping[str, Any]) -> ThinkingLevel | None:
    """The session's thinking level from its config values; `None` when it is the model's default or not offered."""
    value = config.get(THINKING_OPTION)
    for level in THINKING_LEVELS:
        if value == level:
            return level
    return None
