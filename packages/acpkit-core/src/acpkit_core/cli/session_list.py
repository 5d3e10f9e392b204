"""Every session an agent lists for a directory (`acpkit sessions`, `/sessions` in `acpkit chat`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from acp.client.connection import ClientSideConnection

__all__ = []


async def list_all_sessions(conn: ClientSideConnection, cwd: Path) -> list[dict[str, str | None]]:
    """Every page of `session/list` for `cwd`, as rows (with the owning agent's name when the agent says it)."""
    rows: list[dict[str, str | None]] = []
    cursor: str | None = None
    while True:
        page = await conn.list_sessions(cwd=str(cwd), cursor=cursor)
        for s in page.sessions:
            meta: dict[str, Any] = s.field_meta or {}
            acpkit = meta.get("acpkit")
            agent = cast(dict[str, object], acpkit).get("agent") if isinstance(acpkit, dict) else None
            rows.append(
                {
                    "sessionId": s.session_id,
                    "cwd": s.cwd,
                    "title": s.title,
                    "updatedAt": s.updated_at,
                    "agent": agent if isinstance(agent, str) else None,
                }
            )
        cursor = page.next_cursor
        if not cursor:
            return rows
