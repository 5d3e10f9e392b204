"""One options surface: every `AgentOptions` field is typed, accepted and applied by both adapters, and documented."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, ForwardRef

import langchain_acp
import pydantic_acp
import pytest
from acpkit_core import AcpAgent
from acpkit_core.auth import Authentication, EnvVarMethod
from acpkit_core.config import AgentOptions, AgentOptionsKwargs, BooleanOption, Command, ModelOption
from acpkit_core.errors import UserError
from acpkit_core.extensions import Extensions
from acpkit_core.permissions import STANDARD_MODES, PermissionPolicy
from acpkit_core.runner.elicitation import Answer, Question
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.tool_presets import shell_tool
from acpkit_core.runner.types import Session, StopReason
from acpkit_core.store import MemoryStore
from acpkit_core.telemetry import Telemetry
from langgraph.graph import END, START, MessagesState, StateGraph
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

ROOT = Path(__file__).resolve().parents[1]


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("options_tables", ROOT / "docs/hooks/options_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _noop(turn: Turn, args: str) -> StopReason:
    return "end_turn"


async def _no_fallback(question: Question, turn: Turn) -> Answer | None:
    return Answer(outcome="unavailable")


class _NoPlan:
    async def get_plan(self, session: Session) -> None:
        return None


MODELS = (ModelOption(id="m1"), ModelOption(id="m2"))
SAMPLES: dict[str, tuple[Any, Callable[[Any], object]]] = {
    # option: (value passed, how AgentOptions should hold it)
    "name": ("n1", lambda v: v),
    "title": ("Title", lambda v: v),
    "version": ("9.9.9", lambda v: v),
    "store": ("memory", lambda v: "memory" if isinstance(v, MemoryStore) else v),
    "modes": (STANDARD_MODES[:2], tuple),
    "default_mode": ("interactive", lambda v: v),
    "default_model": ("m2", lambda v: v),
    "config_options": ((BooleanOption(id="b", name="B"),), tuple),
    "commands": ((Command(name="ping", description="p", handler=_noop),), tuple),
    "permission_policy": (PermissionPolicy(ask=("delete_*",)), lambda v: v),
    "tool_kinds": ({"lookup": "search"}, dict),
    "tool_presentation": ({"run_*": shell_tool()}, dict),
    "coalesce_ms": (5.0, lambda v: v),
    "write_window_ms": (0.5, lambda v: v),
    "allowed_paths": (("/tmp",), tuple),
    "host_tools": ("off", str),
    "context_window": (200_000, lambda v: v),
    "transcript_flush_ms": (25.0, lambda v: v),
    "max_stored_attachment": (4096, lambda v: v),
    "extensions": (Extensions(), lambda v: v),
    "max_message_bytes": (1 << 20, lambda v: v),
    "max_prompt_bytes": (1 << 19, lambda v: v),
    "max_turn_requests": (300, lambda v: v),
    "auth": (Authentication(methods=[EnvVarMethod(id="k", name="Key", vars=["ACME_API_KEY"])]), lambda v: v),
    "telemetry": (Telemetry(traces=False, metrics=False), lambda v: v),
    "ask_fallback": (_no_fallback, lambda v: v),
    "plan_provider": (_NoPlan(), lambda v: v),
}


def _answer(state: MessagesState) -> dict[str, list[object]]:
    return {"messages": []}


def _graph() -> Any:
    builder: Any = StateGraph(MessagesState)  # langgraph's builder types are partly unknown to pyright
    builder.add_node("answer", _answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()


def _pydantic(**options: Any) -> AcpAgent:
    given: dict[str, Any] = {"modes": STANDARD_MODES}
    given.update(options)
    return pydantic_acp.create_acp_agent(Agent(TestModel()), models=list(MODELS), **given)


def _langchain(**options: Any) -> AcpAgent:
    given: dict[str, Any] = {"modes": STANDARD_MODES}
    given.update(options)
    # a factory: it gets the model chosen (a fixed graph offered models needs AcpModelMiddleware)
    return langchain_acp.create_acp_agent(graph_factory=lambda ctx: _graph(), models=MODELS, **given)


ADAPTERS = {"pydantic": _pydantic, "langchain": _langchain}


def _annotation(value: object) -> str:
    return value.__forward_arg__ if isinstance(value, ForwardRef) else str(value)


def test_the_core_keywords_are_exactly_the_agent_options_with_the_same_types() -> None:
    fields = {f.name: str(f.type) for f in dataclasses.fields(AgentOptions) if f.name != "models"}
    keywords = {k: _annotation(v) for k, v in AgentOptionsKwargs.__annotations__.items()}
    assert keywords == fields


def test_every_option_has_a_sample_here() -> None:
    assert set(SAMPLES) == {f.name for f in dataclasses.fields(AgentOptions)} - {"models"}


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
@pytest.mark.parametrize("option", sorted(SAMPLES))
def test_every_option_reaches_agent_options_on_both_adapters(adapter: str, option: str) -> None:
    value, held = SAMPLES[option]
    agent = ADAPTERS[adapter](**{option: value})
    assert held(getattr(agent.options, option)) == held(value)
    assert [m.id for m in agent.options.models] == ["m1", "m2"]


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_an_unknown_keyword_is_refused_with_the_list_of_options(adapter: str) -> None:
    with pytest.raises(UserError, match=r"unknown option 'context_windw'.*context_window"):
        ADAPTERS[adapter](context_windw=1)


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
@pytest.mark.parametrize("option", ["coalesce_ms", "write_window_ms", "transcript_flush_ms"])
@pytest.mark.parametrize("value", [-1, float("nan"), float("inf"), "2", True])
def test_a_window_that_is_not_a_finite_number_of_milliseconds_is_refused(
    adapter: str, option: str, value: object
) -> None:
    with pytest.raises(UserError, match=rf"{option} must be a number of milliseconds, 0 or more \(got "):
        ADAPTERS[adapter](**{option: value})


@pytest.mark.parametrize("module", [pydantic_acp, langchain_acp])
def test_run_acp_takes_the_same_keywords_as_create_acp_agent(module: ModuleType) -> None:
    create = inspect.signature(module.create_acp_agent).parameters
    run = inspect.signature(module.run_acp).parameters
    assert [(p.name, p.kind, p.annotation) for p in create.values()] == [
        (p.name, p.kind, p.annotation) for p in run.values()
    ]
    assert all(p.annotation != "Any" for p in create.values())


@pytest.mark.parametrize(
    ("page", "tables"),
    [
        ("docs/pydantic/configuration.md", ["pydantic_acp.PydanticAcpOptions", "acpkit_core.config.AgentOptions"]),
        ("docs/langchain/index.md", ["langchain_acp.LangChainAcpOptions", "acpkit_core.config.AgentOptions"]),
    ],
)
def test_each_adapters_docs_table_every_option_from_its_docstring(page: str, tables: list[str]) -> None:
    hook = _hook()
    text = (ROOT / page).read_text()
    rendered = hook.on_page_markdown(text)
    for path in tables:
        assert f"<!-- options-table: {path} -->" in text
    adapter_options: Mapping[str, object] = (
        pydantic_acp.PydanticAcpOptions.__annotations__
        if "pydantic" in page
        else langchain_acp.LangChainAcpOptions.__annotations__
    )
    for name in [*adapter_options, *SAMPLES]:
        row = next((line for line in rendered.splitlines() if line.startswith(f"| `{name}` |")), None)
        assert row is not None, f"{name} missing from {page}"
        assert row.rstrip(" |").split("|")[-1].strip(), f"{name} has no description in {page}"
