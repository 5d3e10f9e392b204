"""Asking the user a typed question from inside a turn: one choice among several, or a line of text.

```python
answer = await turn.ask("Which environment?", choices=["staging", "production"], tool_call_id=call_id)
if answer.answered:
    deploy(answer.value)
```

How the question reaches the user depends on the client:

1. **Elicitation** (the client advertised `elicitation.form` in `initialize`): an
   `elicitation/create` request in form mode, tied to the session and to the tool call, whose
   schema has one required string property `answer` (with `oneOf` for choices, `default` when
   given). The client's `accept` gives the value, `decline` and `cancel` give `declined`.
2. **Fallback**, for clients without elicitation: a `session/request_permission` whose options are
   the choices (kind `allow_once`, the option id is the value) plus `Skip` (`reject_once`), on a
   card of its own titled with the question (`_meta["acpkit.question"]` names the tool call that
   asked). The card is closed with the answer once it is given. A text question can only be asked
   this way when it has a `default`, offered as the one choice; without one the answer is
   `unavailable` and nothing is sent.

A `session/cancel` while the question is open gives the answer `cancelled` at once (the turn then
ends `cancelled`). A value the client sends that is not one of the choices is treated as `declined`:
never act on an answer that was not offered.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from acp import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    ContentToolCallContent,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    EnumOption,
    PermissionOption,
    TextContentBlock,
    ToolCallProgress,
    ToolCallUpdate,
)

from .errors import UserError

if TYPE_CHECKING:
    from acp import Client

__all__ = [
    "ANSWER_PROPERTY",
    "QUESTION_META_KEY",
    "SKIP_OPTION_ID",
    "Answer",
    "AnswerOutcome",
    "Choice",
    "Elicitor",
]

log = logging.getLogger("acpkit.elicitation")

ANSWER_PROPERTY = "answer"
"""The one property of the form schema an elicitation sends."""
SKIP_OPTION_ID = "acpkit.skip"
"""Option id of the `Skip` option of a fallback question."""
QUESTION_META_KEY = "acpkit.question"
"""`_meta` key of a fallback question's card: `{"toolCallId": ...}` of the tool call that asked."""

AnswerOutcome: TypeAlias = Literal["answered", "declined", "cancelled", "unavailable"]
"""How a question ended: answered, declined (or dismissed), the turn was cancelled, or it could not be asked."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """One answer the user may pick."""

    value: str
    """What the tool gets back."""
    title: str | None = None
    """What the user sees (defaults to the value)."""
    description: str | None = None
    """One more line, for clients that show it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """The user's answer to [`Turn.ask`][acpkit_core.runner.Turn.ask]."""

    outcome: AnswerOutcome
    """`answered`, `declined`, `cancelled` (the turn was cancelled) or `unavailable` (the client cannot be asked)."""
    value: str | None = None
    """The chosen value or the text typed, when `answered`."""
    via: Literal["elicitation", "permission"] | None = None
    """How the question was asked (`None` when it was not)."""

    @property
    def answered(self) -> bool:
        """True when `value` holds the user's answer."""
        return self.outcome == "answered"


def _choices(choices: Sequence[str | Choice] | None) -> tuple[Choice, ...] | None:
    if choices is None:
        return None
    out = tuple(Choice(value=c) if isinstance(c, str) else c for c in choices)
    values = [c.value for c in out]
    if not out:
        raise UserError("ask(choices=...): give at least one choice, or None for a text question")
    if len(set(values)) != len(values) or not all(values):
        raise UserError(f"ask(choices=...): values must be unique and non-empty, got {values}")
    if SKIP_OPTION_ID in values:
        raise UserError(f"ask(choices=...): {SKIP_OPTION_ID!r} is reserved for the Skip option")
    return out


Sender: TypeAlias = Callable[[ToolCallProgress], Awaitable[None]]


class Elicitor:
    """Asks the questions of one turn (the server's turn has one; `turn.ask` uses it)."""

    _ids = itertools.count(1)

    def __init__(
        self,
        *,
        conn: Client | None,
        session_id: str,
        form: bool,
        cancelled: asyncio.Event,
        before_ask: Callable[[], Awaitable[None]] | None = None,
        send: Sender | None = None,
    ) -> None:
        """Ask over `conn` in `session_id`.

        Args:
            conn: The connection to the client (`None`: every question is `unavailable`).
            session_id: The session the questions belong to.
            form: The client advertised `elicitation.form`.
            cancelled: The turn's cancellation event.
            before_ask: Awaited before each question (the server flushes buffered text).
            send: Sends an unrecorded `tool_call_update` (closes a fallback question's card).
        """
        self._conn = conn
        self._session_id = session_id
        self._form = form
        self._cancel = cancelled
        self._before_ask = before_ask
        self._send = send

    async def ask(
        self,
        question: str,
        *,
        choices: Sequence[str | Choice] | None = None,
        default: str | None = None,
        tool_call_id: str | None = None,
    ) -> Answer:
        """Ask `question`: pick one of `choices`, or type a line of text when `choices` is `None`.

        `default` pre-selects a choice (it must be one of them) or pre-fills the text.
        `tool_call_id` ties the question to the tool call that asks it.
        """
        options = _choices(choices)
        if not question.strip():
            raise UserError("ask(question=...): the question is empty")
        if options is not None and default is not None and default not in {c.value for c in options}:
            raise UserError(f"ask(default={default!r}): not one of the choices {[c.value for c in options]}")
        if self._cancel.is_set():
            return Answer(outcome="cancelled")
        if self._conn is None:
            return Answer(outcome="unavailable")
        if self._form:
            return await self._elicit(question, options, default, tool_call_id)
        if options is None:
            if default is None:
                return Answer(outcome="unavailable")
            options = (Choice(value=default),)
        return await self._permission(question, options, tool_call_id)

    # --- the two ways -----------------------------------------------------------------------------

    async def _elicit(
        self, question: str, options: tuple[Choice, ...] | None, default: str | None, tool_call_id: str | None
    ) -> Answer:
        assert self._conn is not None
        prop = ElicitationStringPropertySchema(
            type="string",
            title=question,
            default=default,
            one_of=[EnumOption(const=c.value, title=c.title or c.value, description=c.description) for c in options]
            if options is not None
            else None,
        )
        mode = ElicitationFormSessionMode(
            session_id=self._session_id,
            tool_call_id=tool_call_id,
            requested_schema=ElicitationSchema(properties={ANSWER_PROPERTY: prop}, required=[ANSWER_PROPERTY]),
        )
        try:
            response = await self._race(self._conn.create_elicitation(message=question, mode=mode))
        except RequestError as exc:  # advertised, but the client could not serve it
            log.warning("session %s: elicitation/create failed: %s", self._session_id, exc)
            return Answer(outcome="unavailable", via="elicitation")
        if response is None:
            return Answer(outcome="cancelled", via="elicitation")
        if not isinstance(response, AcceptElicitationResponse):
            return Answer(outcome="declined", via="elicitation")
        value: Any = (response.content or {}).get(ANSWER_PROPERTY)
        if not isinstance(value, str) or (options is not None and value not in {c.value for c in options}):
            return Answer(outcome="declined", via="elicitation")
        return Answer(outcome="answered", value=value, via="elicitation")

    async def _permission(self, question: str, options: tuple[Choice, ...], tool_call_id: str | None) -> Answer:
        assert self._conn is not None
        card = f"ask-{next(self._ids)}"
        wire_options = [
            PermissionOption(option_id=c.value, name=c.title or c.value, kind="allow_once") for c in options
        ]
        wire_options.append(PermissionOption(option_id=SKIP_OPTION_ID, name="Skip", kind="reject_once"))
        update = ToolCallUpdate(
            tool_call_id=card,
            title=question,
            kind="other",
            status="pending",
            field_meta={QUESTION_META_KEY: {"toolCallId": tool_call_id}} if tool_call_id else None,
        )
        try:
            response = await self._race(
                self._conn.request_permission(session_id=self._session_id, tool_call=update, options=wire_options)
            )
        except RequestError as exc:
            log.warning("session %s: the question could not be asked: %s", self._session_id, exc)
            return Answer(outcome="unavailable", via="permission")
        outcome = response.outcome if response is not None else None
        if outcome is None or outcome.outcome == "cancelled":
            self._cancel.set()  # a permission answered `cancelled` means the prompt turn was cancelled
            answer = Answer(outcome="cancelled", via="permission")
        elif outcome.option_id in {c.value for c in options}:
            answer = Answer(outcome="answered", value=outcome.option_id, via="permission")
        else:
            answer = Answer(outcome="declined", via="permission")
        if self._send is not None:
            chosen = next((c.title or c.value for c in options if c.value == answer.value), None)
            await self._send(
                ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=card,
                    status="completed" if answer.answered else "failed",
                    content=[
                        ContentToolCallContent(
                            type="content", content=TextContentBlock(type="text", text=chosen or answer.outcome)
                        )
                    ],
                )
            )
        return answer

    async def confirm(self, card: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        """Ask a permission question of the server's own (a rewind's files, say) on `card`.

        The chosen option's id, or `None` when the question was cancelled (which cancels the turn,
        as any permission answered `cancelled`) or cannot be asked. The card is closed with the answer.
        """
        if self._conn is None or self._cancel.is_set():
            return None
        try:
            response = await self._race(
                self._conn.request_permission(session_id=self._session_id, tool_call=card, options=options)
            )
        except RequestError as exc:
            log.warning("session %s: the question could not be asked: %s", self._session_id, exc)
            return None
        outcome = response.outcome if response is not None else None
        chosen = outcome.option_id if outcome is not None and outcome.outcome == "selected" else None
        if chosen is None:
            self._cancel.set()
        if self._send is not None:
            name = next((o.name for o in options if o.option_id == chosen), "cancelled")
            await self._send(
                ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=card.tool_call_id,
                    status="completed" if chosen is not None else "failed",
                    content=[ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=name))],
                )
            )
        return chosen

    async def _race(self, request: Awaitable[Any]) -> Any:
        """The client's answer, or `None` when the turn is cancelled first (the request is dropped)."""
        if self._before_ask is not None:
            await self._before_ask()
        asked = asyncio.ensure_future(request)
        cancelled = asyncio.ensure_future(self._cancel.wait())
        try:
            await asyncio.wait({asked, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
        if not asked.done() or self._cancel.is_set():
            asked.cancel()
            return None
        return asked.result()
