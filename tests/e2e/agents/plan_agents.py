"""Agents of both adapters for the plan tests: `python plan_agents.py pydantic|langchain [host|host-readonly]`.

The model is scripted by the prompt's first word:

- `plan`: answers with a `PlanOutput` (three steps, streamed in pieces, and a summary; pydantic-acp
  in its `planning` mode);
- `step N`: marks step N of the plan completed (pydantic-acp's `update_plan_step`; LangChain:
  `write_todos` with the plan it read back from the state, step N completed);
- anything else: answers `ok`.

With `host`, a `PlanProvider` owns the plan: `plan.json` in the session's directory, read on every
`get_plan` and written by `set_plan`; `host-readonly` has no `set_plan`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from acpkit_core.permissions import STANDARD_MODES
from acpkit_core.runner.plan import PlanProvider
from acpkit_core.runner.types import PlanItem, Session

STEPS = [
    {"content": "Read the code", "status": "pending"},
    {"content": "Write the tests", "status": "pending", "priority": "high"},
    {"content": "Ship it", "status": "pending"},
]
PIECES = [
    '{"steps": [' + json.dumps(STEPS[0])[:-1],
    "}, " + json.dumps(STEPS[1]),
    ", " + json.dumps(STEPS[2]) + '], "summary": "Three steps, tests first."}',
]


class FilePlan:
    """The plan in `<cwd>/plan.json`, owned by the host."""

    async def get_plan(self, session: Session) -> Sequence[PlanItem] | None:
        path = Path(session.cwd) / "plan.json"
        if not path.exists():
            return None
        return [PlanItem(content=e["content"], status=e.get("status", "pending")) for e in json.loads(path.read_text())]


class WritableFilePlan(FilePlan):
    async def set_plan(self, session: Session, items: Sequence[PlanItem]) -> None:
        entries = [{"content": i.content, "status": i.status} for i in items]
        (Path(session.cwd) / "plan.json").write_text(json.dumps(entries))


def provider() -> PlanProvider | None:
    which = sys.argv[2] if len(sys.argv) > 2 else ""
    return WritableFilePlan() if which == "host" else FilePlan() if which == "host-readonly" else None


def pydantic_agent() -> None:
    from pydantic_acp import run_acp
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        said = "".join(str(p.content) for p in last.parts if isinstance(p, UserPromptPart))
        if not said and any(isinstance(p, ToolReturnPart) for p in last.parts):  # after the tool call
            yield "ok"
            return
        words = said.split()
        if words[:1] == ["plan"] and info.output_tools:
            for i, piece in enumerate(PIECES):
                yield {0: DeltaToolCall(name=info.output_tools[0].name if i == 0 else None, json_args=piece)}
        elif words[:1] == ["step"] and "update_plan_step" in [t.name for t in info.function_tools]:
            args = json.dumps({"step": int(words[1]), "status": "completed"})
            yield {0: DeltaToolCall(name="update_plan_step", json_args=args, tool_call_id="s1")}
        else:
            yield "ok" if not [t for t in info.function_tools if t.name.startswith("update_plan")] else "ok (can plan)"

    run_acp(
        Agent(FunctionModel(stream_function=stream), name="plans-pydantic"),
        modes=STANDARD_MODES,  # `planning` answers with the plan (`plan_output=True`); `agentic` does the work
        default_mode="agentic",
        plan_output=True,
        plan_tool=True,
        plan_provider=provider(),
    )


def langchain_agent() -> None:
    sys.path.insert(0, str(Path(__file__).parents[2] / "langchain"))
    from acpkit_core.runner.plan import PlanOutput
    from fake_model import Call, FakeChatModel, Reply  # pyright: ignore[reportMissingImports, reportUnknownVariableType]
    from langchain.agents import create_agent
    from langchain.agents.middleware import TodoListMiddleware
    from langchain_acp import run_acp
    from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

    def reply(messages: list[BaseMessage]) -> Any:
        if isinstance(messages[-1], ToolMessage):
            return Reply(text="ok")
        words = next(m.text for m in reversed(messages) if isinstance(m, HumanMessage)).split()
        if words[:1] == ["plan"]:
            return Reply(calls=[Call("PlanOutput", {"steps": STEPS, "summary": "Three steps, tests first."}, "p1")])
        if words[:1] == ["step"]:
            todos = [dict(s) for s in STEPS]
            todos[int(words[1]) - 1]["status"] = "completed"
            return Reply(calls=[Call("write_todos", {"todos": todos}, "t1")])
        return Reply(text="ok")

    model = FakeChatModel(script=[reply], repeat_last=True)
    graph = create_agent(model, tools=[], middleware=[TodoListMiddleware()], response_format=PlanOutput)
    run_acp(graph, plan_provider=provider(), name="plans-langchain")


if __name__ == "__main__":
    pydantic_agent() if sys.argv[1] == "pydantic" else langchain_agent()
