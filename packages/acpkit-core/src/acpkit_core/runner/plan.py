"""The session's plan: one mechanism for every way a plan is made, and one place that sends it.

A plan reaches the user from three sources, all through [`TurnPlan`][acpkit_core.runner.plan.TurnPlan]
(`turn.plan`):

- **the model's tools**: pydantic-acp's `update_plan` / `update_plan_step`, a LangChain graph's
  `write_todos` (its `todos` state);
- **the model's structured output**: an answer of type [`PlanOutput`][acpkit_core.runner.plan.PlanOutput]
  (steps and a summary), shown step by step while the model writes it
  ([`partial_plan`][acpkit_core.runner.plan.partial_plan]);
- **the host**: a [`PlanProvider`][acpkit_core.runner.plan.PlanProvider] (`AgentOptions.plan_provider`)
  for agents whose plan lives outside the model (a tracker, a file). Its `get_plan` is called when
  a session opens and around every turn; when it also has `set_plan`, the model's changes are
  written to it.

The plan is kept with the session (it survives a restart), changed whole (`set`) or one entry at a
time (`update`, `add`, `remove`), and every change goes out through one method,
`TurnPlan._publish`. ACP's stable `plan` update carries the complete list; a client that negotiated
the unstable plan operations (`planOperations`, or `clientCapabilities.plan` of the plan RFD) is
sent `plan_update` (the plan's id and entries) and `plan_removed` (when the plan is cleared) instead.

Besides the session's plan (id [`MAIN_PLAN_ID`][acpkit_core.runner.plan.MAIN_PLAN_ID]), a runner can show
other plans by id ([`TurnPlan.show`][acpkit_core.runner.plan.TurnPlan.show]: entries, Markdown, or a
file's URI) and take them away ([`TurnPlan.drop`][acpkit_core.runner.plan.TurnPlan.drop]). A client with
plan operations sees each as its own plan; a plain client sees one stable `plan` holding every
plan's entries in order (a Markdown or file plan as one entry). The transcript always keeps that
stable form, so `session/load` replays a plan every client can read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, cast, runtime_checkable

from pydantic import BaseModel, Field

from .types import PlanItem, Session

__all__ = [
    "MAIN_PLAN_ID",
    "PLANS_STATE_KEY",
    "PLAN_STATE_KEY",
    "PlanChange",
    "PlanContent",
    "PlanOperations",
    "PlanOutput",
    "PlanProvider",
    "PlanStep",
    "PlanWriter",
    "TurnPlan",
    "partial_plan",
    "plan_from_json",
    "plan_items",
    "plan_to_json",
    "plans_from_json",
]

PLAN_STATE_KEY = "plan"
"""The key of the server's per-session JSON under which the plan is stored."""

PLANS_STATE_KEY = "plans"
"""The key of the server's per-session JSON under which the other plans (`TurnPlan.show`) are stored."""

MAIN_PLAN_ID = "main"
"""The `planId` of the session's plan in `plan_update` / `plan_removed`."""

PlanChange: TypeAlias = Literal["set", "update", "add", "remove", "clear", "refresh"]
"""What changed the plan (`TurnPlan._publish` gets it, for the plan operations of a later protocol)."""


class PlanStep(BaseModel):
    """One step of a plan, as a model writes it (a tool argument or structured output)."""

    content: str = Field(description="What the step does.")
    """What the step does."""
    status: Literal["pending", "in_progress", "completed"] = "pending"
    """Progress of the step."""
    priority: Literal["high", "medium", "low"] = "medium"
    """How important the step is."""

    def item(self) -> PlanItem:
        """The step as the emitter's [`PlanItem`][acpkit_core.runner.types.PlanItem]."""
        return PlanItem(content=self.content, status=self.status, priority=self.priority)


class PlanOutput(BaseModel):
    """A plan as a model's structured output: give it as the output type (pydantic-ai's `output_type=`,
    LangChain's `response_format=`) and the adapter shows `steps` as the session's plan and `summary`
    as the answer."""

    steps: list[PlanStep] = Field(description="The steps of the plan, in order.")
    """The steps, in order."""
    summary: str = Field(default="", description="A short explanation of the plan for the user.")
    """What the user reads as the answer."""


@runtime_checkable
class PlanProvider(Protocol):
    """A plan owned by the host, not the model (`AgentOptions.plan_provider`).

    `get_plan` is called when a session is created, loaded, resumed or forked, at the start and
    end of every turn, and on `turn.plan.refresh()`; what it returns is shown when it differs from
    what the client has. `None` means "no plan" (nothing is sent).
    """

    async def get_plan(self, session: Session) -> Sequence[PlanItem] | None:
        """The session's plan now."""
        ...


@runtime_checkable
class PlanWriter(Protocol):
    """Optional on a [`PlanProvider`][acpkit_core.runner.plan.PlanProvider]: take the model's changes to the plan.

    A provider without it owns the plan alone: `turn.plan.writable` is false, the adapters offer
    the model no plan tool, and a graph's `todos` are not shown as the plan.
    """

    async def set_plan(self, session: Session, items: Sequence[PlanItem]) -> None:
        """Store the plan the model wrote (the complete list)."""
        ...


def plan_to_json(items: Sequence[PlanItem]) -> list[dict[str, str]]:
    """The plan as stored with the session."""
    return [{"content": i.content, "status": i.status, "priority": i.priority} for i in items]


def plan_from_json(value: object) -> tuple[PlanItem, ...]:
    """The plan stored with the session (entries that do not fit are left out)."""
    if not isinstance(value, list):
        return ()
    return tuple(plan_items({"steps": cast(list[Any], value)}) or ())


_STATUSES = {"pending": "pending", "in_progress": "in_progress", "completed": "completed", "done": "completed"}


def plan_items(value: object) -> list[PlanItem] | None:
    """The plan in a structured output: a [`PlanOutput`][acpkit_core.runner.plan.PlanOutput], or any mapping or
    object with a `steps` list of `{content, status?, priority?}`; `None` when `value` is not a plan."""
    if isinstance(value, PlanOutput):
        return [s.item() for s in value.steps]
    raw: object = cast(Mapping[str, Any], value).get("steps") if isinstance(value, Mapping) else None
    if raw is None and not isinstance(value, Mapping):
        raw = getattr(value, "steps", None)
    if not isinstance(raw, list):
        return None
    items: list[PlanItem] = []
    for step in cast(list[Any], raw):
        fields: Mapping[str, Any]
        if isinstance(step, Mapping):
            fields = cast(Mapping[str, Any], step)
        else:
            fields = cast(dict[str, Any], vars(step)) if hasattr(step, "__dict__") else {}
        content = fields.get("content")
        if not isinstance(content, str) or not content:
            continue
        status = _STATUSES.get(str(fields.get("status", "pending")), "pending")
        priority = fields.get("priority", "medium")
        items.append(
            PlanItem(
                content=content,
                status=cast(Any, status),
                priority=priority if priority in ("high", "medium", "low") else "medium",
            )
        )
    return items


def partial_plan(json_text: str) -> list[PlanItem]:
    """The steps complete so far in a [`PlanOutput`][acpkit_core.runner.plan.PlanOutput] the model is still writing.

    `json_text` is the output (or output tool arguments) streamed so far; a step counts once the
    next one has begun or the list is closed, so a step is never shown half written.
    """
    from pydantic_core import from_json

    try:
        value = from_json(json_text, allow_partial="trailing-strings")
    except ValueError:
        return []
    items = plan_items(value) or []
    closed = json_text.rstrip().endswith(("]", "}"))
    return items if closed else items[:-1]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanContent:
    """One plan of a session, by id: its entries, or Markdown text, or a file's URI (one of the three)."""

    id: str
    """The plan's id (`planId`)."""
    items: tuple[PlanItem, ...] = ()
    """Its entries (an `items` plan)."""
    markdown: str | None = None
    """Its Markdown text (a `markdown` plan)."""
    uri: str | None = None
    """The URI of the file that holds it (a `file` plan)."""

    def entries(self) -> tuple[PlanItem, ...]:
        """The plan as stable `plan` entries: its items; a Markdown or file plan as one entry."""
        if self.markdown is not None:
            return (PlanItem(content=self.markdown),)
        if self.uri is not None:
            return (PlanItem(content=f"Plan: {self.uri}"),)
        return self.items

    def to_json(self) -> dict[str, Any]:
        """As stored with the session."""
        if self.markdown is not None:
            return {"id": self.id, "markdown": self.markdown}
        if self.uri is not None:
            return {"id": self.id, "uri": self.uri}
        return {"id": self.id, "items": plan_to_json(self.items)}


def plans_from_json(value: object) -> tuple[PlanContent, ...]:
    """The other plans stored with the session (entries that do not fit are left out)."""
    if not isinstance(value, list):
        return ()
    plans: list[PlanContent] = []
    for raw in cast(list[Any], value):
        if not isinstance(raw, dict) or not isinstance(cast(dict[str, Any], raw).get("id"), str):
            continue
        fields = cast(dict[str, Any], raw)
        markdown, uri = fields.get("markdown"), fields.get("uri")
        if isinstance(markdown, str):
            plans.append(PlanContent(id=fields["id"], markdown=markdown))
        elif isinstance(uri, str):
            plans.append(PlanContent(id=fields["id"], uri=uri))
        else:
            plans.append(PlanContent(id=fields["id"], items=plan_from_json(fields.get("items"))))
    return tuple(plans)


Publisher: TypeAlias = Callable[[Sequence[PlanItem], PlanChange], Awaitable[None]]
"""Sends the stable plan after a change (the complete list, and what changed)."""


class PlanOperations(Protocol):
    """Sends the unstable plan operations (the turn's emitter, for a client that negotiated them)."""

    async def send_plan_update(self, plan: PlanContent) -> None:
        """Send `plan_update` for one plan."""
        ...

    async def send_plan_removed(self, plan_id: str) -> None:
        """Send `plan_removed`."""
        ...

    async def record_plan(self, items: Sequence[PlanItem]) -> None:
        """Keep the stable `plan` in the transcript (not sent)."""
        ...


class TurnPlan:
    """The session's plan as one turn sees and changes it (`turn.plan`).

    Every change is kept with the session (stored when the turn ends) and sent at once; a change
    that leaves the plan as the client already has it sends nothing.
    """

    def __init__(
        self,
        session: Session,
        items: Sequence[PlanItem],
        send: Publisher,
        *,
        provider: PlanProvider | None = None,
        others: Sequence[PlanContent] = (),
        operations: PlanOperations | None = None,
    ) -> None:
        self._session = session
        self._items: tuple[PlanItem, ...] = tuple(items)
        self._send = send
        self._provider = provider
        self._others: dict[str, PlanContent] = {p.id: p for p in others}
        self._operations = operations

    @property
    def operations(self) -> bool:
        """True when the client negotiated plan operations: each plan is shown on its own, by id."""
        return self._operations is not None

    @property
    def others(self) -> tuple[PlanContent, ...]:
        """The plans shown besides the session's plan ([`show`][acpkit_core.runner.plan.TurnPlan.show]), in order."""
        return tuple(self._others.values())

    def others_to_json(self) -> list[dict[str, Any]]:
        """The other plans as stored with the session."""
        return [p.to_json() for p in self._others.values()]

    async def show(
        self,
        plan_id: str,
        *,
        items: Sequence[PlanItem] | None = None,
        markdown: str | None = None,
        uri: str | None = None,
    ) -> None:
        """Show (or replace) another plan besides the session's: its entries, Markdown text, or a file's URI.

        Exactly one of `items`, `markdown`, `uri`; `plan_id` is any id but `MAIN_PLAN_ID`. A client
        with plan operations is sent `plan_update` for that plan alone; a plain client the stable
        `plan` with every plan's entries. Kept with the session, like the session's plan.
        """
        if plan_id == MAIN_PLAN_ID or not plan_id:
            raise ValueError(f"TurnPlan.show: plan id {plan_id!r} is the session's plan; change it with set/update")
        given = [v for v in (items, markdown, uri) if v is not None]
        if len(given) != 1:
            raise ValueError("TurnPlan.show: give exactly one of items=, markdown=, uri=")
        plan = PlanContent(id=plan_id, items=tuple(items or ()), markdown=markdown, uri=uri)
        if self._others.get(plan_id) == plan:
            return
        self._others[plan_id] = plan
        await self._publish("set", plan_id)

    async def drop(self, plan_id: str) -> None:
        """Take away a plan shown with [`show`][acpkit_core.runner.plan.TurnPlan.show] (`plan_removed`);
        nothing when there is no such plan."""
        if self._others.pop(plan_id, None) is None:
            return
        await self._publish("remove", plan_id, removed=True)

    @property
    def items(self) -> tuple[PlanItem, ...]:
        """The plan's entries now."""
        return self._items

    @property
    def writable(self) -> bool:
        """False when a host's [`PlanProvider`][acpkit_core.runner.plan.PlanProvider] owns the plan and takes no
        changes (it has no `set_plan`): the model should not be offered a plan tool."""
        return self._provider is None or isinstance(self._provider, PlanWriter)

    def to_json(self) -> list[dict[str, str]]:
        """The plan as stored with the session."""
        return plan_to_json(self._items)

    async def set(self, items: Sequence[PlanItem]) -> None:
        """Replace the whole plan."""
        await self._change(tuple(items), "set")

    async def update(
        self,
        index: int,
        *,
        status: Literal["pending", "in_progress", "completed"] | None = None,
        content: str | None = None,
        priority: Literal["high", "medium", "low"] | None = None,
    ) -> None:
        """Change one entry (0-based `index`); raises `IndexError` for an entry that does not exist."""
        old = self._items[self._index(index)]
        new = PlanItem(
            content=old.content if content is None else content,
            status=old.status if status is None else status,
            priority=old.priority if priority is None else priority,
        )
        items = list(self._items)
        items[self._index(index)] = new
        await self._change(tuple(items), "update")

    async def add(self, item: PlanItem, *, index: int | None = None) -> None:
        """Add an entry at `index` (default: at the end)."""
        items = list(self._items)
        items.insert(len(items) if index is None else index, item)
        await self._change(tuple(items), "add")

    async def remove(self, index: int) -> None:
        """Remove one entry (0-based `index`)."""
        items = list(self._items)
        del items[self._index(index)]
        await self._change(tuple(items), "remove")

    async def clear(self) -> None:
        """Remove the plan (an empty `plan` update: ACP's way to say there is none)."""
        await self._change((), "clear")

    async def refresh(self) -> None:
        """Read the host's plan again (`PlanProvider.get_plan`) and send it if it changed."""
        if self._provider is None:
            return
        found = await self._provider.get_plan(self._session)
        if found is None:
            return
        items = tuple(found)
        if items != self._items:
            self._items = items
            await self._publish("refresh")

    def _index(self, index: int) -> int:
        if not -len(self._items) <= index < len(self._items):
            raise IndexError(f"the plan has {len(self._items)} entries; there is no entry {index}")
        return index

    async def _change(self, items: tuple[PlanItem, ...], change: PlanChange) -> None:
        if items == self._items:
            return
        if self._provider is not None:
            if not isinstance(self._provider, PlanWriter):
                raise PermissionError("the host's plan provider owns this plan and takes no changes (no set_plan)")
            await self._provider.set_plan(self._session, items)
        self._items = items
        await self._publish(change)

    def folded(self) -> tuple[PlanItem, ...]:
        """Every plan's entries in one list: the session's plan, then the others in order (the stable form)."""
        return self._items + tuple(i for p in self._others.values() for i in p.entries())

    async def _publish(self, change: PlanChange, plan_id: str = MAIN_PLAN_ID, *, removed: bool = False) -> None:
        """Send the plan after `change`: the one place a plan leaves the agent.

        A client that negotiated plan operations gets `plan_update` for the plan that changed, or
        `plan_removed` (a plan dropped, or the session's plan cleared); the transcript keeps the
        stable form. Any other client gets ACP's stable `plan` with every plan's entries.
        """
        ops = self._operations
        if ops is None:
            await self._send(self.folded(), change)
            return
        if plan_id == MAIN_PLAN_ID:
            removed = not self._items
        if removed:
            await ops.send_plan_removed(plan_id)
        elif plan_id == MAIN_PLAN_ID:
            await ops.send_plan_update(PlanContent(id=MAIN_PLAN_ID, items=self._items))
        else:
            await ops.send_plan_update(self._others[plan_id])
        await ops.record_plan(self.folded())
