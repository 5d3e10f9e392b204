"""Graph state shown as ACP updates: `python examples/langgraph_state.py` (or `acpkit run examples/langgraph_state.py`).

A small note-taking graph, built by hand (no model: it works offline and always the same way). A
prompt `note <text>` writes `/notes/today.md` in the graph's own `files` state through a tool, and
the graph keeps a todo list, a status line and a title in its state too. `state_updates` says how
each key is shown to the editor:

- `todos` -> the plan (the default, here written explicitly);
- `files` -> a diff on the `write_note` tool call that wrote the file;
- `status` -> a notice;
- `title` -> `session_info_update` (the session's title in the editor's list).
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_acp import as_notice, as_plan, as_session_info, as_tool_content, create_acp_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command

NOTE = "/notes/today.md"


def merge_files(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any]:
    """The `files` reducer: a write replaces the files it names and keeps the others."""
    return {**(old or {}), **(new or {})}


class NotesState(MessagesState):
    todos: list[dict[str, str]]
    files: Annotated[dict[str, Any], merge_files]
    status: str
    title: str


@tool
def write_note(text: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Add a line to today's note."""
    return Command(
        update={
            "files": {NOTE: {"content": ["# Today", f"- {text}"]}},
            "messages": [ToolMessage(f"noted: {text}", tool_call_id=tool_call_id)],
        }
    )


def start(state: NotesState) -> dict[str, Any]:
    asked = next(m.text for m in reversed(state["messages"]) if isinstance(m, HumanMessage))
    text = asked.removeprefix("note").strip() or "(empty)"
    call = {"name": "write_note", "args": {"text": text}, "id": f"note-{len(state['messages'])}"}
    return {
        "messages": [AIMessage(content="", tool_calls=[call])],
        "todos": [{"content": "Write the note", "status": "in_progress"}, {"content": "Tidy up", "status": "pending"}],
        "status": f"writing {NOTE}",
        "title": f"Notes: {text}",
    }


def finish(state: NotesState) -> dict[str, Any]:
    return {
        "messages": [AIMessage(content=f"Saved to {NOTE}.")],
        "todos": [{"content": "Write the note", "status": "completed"}, {"content": "Tidy up", "status": "completed"}],
        "status": "all saved",
    }


builder = StateGraph(NotesState)
builder.add_node("start", start)
builder.add_node("tools", ToolNode([write_note]))
builder.add_node("finish", finish)
builder.add_edge(START, "start")
builder.add_edge("start", "tools")
builder.add_edge("tools", "finish")
builder.add_edge("finish", END)
graph = builder.compile(name="notes")

acp_agent = create_acp_agent(
    graph,
    state_updates={
        "todos": as_plan(),
        "files": as_tool_content(),
        "status": as_notice(title="Status"),
        "title": as_session_info(title=str),
    },
)

if __name__ == "__main__":
    from acpkit_core import run_stdio

    run_stdio(acp_agent)
