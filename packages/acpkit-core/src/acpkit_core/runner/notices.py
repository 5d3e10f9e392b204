"""Notices: what the user is told beside the answer (a model fallback, MCP servers that did not
start, a limit reached), in the one form the wire gives them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from .protocols import Emitter
from .types import NoticeSeverity
from .updates import WireUpdate

__all__ = ["NOTICE_META_KEY", "notice_limit", "notice_mcp_failures", "notice_model_fallback", "notice_update"]


NOTICE_META_KEY = "notice"
"""The key under `_meta.acpkit` of an agent message that carries a notice (`severity`, `title`,
`description`), so a client that knows it can show the message as a notice."""


def notice_update(
    title: str,
    *,
    description: str | None = None,
    severity: NoticeSeverity = "info",
    message_id: str | None = None,
    native: bool = False,
    text: str | None = None,
) -> WireUpdate:
    """The one form a notice takes on the wire: the one place that decides it.

    `native` (the client negotiated `sessionNotices`, see [`acpkit_core.runner.unstable`][acpkit_core.runner.unstable]):
    the unstable schema's `notice` update (`severity`, `title`, `description`; the "session notices"
    RFD). Otherwise an `agent_message_chunk` of its own that every client shows, with
    `_meta.acpkit.notice` holding the structured fields: `text` when given (what a limit reached
    has always said), else the title in bold and the description, as a Markdown quote.
    Everything that sends a notice goes through this function.
    """
    if native:
        notice: WireUpdate = {"sessionUpdate": "notice", "severity": severity, "title": title}
        if description:
            notice["description"] = description
        return notice
    if text is None:
        body = f"**{title}**" + (f": {description}" if description else "")
        text = "\n".join(f"> {line}" if line else ">" for line in body.splitlines())
    fields: dict[str, Any] = {"severity": severity, "title": title}
    if description:
        fields["description"] = description
    return {
        "_meta": {"acpkit": {NOTICE_META_KEY: fields}},
        "content": {"text": text, "type": "text"},
        "messageId": message_id or uuid.uuid4().hex,
        "sessionUpdate": "agent_message_chunk",
    }


_REASON_LIMIT = 160


async def notice_model_fallback(
    emit: Emitter, failed: Sequence[tuple[str, str | None]], *, now: str | None, answered: bool = False
) -> None:
    """Tell the user a model failed and another one answers (the notice both adapters send).

    `failed` are `(model, why)` pairs in order (`why` `None` when its answer was rejected); `now`
    is the model tried next (`answered=False`, sent before its answer) or the one that answered
    (`answered=True`, sent after it). The title says `Model retry` when the same model is tried
    again, else `Model fallback`.
    """
    if not failed:
        return
    parts: list[str] = []
    for model, why in failed:
        reason = " ".join((why or "its answer was rejected").split())
        if len(reason) > _REASON_LIMIT:
            reason = reason[: _REASON_LIMIT - 1].rstrip() + "…"
        parts.append(f"`{model}` failed ({reason})")
    if now is None:
        then = "; another model answered." if answered else "; trying the next model."
    else:
        then = f"; `{now}` answered instead." if answered else f"; trying `{now}`."
    title = "Model retry" if now is not None and all(model == now for model, _ in failed) else "Model fallback"
    await emit.notice(title, description=", ".join(parts) + then, severity="warning")


async def notice_mcp_failures(emit: Emitter, failures: Sequence[tuple[str, str]], *, text: str | None = None) -> None:
    """Tell the user which of the session's MCP servers did not start (the notice both adapters send,
    once, on the session's first turn). `failures` are `(server name, why)`; `text` is what a client
    without notices reads (default: one line per server)."""
    if not failures:
        return
    lines = [f"MCP server `{name}` did not start: {why}" for name, why in failures]
    title = "MCP server unavailable" if len(failures) == 1 else f"{len(failures)} MCP servers unavailable"
    description = "; ".join(lines) + ". Continuing without their tools."
    if text is None:
        text = "\n".join(f"{line}. Its tools are not available in this session." for line in lines)
    await emit.notice(title, description=description, severity="warning", text=text)


async def notice_limit(emit: Emitter, message: str) -> None:
    """Tell the user a limit stopped the turn (`max_turn_requests`, a framework's recursion or usage
    limit): a `warning` notice where the client negotiated notices, else `message` (from
    [`request_limit_message`][acpkit_core.runner.stop.request_limit_message] or
    [`limit_message`][acpkit_core.runner.stop.limit_message]) as an agent message of its own."""
    await emit.notice("Turn limit reached", description=message, severity="warning", text=message)
