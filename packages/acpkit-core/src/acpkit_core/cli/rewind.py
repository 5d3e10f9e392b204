"""`acpkit chat`'s `/rewind`: a picker of the session's prompts, the conversation redrawn, the prompt offered again.

Served through the agent's rewind extension (`_acpkit/session/prompts`, `_acpkit/session/rewind`;
see `acpkit_core.runner.rewind`). The agent asks about the files itself, with a permission question the
chat shows as any other.
"""

from __future__ import annotations

from typing import Any, cast

from acp import RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import SessionNotification

from ..runner.rewind import PROMPTS_METHOD, REWIND_METHOD
from .ask import LineReader
from .sanitize import printable
from .view import ChatView

__all__ = ["PICKER_ROWS", "redraw", "rewind"]

PICKER_ROWS = 15
"""How many of the latest prompts the picker lists."""


async def rewind(conn: ClientSideConnection, view: ChatView, reader: LineReader, session_id: str, arg: str) -> None:
    """`/rewind [N]`: pick a prompt (the last by default), rewind to before it, redraw the conversation,
    and put that prompt on the input line to edit and send again."""
    try:
        if arg:
            if not arg.isdigit() or int(arg) < 1:
                view.note(f"/rewind takes a prompt number, not {arg!r}", style="yellow")
                return
            number = int(arg)
        else:
            picked = await _pick_prompt(conn, view, reader, session_id)
            if picked is None:
                return
            number = picked
        answer = await conn.ext_method(REWIND_METHOD, {"sessionId": session_id, "prompt": number, "transcript": True})
    except RequestError as exc:
        view.note(f"✗ cannot rewind: {printable(str(exc))}", style="red")
        return
    redraw(view, answer.get("transcript") or [])
    view.note(str(answer.get("message", "")), style="bold")
    prompt: dict[str, Any] = answer.get("prompt") or {}
    content: list[Any] = prompt.get("content") or []
    blocks = [cast(dict[str, Any], b) for b in content if isinstance(b, dict)]
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    if text:
        reader.prefill(text.replace("\n", " "))
        view.note("the prompt is on the input line: edit it and press Enter, or clear it", style="dim")


async def _pick_prompt(conn: ClientSideConnection, view: ChatView, reader: LineReader, session_id: str) -> int | None:
    """Show the latest prompts and ask which one to go back before (Enter: the last)."""
    listing = await conn.ext_method(PROMPTS_METHOD, {"sessionId": session_id})
    prompts: list[dict[str, Any]] = listing.get("prompts") or []
    if not prompts:
        view.note("nothing to rewind: this session has no prompt yet", style="yellow")
        return None
    view.note("go back to before which prompt?", style="bold")
    for row in prompts[-PICKER_ROWS:]:
        view.note(f"  {row.get('number')}  {row.get('text') or '(no text)'}", style="")
    last = len(prompts)
    while True:
        text = await reader.read_answer(f"prompt [1-{last}, Enter: {last}, q: cancel]: ")
        if text is None or text.strip().lower() in {"q", "quit"}:
            view.note("not rewound", style="dim")
            return None
        text = text.strip()
        if not text:
            return last
        if text.isdigit() and 1 <= int(text) <= last:
            return int(text)


def redraw(view: ChatView, transcript: list[Any]) -> None:
    """Show the conversation again, as the rewound transcript has it."""
    view.end_line()
    if view.fancy:
        view.console.clear()
    view.note("── the conversation, rewound ──", style="bold")
    for wire in transcript:
        try:
            view.update(SessionNotification.model_validate({"sessionId": "-", "update": wire}).update)
        except ValueError:  # an update this client does not know: left out of the redraw
            continue
    view.end_line()
