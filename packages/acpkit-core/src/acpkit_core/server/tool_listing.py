"""The text of `/tools`: every tool the model can call, grouped by source, with its kind and status.

The runner says which tools exist ([`ToolLister`][acpkit_core.runner.protocols.ToolLister]); the kind comes
from the turn's classifier (the same call that gives a tool call its kind, with the developer's
overrides) and the status from the turn's permission gate (policy, mode, remembered answers), so
the list says what the session's next prompt would really do with each tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acp.schema import ToolKind

from ..permissions import Mode
from ..runner.protocols import Turn
from ..runner.types import ToolInfo, ToolListing
from .turn import ServerTurn

__all__ = ["ListedTool", "listed_tools", "tools_text"]

_GROUP_TITLES = {
    "agent": "Agent tools:",
    "client": "Client tools (the editor's files and terminal):",
    "plan": "Plan tool:",
}
_SOURCE_ORDER = ("agent", "client", "plan", "mcp")
_SUMMARY_LIMIT = 100


@dataclass(frozen=True, slots=True)
class ListedTool:
    """One line of `/tools`."""

    info: ToolInfo
    """The tool as the runner listed it."""
    kind: ToolKind
    """Its ACP kind, as its calls get it."""
    status: str
    """`allowed`, `asks first`, `off in mode <id>`, `denied by the permission policy`, `denied by
    the agent's permission rules` or `rejected for this session` (the user chose "always reject")."""

    @property
    def runs(self) -> bool:
        """True when a call may run (at once or after the user's answer)."""
        return self.status in ("allowed", "asks first")


def _status(turn: Turn, mode: Mode | None, tool: ToolInfo, kind: ToolKind) -> str:
    name = tool.name
    if isinstance(turn, ServerTurn):
        gate = turn.gate
        if gate.policy is not None and gate.policy.decide(name, kind) == "deny":
            return "denied by the permission policy"
        if gate.mode is not None and not gate.mode.allows(kind):
            return f"off in mode {gate.mode.id}"
        decision = gate.decide(name, kind)
    elif not turn.tool_allowed(name, kind):
        return f"off in mode {mode.id}" if mode is not None and not mode.allows(kind) else "not allowed"
    else:
        decision = "ask" if turn.needs_permission(name, kind) else "allow"
    if tool.decision == "deny":
        return "denied by the agent's permission rules"
    if decision == "deny":
        return "rejected for this session"
    return "asks first" if "ask" in (decision, tool.decision) else "allowed"


def listed_tools(listing: Sequence[ToolInfo] | ToolListing, turn: Turn, mode: Mode | None) -> list[ListedTool]:
    """The tools in display order (by source, MCP server, then name), one per name, with kind and status."""
    tools = listing.tools if isinstance(listing, ToolListing) else listing
    seen: set[str] = set()
    unique: list[ToolInfo] = []
    for tool in tools:
        if tool.name not in seen:
            seen.add(tool.name)
            unique.append(tool)
    unique.sort(key=lambda t: (_SOURCE_ORDER.index(t.source), t.server or "", t.name))
    result: list[ListedTool] = []
    for tool in unique:
        kind = tool.kind or turn.classify_tool(tool.name)
        result.append(ListedTool(tool, kind, _status(turn, mode, tool, kind)))
    return result


def _summary(description: str) -> str:
    """The first sentence of a description, at most 100 characters."""
    text = " ".join(description.split())
    end = text.find(". ")
    if end != -1:
        text = text[: end + 1]
    return text if len(text) <= _SUMMARY_LIMIT else text[: _SUMMARY_LIMIT - 1].rstrip() + "…"


def _group_title(tool: ToolInfo) -> str:
    if tool.source == "mcp":
        return f"MCP server `{tool.server}`:" if tool.server else "MCP tools:"
    return _GROUP_TITLES[tool.source]


def tools_text(listing: Sequence[ToolInfo] | ToolListing, turn: Turn, mode: Mode | None) -> str:
    """The answer of `/tools` (Markdown; the same listing gives the same text)."""
    notes = listing.notes if isinstance(listing, ToolListing) else ()
    tools = listed_tools(listing, turn, mode)
    where = f" in mode {mode.id}" if mode is not None else ""
    if not tools:
        lines = [f"No tools{where}."]
    else:
        runs = sum(t.runs for t in tools)
        asks = sum(t.status == "asks first" for t in tools)
        counts = f"{len(tools)} tool{'s' if len(tools) != 1 else ''}, {runs} usable"
        if asks:
            counts += f" ({asks} after asking)"
        lines = [f"Tools the model can call{where}: {counts}."]
        title = None
        for tool in tools:
            group = _group_title(tool.info)
            if group != title:
                lines += ["", group]
                title = group
            line = f"- `{tool.info.name}` ({tool.kind}) — {tool.status}"
            summary = _summary(tool.info.description)
            lines.append(line + (f" — {summary}" if summary else ""))
    if notes:
        lines += ["", *(f"Note: {note}" for note in notes)]
    return "\n".join(lines)
