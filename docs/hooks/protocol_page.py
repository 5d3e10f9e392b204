"""mkdocs hook: the tables of the "ACP support" page, generated from the ACP schema's own lists.

On a line of its own, `<!-- acp-methods -->` becomes a table of every method the schema names
(`references/acp-schema/meta.json` and `meta.unstable.json`: agent, client and protocol methods),
`<!-- acp-updates -->` one of every `session/update` kind (`schema.json` and
`schema.unstable.json`), and `<!-- acp-unstable -->` one of the unstable surfaces ACP Kit sends
only to clients that opted in (`acpkit_core.runner.unstable.UNSTABLE_SURFACES`). Each row's support
status is in `STATUS` below: a method or update of the schema without one fails the build (and
`tests/docs/test_protocol_page.py`), so a new schema release cannot slip in unnoticed, and
`tests/e2e/test_schema_conformance.py` checks that every one marked `yes` or `negotiated` really
goes over the wire, valid against the schema.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal, TypeAlias

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "references" / "acp-schema"

Support: TypeAlias = Literal["yes", "negotiated", "planned", "no"]
"""`yes`: on every connection; `negotiated`: only where the client opted in (an unstable surface);
`planned`: not yet (issue 25); `no`: not supported."""

SUPPORT_TEXT: dict[Support, str] = {
    "yes": "yes",
    "negotiated": "yes, when negotiated",
    "planned": "not yet",
    "no": "no",
}

STATUS: dict[str, tuple[Support, str]] = {
    # --- agent methods (the client calls them) ---
    "agent:initialize": ("yes", "Advertises only what works; answers the client's version or its own."),
    "agent:authenticate": (
        "yes",
        "With `auth=`: env-var and agent methods ([Authentication](core/authentication.md)).",
    ),
    "agent:logout": ("yes", "With `auth=`; advertised as `agentCapabilities.auth.logout`."),
    "agent:session/new": ("yes", ""),
    "agent:session/load": ("yes", "Replays the stored transcript, after a restart too."),
    "agent:session/resume": ("yes", ""),
    "agent:session/close": ("yes", ""),
    "agent:session/delete": ("yes", "An unknown id succeeds with nothing to delete."),
    "agent:session/list": ("yes", "Paged by cursor."),
    "agent:session/set_mode": ("yes", ""),
    "agent:session/set_config_option": ("yes", "Select options; boolean ones for clients that advertise them."),
    "agent:session/prompt": ("yes", "Usage in `_meta`, or at the root for `promptUsage` clients."),
    "agent:session/cancel": ("yes", ""),
    "agent:session/fork": ("negotiated", "Served to every client; advertised to `sessionFork` clients."),
    "agent:mcp/message": (
        "negotiated",
        "MCP over ACP: what the client's MCP server sends the agent ([MCP over ACP](#mcp-over-acp)).",
    ),
    "agent:providers/list": (
        "negotiated",
        "Custom LLM endpoints, for `providers` clients: `main`, the agent's model ([below](#custom-llm-endpoints)).",
    ),
    "agent:providers/set": ("negotiated", "The next turns run on the client's endpoint (both adapters)."),
    "agent:providers/disable": ("negotiated", "`main` is required; an unknown id succeeds."),
    "agent:nes/start": ("no", "Next-edit suggestions are an editor feature, not an agent framework's."),
    "agent:nes/suggest": ("no", ""),
    "agent:nes/accept": ("no", ""),
    "agent:nes/reject": ("no", ""),
    "agent:nes/close": ("no", ""),
    "agent:document/didOpen": ("no", "Document sync belongs with next-edit suggestions."),
    "agent:document/didChange": ("no", ""),
    "agent:document/didClose": ("no", ""),
    "agent:document/didSave": ("no", ""),
    "agent:document/didFocus": ("no", ""),
    # --- client methods (the agent calls them) ---
    "client:session/update": ("yes", "Every update kind below."),
    "client:session/request_permission": ("yes", "With the tool call's own id ([Permissions](core/permissions.md))."),
    "client:fs/read_text_file": ("yes", "Where the client advertised it ([Client files](core/host.md))."),
    "client:fs/write_text_file": ("yes", "Where the client advertised it."),
    "client:terminal/create": ("yes", "Where the client advertised terminals."),
    "client:terminal/output": ("yes", ""),
    "client:terminal/wait_for_exit": ("yes", ""),
    "client:terminal/kill": ("yes", ""),
    "client:terminal/release": ("yes", "Always, whatever happened."),
    "client:elicitation/create": ("yes", "Form and URL mode, as advertised ([Asking the user](core/questions.md))."),
    "client:elicitation/complete": ("yes", "For an accepted link, once."),
    "client:mcp/connect": ("negotiated", "MCP over ACP, for `mcpOverAcp` clients: by both adapters' MCP loaders."),
    "client:mcp/message": ("negotiated", "Every MCP request and notification of the agent's MCP session."),
    "client:mcp/disconnect": ("negotiated", "When the session's MCP servers close."),
    # --- protocol methods (either side) ---
    "protocol:$/cancel_request": ("yes", "Both ways: see [request cancellation](#request-cancellation)."),
    # --- session/update kinds ---
    "update:user_message_chunk": ("yes", "In `session/load` replays."),
    "update:agent_message_chunk": ("yes", "With message ids."),
    "update:agent_thought_chunk": ("yes", "Unless the session's `show_thinking` option is off."),
    "update:tool_call": ("yes", "With the tool's `name` for `toolCallName` clients (unstable)."),
    "update:tool_call_update": ("yes", ""),
    "update:plan": ("yes", "Always the complete list (every plan's entries, for a client without plan operations)."),
    "update:available_commands_update": ("yes", ""),
    "update:current_mode_update": ("yes", ""),
    "update:config_option_update": ("yes", ""),
    "update:session_info_update": ("yes", "Title and time."),
    "update:usage_update": ("yes", "The context meter: after each model response ([Context meter](#context-meter))."),
    "update:plan_update": (
        "negotiated",
        "Unstable: `planOperations` (or `clientCapabilities.plan`); several plans by id ([Plans](core/plans.md)).",
    ),
    "update:plan_removed": ("negotiated", "Unstable: a plan dropped, or the session's plan cleared."),
    "update:notice": (
        "negotiated",
        "Unstable: `sessionNotices`; else an agent message tagged `_meta.acpkit.notice` ([Notices](core/notices.md)).",
    ),
    "update:compaction_update": (
        "negotiated",
        "Unstable: `sessionCompaction` (or `clientCapabilities.session.compaction`); else a notice. "
        "Replayed by `session/load` in its final state ([Compaction](core/notices.md#compaction)).",
    ),
    "update:compaction_summary_chunk": (
        "negotiated",
        "Unstable: LangChain's summarization streams its summary; folded into the update on replay.",
    ),
}
"""ACP Kit's support for each method (`<side>:<method>`) and update kind (`update:<kind>`)."""

_DIRECTION = {"agent": "client → agent", "client": "agent → client", "protocol": "both ways"}
_MARKER = re.compile(r"^<!-- acp-(methods|updates|unstable) -->$", re.MULTILINE)


def _load(name: str) -> Any:
    return json.loads((SCHEMA_DIR / name).read_text())


def schema_methods() -> dict[str, bool]:
    """Every method key (`<side>:<method>`) of the schema, mapped to whether it is stable."""
    stable, unstable = _load("meta.json"), _load("meta.unstable.json")
    found: dict[str, bool] = {}
    for meta, is_stable in ((unstable, False), (stable, True)):
        for group, side in (("agentMethods", "agent"), ("clientMethods", "client"), ("protocolMethods", "protocol")):
            for method in meta.get(group, {}).values():
                found[f"{side}:{method}"] = is_stable or found.get(f"{side}:{method}", False)
    return found


def _update_kinds(schema: Any) -> list[str]:
    union = schema["$defs"]["SessionUpdate"]
    kinds: list[str] = []
    for variant in union.get("oneOf") or union.get("anyOf") or []:
        kind = variant.get("properties", {}).get("sessionUpdate", {}).get("const")
        if isinstance(kind, str):
            kinds.append(kind)
    return kinds


def schema_updates() -> dict[str, bool]:
    """Every `session/update` kind key (`update:<kind>`), mapped to whether it is stable."""
    stable = set(_update_kinds(_load("schema.json")))
    return {f"update:{k}": k in stable for k in _update_kinds(_load("schema.unstable.json"))}


def missing_statuses() -> list[str]:
    """Methods and updates of the schema without a status (must be empty)."""
    return sorted(k for k in {**schema_methods(), **schema_updates()} if k not in STATUS)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _rows(items: dict[str, bool], with_direction: bool) -> str:
    missing = [k for k in items if k not in STATUS]
    if missing:
        raise KeyError(f"docs/hooks/protocol_page.py: no support status for {missing}")
    head = ["method", "direction"] if with_direction else ["update"]
    lines = ["| " + " | ".join([*head, "in ACP", "ACP Kit", "notes"]) + " |", "|" + "---|" * (len(head) + 3)]
    order = {"agent": 0, "client": 1, "protocol": 2, "update": 3}
    for key in sorted(items, key=lambda k: (order[k.split(":", 1)[0]], not items[k], k)):
        side, name = key.split(":", 1)
        support, note = STATUS[key]
        cells = [f"`{name}`"]
        if with_direction:
            cells.append(_DIRECTION[side])
        cells += ["stable" if items[key] else "unstable", SUPPORT_TEXT[support], _cell(note)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _unstable_table() -> str:
    from acpkit_core.runner.unstable import UNSTABLE_SURFACES

    lines = ["| surface (`_meta` key) | what | RFD |", "|---|---|---|"]
    for surface in UNSTABLE_SURFACES:
        lines.append(f"| `{surface.name}` | {_cell(surface.title)} | `{surface.rfd}` |")
    return "\n".join(lines)


def table(which: str) -> str:
    """The markdown for one marker (`methods`, `updates`, `unstable`)."""
    if which == "methods":
        return _rows(schema_methods(), with_direction=True)
    if which == "updates":
        return _rows(schema_updates(), with_direction=False)
    return _unstable_table()


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Replace each marker with its table."""
    return _MARKER.sub(lambda m: table(m.group(1)), markdown)
