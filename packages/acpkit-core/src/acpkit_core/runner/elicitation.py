"""Asking the user from inside a turn: one choice among several, a line of text, or to open a link.

```python
answer = await turn.ask("Which environment?", choices=["staging", "production"], tool_call_id=call_id)
if answer.answered:
    deploy(answer.value)

link = await turn.ask("Authorize access to your repositories", url=authorize_url, tool_call_id=call_id)
if link.answered:  # the user agreed to open it; the sign-in itself happens in the browser
    await wait_for_our_callback()
    await turn.complete_url(link.elicitation_id)  # `elicitation/complete`: the client may close its dialog
```

How the question reaches the user depends on the client:

1. **Elicitation** (ACP 1.21). A choice or text question goes as `elicitation/create` in form
   mode when the client advertised `elicitation.form`: tied to the session and to the tool call,
   its schema has one required string property `answer` (with `oneOf` for choices, `default` when
   given); `accept` gives the value, `decline` and `cancel` give `declined`. A link goes in URL
   mode when the client advertised `elicitation.url`, with an `elicitationId` unique among the
   connection's open ones; `accept` means the user agreed to open it (`answered`, with
   `Answer.elicitation_id`), and the agent may later send `elicitation/complete` for it
   ([`Turn.complete_url`][acpkit_core.runner.protocols.Turn.complete_url]). A link is never asked in form
   mode (ACP forbids it: a URL question is for what must not pass through the editor).
2. **Fallback**, when the client cannot be asked in that mode. The developer's
   [`AskFallback`][acpkit_core.runner.protocols.AskFallback] (`AgentOptions.ask_fallback`) gets the
   [`Question`][acpkit_core.runner.elicitation.Question] and the turn, and answers it its own way, or
   returns `None` for the built-in one: a `session/request_permission` on a card of its own titled
   with the question (`_meta["acpkit.question"]` names the tool call that asked), whose options are
   the choices (kind `allow_once`, the option id is the value) plus `Skip` (`reject_once`); for a
   link, the card shows the URL and offers `Continue` and `Skip`. The card is closed with the answer
   once it is given. A text question can only be asked this way when it has a `default`, offered
   as the one choice; without one the answer is `unavailable` and nothing is sent.

A `session/cancel` while the question is open gives the answer `cancelled` at once (the turn then
ends `cancelled`). A value the client sends that is not one of the choices is treated as `declined`:
never act on an answer that was not offered.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias
from urllib.parse import urlsplit

from acp import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    ContentToolCallContent,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    ElicitationUrlSessionMode,
    EnumOption,
    PermissionOption,
    TextContentBlock,
    ToolCallProgress,
    ToolCallUpdate,
)
from pydantic import AnyUrl

from ..errors import UserError

if TYPE_CHECKING:
    from acp import Client


__all__ = [
    "ANSWER_PROPERTY",
    "CONTINUE_OPTION_ID",
    "QUESTION_META_KEY",
    "SKIP_OPTION_ID",
    "Answer",
    "AnswerOutcome",
    "Choice",
    "Elicitor",
    "Question",
    "UrlElicitations",
]

log = logging.getLogger("acpkit.elicitation")

ANSWER_PROPERTY = "answer"
"""The one property of the form schema an elicitation sends."""
SKIP_OPTION_ID = "acpkit.skip"
"""Option id of the `Skip` option of a fallback question."""
CONTINUE_OPTION_ID = "acpkit.continue"
"""Option id of the `Continue` option of a fallback link question (the user will open the link)."""
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
    """The user's answer to [`Turn.ask`][acpkit_core.runner.protocols.Turn.ask]."""

    outcome: AnswerOutcome
    """`answered`, `declined`, `cancelled` (the turn was cancelled) or `unavailable` (the client cannot be asked)."""
    value: str | None = None
    """The chosen value or the text typed, when `answered`."""
    via: Literal["elicitation", "permission", "fallback"] | None = None
    """How the question was asked: elicitation, the built-in permission-style question, the
    developer's fallback (`None` when it was not asked)."""
    elicitation_id: str | None = None
    """For a link question: the `elicitationId` to pass to `Turn.complete_url` once the
    out-of-band interaction is over (set when `answered`)."""

    @property
    def answered(self) -> bool:
        """True when `value` holds the user's answer."""
        return self.outcome == "answered"


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """A question as an [`AskFallback`][acpkit_core.runner.protocols.AskFallback] receives it."""

    message: str
    """The question (or, for a link, what it is for)."""
    choices: tuple[Choice, ...] | None = None
    """The answers to pick from; `None` for a text question or a link."""
    default: str | None = None
    """The pre-selected choice or pre-filled text."""
    url: str | None = None
    """For a link question: the URL the user should open."""
    elicitation_id: str | None = None
    """For a link question: its id (return it in `Answer.elicitation_id` when the user agrees)."""
    tool_call_id: str | None = None
    """The tool call asking, if any."""


class UrlElicitations:
    """The connection's URL elicitations the user accepted that are not completed yet.

    ACP asks the agent to keep each `elicitationId` unique among those outstanding on the connection
    and to send `elicitation/complete` only for those, once.
    """

    def __init__(self) -> None:
        self.outstanding: set[str] = set()
        """The ids asked or accepted, not completed."""

    def new(self, elicitation_id: str | None) -> str:
        """Reserve `elicitation_id` (or a fresh one); `UserError` when it is already outstanding."""
        if elicitation_id is None:
            elicitation_id = f"acpkit-{uuid.uuid4().hex}"
        elif not elicitation_id or elicitation_id in self.outstanding:
            raise UserError(f"ask(elicitation_id={elicitation_id!r}): empty, or already open on this connection")
        self.outstanding.add(elicitation_id)
        return elicitation_id

    def take(self, elicitation_id: str) -> bool:
        """Remove `elicitation_id`; `False` when it was not outstanding."""
        if elicitation_id in self.outstanding:
            self.outstanding.discard(elicitation_id)
            return True
        return False


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise UserError(f"ask(url={url!r}): give an absolute http(s) URL")
    if parts.username or parts.password:
        raise UserError(f"ask(url={url!r}): never put credentials in the URL (ACP forbids it)")


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
        url: bool = False,
        fallback: Callable[[Question], Awaitable[Answer | None]] | None = None,
        links: UrlElicitations | None = None,
    ) -> None:
        """Ask over `conn` in `session_id`.

        Args:
            conn: The connection to the client (`None`: every question is `unavailable`).
            session_id: The session the questions belong to.
            form: The client advertised `elicitation.form`.
            cancelled: The turn's cancellation event.
            before_ask: Awaited before each question (the server flushes buffered text).
            send: Sends an unrecorded `tool_call_update` (closes a fallback question's card).
            url: The client advertised `elicitation.url`.
            fallback: The developer's fallback (`AgentOptions.ask_fallback`, bound to the turn).
            links: The connection's outstanding URL elicitations (a new set by default).
        """
        self._conn = conn
        self._session_id = session_id
        self._form = form
        self._url = url
        self._cancel = cancelled
        self._before_ask = before_ask
        self._send = send
        self._fallback = fallback
        self.links = links if links is not None else UrlElicitations()
        """The connection's outstanding URL elicitations."""

    async def ask(
        self,
        question: str,
        *,
        choices: Sequence[str | Choice] | None = None,
        default: str | None = None,
        tool_call_id: str | None = None,
        url: str | None = None,
        elicitation_id: str | None = None,
    ) -> Answer:
        """Ask `question`: pick one of `choices`, type a line of text when `choices` is `None`, or
        open `url`.

        `default` pre-selects a choice (it must be one of them) or pre-fills the text.
        `tool_call_id` ties the question to the tool call that asks it. A `url` question takes
        neither choices nor default; `elicitation_id` names it (unique among the connection's
        open ones; a fresh id by default).
        """
        options = _choices(choices)
        if not question.strip():
            raise UserError("ask(question=...): the question is empty")
        if options is not None and default is not None and default not in {c.value for c in options}:
            raise UserError(f"ask(default={default!r}): not one of the choices {[c.value for c in options]}")
        if url is not None:
            if options is not None or default is not None:
                raise UserError("ask(url=...): a link question takes no choices and no default")
            _check_url(url)
        elif elicitation_id is not None:
            raise UserError("ask(elicitation_id=...): only a link question (url=...) has an elicitation id")
        if self._cancel.is_set():
            return Answer(outcome="cancelled")
        if self._conn is None:
            return Answer(outcome="unavailable")
        if url is not None:
            return await self._ask_url(question, url, elicitation_id, tool_call_id)
        if self._form:
            return await self._elicit(question, options, default, tool_call_id)
        asked = Question(message=question, choices=options, default=default, tool_call_id=tool_call_id)
        answer = await self._developer_fallback(asked)
        if answer is not None:
            return answer
        if options is None:
            if default is None:
                return Answer(outcome="unavailable")
            options = (Choice(value=default),)
        return await self._permission(question, options, tool_call_id)

    async def complete_url(self, elicitation_id: str) -> bool:
        """Send `elicitation/complete` for an accepted link question; `False` (nothing sent) when the
        id is not open on this connection (never asked, declined, or completed already)."""
        if self._conn is None or not self.links.take(elicitation_id):
            return False
        await self._conn.complete_elicitation(elicitation_id=elicitation_id)
        return True

    async def _ask_url(self, question: str, url: str, elicitation_id: str | None, tool_call_id: str | None) -> Answer:
        eid = self.links.new(elicitation_id)
        try:
            if self._url:
                answer = await self._elicit_url(question, url, eid, tool_call_id)
            else:
                asked = Question(message=question, url=url, elicitation_id=eid, tool_call_id=tool_call_id)
                answer = await self._developer_fallback(asked)
                if answer is None:
                    answer = await self._permission_url(question, url, eid, tool_call_id)
        except BaseException:
            self.links.take(eid)
            raise
        if not answer.answered:
            self.links.take(eid)  # only an accepted link can be completed
        return answer

    async def _developer_fallback(self, question: Question) -> Answer | None:
        """The developer's answer to a question the client cannot be asked by elicitation, `None` for ours."""
        if self._fallback is None:
            return None
        answer = await self._race(self._fallback(question))
        if answer is None and self._cancel.is_set():
            return Answer(outcome="cancelled", via="fallback")
        return answer

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
        except ConnectionError:  # the client went away: nobody will answer
            self._cancel.set()
            return Answer(outcome="cancelled", via="elicitation")
        except Exception as exc:  # a result that is not an elicitation answer
            log.warning(
                "session %s: the answer to a question could not be read (%s): taken as declined",
                self._session_id,
                type(exc).__name__,
            )
            return Answer(outcome="declined", via="elicitation")
        if response is None:
            return Answer(outcome="cancelled", via="elicitation")
        if not isinstance(response, AcceptElicitationResponse):
            return Answer(outcome="declined", via="elicitation")
        value: Any = (response.content or {}).get(ANSWER_PROPERTY)
        if not isinstance(value, str) or (options is not None and value not in {c.value for c in options}):
            return Answer(outcome="declined", via="elicitation")
        return Answer(outcome="answered", value=value, via="elicitation")

    async def _elicit_url(self, question: str, url: str, elicitation_id: str, tool_call_id: str | None) -> Answer:
        assert self._conn is not None
        mode = ElicitationUrlSessionMode(
            session_id=self._session_id, tool_call_id=tool_call_id, elicitation_id=elicitation_id, url=AnyUrl(url)
        )
        try:
            response = await self._race(self._conn.create_elicitation(message=question, mode=mode))
        except RequestError as exc:
            log.warning("session %s: elicitation/create (url) failed: %s", self._session_id, exc)
            return Answer(outcome="unavailable", via="elicitation")
        if response is None:
            return Answer(outcome="cancelled", via="elicitation")
        if not isinstance(response, AcceptElicitationResponse):
            return Answer(outcome="declined", via="elicitation")
        return Answer(outcome="answered", via="elicitation", elicitation_id=elicitation_id)

    async def _permission_url(self, question: str, url: str, elicitation_id: str, tool_call_id: str | None) -> Answer:
        options = (Choice(value=CONTINUE_OPTION_ID, title="Continue"),)
        answer = await self._permission(question, options, tool_call_id, shown=f"Open {url} to continue.")
        if answer.answered:
            return Answer(outcome="answered", via="permission", elicitation_id=elicitation_id)
        return answer

    async def _permission(
        self, question: str, options: tuple[Choice, ...], tool_call_id: str | None, *, shown: str | None = None
    ) -> Answer:
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
            content=[ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=shown))]
            if shown
            else None,
            field_meta={QUESTION_META_KEY: {"toolCallId": tool_call_id}} if tool_call_id else None,
        )
        unreadable = False
        try:
            response = await self._race(
                self._conn.request_permission(session_id=self._session_id, tool_call=update, options=wire_options)
            )
        except RequestError as exc:
            log.warning("session %s: the question could not be asked: %s", self._session_id, exc)
            return Answer(outcome="unavailable", via="permission")
        except ConnectionError:
            response = None  # the client went away: nobody will answer
        except Exception as exc:  # a result that is not a permission outcome
            log.warning(
                "session %s: the answer to a question could not be read (%s): taken as declined",
                self._session_id,
                type(exc).__name__,
            )
            response, unreadable = None, True
        outcome = response.outcome if response is not None else None
        if unreadable:
            answer = Answer(outcome="declined", via="permission")
        elif outcome is None or outcome.outcome == "cancelled":
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
        asked.add_done_callback(_read)  # read below, or (given up, this task stopping) by no one
        cancelled = asyncio.ensure_future(self._cancel.wait())
        try:
            await asyncio.wait({asked, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
            if not asked.done():
                asked.cancel()
        if asked.cancelled() or self._cancel.is_set():
            return None
        return asked.result()


def _read(future: asyncio.Future[Any]) -> None:
    """Mark a question's outcome read (an answer that failed after the question was given up is of no interest)."""
    if not future.cancelled():
        future.exception()
