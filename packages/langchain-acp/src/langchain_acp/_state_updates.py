"""Graph-state keys shown as ACP updates: `state_updates={"files": as_tool_content(), ...}`.

A LangGraph graph keeps more than messages in its state: a todo list, the files an agent wrote, a
status line, a title. `create_acp_agent(graph, state_updates={...})` maps a state key to how its
changes are shown. Whenever a node of the top-level graph writes one of the keys, the key's
projection gets the value the node wrote (what the node returned for it, before any reducer) and a
[`StateContext`][langchain_acp.StateContext]:

- [`as_plan()`][langchain_acp.as_plan]: the session's plan (`todos`, the default);
- [`as_tool_content()`][langchain_acp.as_tool_content]: a diff per file, on the tool call that
  wrote it, or a card of its own when no tool did (DeepAgents' `files`);
- [`as_session_info()`][langchain_acp.as_session_info]: `session_info_update`, the title and/or
  the value under `_meta` (`title`, `summary`);
- [`as_notice()`][langchain_acp.as_notice]: a notice, core's `emit.notice` (`status`, `warning`);
- any `async (value, ctx) -> None`: whatever it sends through `ctx`.

`todos` is mapped to `as_plan()` unless you map it yourself (or to `None`, to show nothing). A
subgraph's writes (a DeepAgents subagent) are not the session's and are not projected.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

from acpkit_core.errors import UserError
from acpkit_core.runner.protocols import Emitter, Turn
from acpkit_core.runner.tool_classification import diff_content
from acpkit_core.runner.tool_lifecycle import ToolCalls
from acpkit_core.runner.types import NoticeSeverity, PlanItem, ToolCallContent

from ._plan import todos_to_plan

__all__ = [
    "DEFAULT_STATE_UPDATES",
    "StateContext",
    "StateProjection",
    "as_notice",
    "as_plan",
    "as_session_info",
    "as_tool_content",
    "check_state_updates",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class StateContext:
    """Where a state key's change came from, and how to show it."""

    key: str
    """The state key that changed."""
    node: str
    """The graph node that wrote it."""
    tool_call_id: str | None
    """The tool call whose result carried the write (a tool returning a `Command`), else `None`."""
    previous: Any
    """The value this key had when last shown in this session (`None` the first time in this process)."""
    emit: Emitter
    """The turn's emitter: `plan`, `notice`, `session_info`, `text`, ..."""
    tools: ToolCalls
    """The turn's tool calls (attach content to one, or announce a card of its own)."""
    turn: Turn | None
    """The server's turn (`None` under a hand-built server): its session, plan and cwd."""

    @property
    def cwd(self) -> str:
        """The session's working directory (relative paths in the state are joined to it)."""
        return self.turn.session.cwd if self.turn is not None else os.getcwd()


StateProjection: TypeAlias = Callable[[Any, StateContext], Awaitable[None]]
"""Shows one change of a state key: `async (value written, context) -> None`."""


def as_plan(convert: Callable[[Sequence[Any]], Sequence[PlanItem]] = todos_to_plan) -> StateProjection:
    """The value is the plan: a list converted by `convert` (default: `write_todos` items) becomes the plan."""

    async def project(value: Any, ctx: StateContext) -> None:
        if isinstance(value, list | tuple):
            await ctx.emit.plan(list(convert(cast(Sequence[Any], value))))

    return project


def _file_text(data: Any) -> str | None:
    """The text of one file of a `files` state (DeepAgents' `{"content": [lines] | str, ...}`, or a string)."""
    if data is None:
        return None
    if isinstance(data, str):
        return data
    content: Any = cast(Mapping[str, Any], data).get("content") if isinstance(data, Mapping) else None
    if isinstance(content, list):
        return "\n".join(str(line) for line in cast(list[Any], content))
    return content if isinstance(content, str) else None


def as_tool_content(*, title: str = "Files changed", text: Callable[[Any], str | None] = _file_text) -> StateProjection:
    """The value maps file paths to files: each changed file is shown as a diff (from the text last shown).

    The diffs go on the tool call that wrote them (its result was a `Command` updating the key); a
    write by any other node is shown as a completed `edit` card of its own titled `title`. `text`
    reads a file's text from its value (default: DeepAgents' file data, or a string); a file whose
    value is `None` (deleted) is shown as emptied.
    """

    async def project(value: Any, ctx: StateContext) -> None:
        if not isinstance(value, Mapping):
            return
        previous: object = ctx.previous
        before: Mapping[str, Any] = cast(Mapping[str, Any], previous) if isinstance(previous, Mapping) else {}
        diffs: list[ToolCallContent] = []
        for path, data in cast(Mapping[str, Any], value).items():
            new = text(data)
            old = text(before.get(path))
            if new == old:
                continue
            diffs.append(diff_content(os.path.join(ctx.cwd, str(path)), old, new or ""))
        if not diffs:
            return
        if ctx.tool_call_id is not None and await ctx.tools.add_content(ctx.tool_call_id, diffs):
            return
        card = f"acpkit-state-{ctx.key}-{os.urandom(4).hex()}"
        await ctx.emit.tool_call(card, title=title, kind="edit", status="completed", content=diffs)

    return project


def as_session_info(
    *, title: Callable[[Any], str | None] | None = None, meta_key: str | None = None
) -> StateProjection:
    """The value goes to `session_info_update`: as the session's title (`title(value)`, also stored for
    `session/list`) and/or under `_meta.acpkit.state.<meta_key>` (JSON values only)."""
    if title is None and meta_key is None:
        raise UserError("as_session_info(): give title=... (a function of the value) and/or meta_key=...")

    async def project(value: Any, ctx: StateContext) -> None:
        new_title = title(value) if title is not None else None
        if new_title is not None and ctx.turn is not None:
            ctx.turn.session.title = new_title
        meta = {"acpkit": {"state": {meta_key: value}}} if meta_key is not None else None
        if new_title is None and meta is None:
            return
        await ctx.emit.session_info(title=new_title, meta=meta)

    return project


def as_notice(
    *, title: str, severity: NoticeSeverity = "info", describe: Callable[[Any], str | None] = str
) -> StateProjection:
    """The value is told to the user as a notice titled `title`, described by `describe(value)`
    (default: its text); a value described as `None` or empty is not shown."""

    async def project(value: Any, ctx: StateContext) -> None:
        description = describe(value) if value is not None else None
        if description:
            await ctx.emit.notice(title, description=description, severity=severity)

    return project


DEFAULT_STATE_UPDATES: Mapping[str, StateProjection] = {"todos": as_plan()}
"""What is shown without `state_updates=`: `todos` as the plan."""


def check_state_updates(updates: Mapping[str, StateProjection | None], channels: Sequence[str]) -> None:
    """Refuse a developer's mapping whose keys the graph's state does not have (it would show nothing)."""
    for key, projection in updates.items():
        if projection is not None and not callable(projection):
            raise UserError(f"state_updates[{key!r}]: expected a projection such as as_notice(...), got {projection!r}")
    missing = sorted(k for k, p in updates.items() if p is not None and k not in channels)
    if missing:
        raise UserError(
            f"state_updates names state keys the graph does not have: {', '.join(missing)} "
            f"(its state has {', '.join(sorted(c for c in channels if not c.startswith('__')))})"
        )
