"""The runner conformance suite: the same ACP scenarios against any runner, from your own pytest run.

Each scenario drives an `AcpAgent` through a real JSON-RPC connection (`AcpTestClient.connect`)
and asserts what the client sees. A runner's test module subclasses
[`RunnerConformance`][acpkit_core.testing.conformance.RunnerConformance] and provides one fixture,
`agent_factory`: a function `(scenario, options) -> AcpAgent` building an agent whose framework
behaves as the scenario says (for example a pydantic-ai `FunctionModel` or a fake LangChain chat
model scripted for it). Always pass `options` through (it carries the store and the permission
policy). The scenarios are `async` tests: install `pytest-asyncio` (the class carries its mark).

```python
# tests/test_conformance.py of your package
import pytest
from acpkit_core.testing.conformance_memory import AgentFactory
from acpkit_core.testing.conformance import RunnerConformance

class TestMyRunnerConformance(RunnerConformance):
    thoughts = False         # capability flags: set False to skip what the framework cannot do

    @pytest.fixture
    def agent_factory(self) -> AgentFactory:
        def make(scenario: str, options: AgentOptions) -> AcpAgent:
            return AcpAgent(MyRunner(script_for(scenario)), options)
        return make
```

What each scenario's agent must do (the prompt text is given for reference; the model may
ignore it):

| scenario | the agent |
|---|---|
| `text` | answers exactly `Hello from the agent.` (in one or more chunks), reporting its usage (`turn.emit.usage`) |
| `thought` | streams some reasoning (thought chunks), then answers `Done thinking.` |
| `tool_ok` | calls tool `read_file` with `{"path": "notes.txt"}`, which succeeds, then answers anything |
| `tool_fail` | calls tool `read_file` with `{"path": "missing.txt"}`, which raises, then answers anything |
| `permission` | calls tool `delete_file` with `{"path": "old.txt"}` (the policy in `options` asks first) |
| `cancel_tool` | calls tool `slow_tool`, which waits 30 s (the test cancels while it runs) |
| `memory` | turn 1 (`My name is Ada.`): anything; turn 2 (`What is my name?`): text containing `Ada` |
| `bad_prompt` | answers anything (the test first sends an invalid prompt) |
| `question` | calls tool `pick_color` (no arguments), which asks the user (see below), then answers anything |
| `mcp` | connects the session's MCP servers, calls their `lookup_word` with `{"word": "ketchup"}`, answers anything |

`pick_color` asks `Which color?` with the choices `red` and `green` through the adapter's hook (the
server's `turn.ask`, tied to its own tool call) and returns the answer's value, or its outcome when
there is none. Two scenarios need nothing of the runner but to pass `options` through: `auth` (the `text` agent
behind a required authentication method: sessions answer -32000 until `authenticate` succeeds) and
the `question` variants (asked by elicitation, by the permission fallback, and cancelled while
open), which check that the adapter's hook reaches the server's turn.

ACP 1.17 to 1.21, through the same agents: `$/cancel_request` for a running prompt ends it
`cancelled` (`cancel_tool`); a turn cancelled while a question is open cancels the question's
request (`question`); `ask_fallback` in `options` answers a question the client cannot be asked
(`question`); the `show_thinking` boolean option hides reasoning (`thought`); the context meter
(`usage_update` with `options.context_window`) and the prompt answer's usage, under `_meta` for a
plain client and at the root for one that negotiated `promptUsage` (`text`); `logout` (`text`
behind authentication); `session/delete` of an unknown id (`text`).

Unstable surfaces, for a client that negotiated them: MCP over ACP (`mcp`): a server the client
serves through the connection reaches the runner as a
[`ClientMcpServer`][acpkit_core.runner.types.ClientMcpServer] in `session.mcp_servers`, to connect as
any other (`server.streams()` gives an MCP client session's streams); a plain client's is refused
by core (`text`). A runner that connects no MCP servers sets `mcp_servers = False`. Custom LLM
endpoints (`text`): a runner that can swap its model for one on the client's endpoint
([`ModelEndpoints`][acpkit_core.runner.providers.ModelEndpoints]) must run the turn there once the
client set one (`turn.llm_endpoint`); any other runner is refused `providers/set` by core.

Unstable surfaces too, each where the client negotiated it and in its stable form for a plain client:
a tool call's `name` (`toolCallName`, `tool_ok`: report calls through `turn.tool_calls` with the
tool's name); plan operations (`planOperations`: the host plan of `options.plan_provider`, `text`);
a limit reached as a notice (`sessionNotices`, `tool_ok` with `options.max_turn_requests=1`: the
runner counts its model requests against `turn.max_requests`, stops `max_turn_requests` and tells it
with [`notice_limit`][acpkit_core.runner.notices.notice_limit]).

`tool_ok` also runs with a `tool_presentation` for `read_file` in `options` (a title template, a
kind, locations, code output), which the runner must honour: report tool calls through
`turn.tool_calls`, not with the emitter's raw `tool_call` methods.

The `permission` agent also serves `/tools` (when the runner is a
[`ToolLister`][acpkit_core.runner.protocols.ToolLister]): its listing must include `read_file` and
`delete_file`; the scenario runs it with the standard modes.

`memory` runs turn 2 on a *new* agent (a fresh `agent_factory("memory", options)` sharing the
same SQLite file) after `session/load`, which checks that history survives a restart. The `memory`
agent also serves the rewind scenarios: `/rewind` back to before the first prompt (the next answer
no longer knows the name, after a restart too), `/retry` of the question (answered again from the
first prompt alone), and `session/fork` at a prompt. A runner whose framework keeps its conversation
in `session.history` passes them with no code of its own; one that keeps it elsewhere implements
[`SessionRewinder`][acpkit_core.runner.rewind.SessionRewinder].

The scenarios are required: a subclass that redefines one (or sets it to `None`) is refused when
the class is created, unless the new definition is decorated with
[`conformance_override`][acpkit_core.testing.conformance.conformance_override] and a reason. What
a framework cannot do is said with the capability flags, which skip with a visible reason.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import pytest
from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ContentToolCallContent,
    ImageContentBlock,
    TextContentBlock,
    ToolCallStart,
    UserMessageChunk,
)

from ..auth import AgentMethod, Authentication, AuthRequest
from ..config import AgentOptions
from ..permissions import STANDARD_MODES, PermissionPolicy
from ..runner.elicitation import Answer, Question
from ..runner.protocols import ToolLister, Turn
from ..runner.tool_presentation import ToolPresentation
from ..thinking import show_thinking_option
from .client import AcpTestClient
from .conformance_memory import AgentFactory, MemoryScenarios
from .conformance_negotiated import NegotiatedScenarios

__all__ = ["REQUIRED_SCENARIOS", "RunnerConformance", "conformance_override"]

F = TypeVar("F", bound=Callable[..., Any])
_OVERRIDE = "__conformance_override__"


def conformance_override(reason: str) -> Callable[[F], F]:
    """Allow a subclass to redefine a required scenario; `reason` says why the runner differs."""
    if not reason.strip():
        raise ValueError("conformance_override needs a reason")

    def mark(test: F) -> F:
        setattr(test, _OVERRIDE, reason)
        return test

    return mark


class RunnerConformance(NegotiatedScenarios, MemoryScenarios):
    """Base class of a runner's conformance tests (not collected itself: its name does not start with `Test`)."""

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]

    thoughts: ClassVar[bool] = True
    """The framework streams reasoning."""
    permissions: ClassVar[bool] = True
    """The runner asks permission through `turn.request_permission`."""
    cancel_mid_tool: ClassVar[bool] = True
    """A running tool is interrupted by `session/cancel`."""
    questions: ClassVar[bool] = True
    """A tool can ask the user a question through the adapter's hook (`question`)."""

    @pytest.fixture
    def agent_factory(self) -> AgentFactory:
        """Override: build the agent for a scenario."""
        raise NotImplementedError("subclass RunnerConformance and provide the `agent_factory` fixture")

    @pytest.fixture
    def options(self, tmp_path: Path) -> AgentOptions:
        """Options every scenario uses: a SQLite store in a temp dir and a policy asking before `delete_*`."""
        return AgentOptions(
            store=str(tmp_path / "sessions.sqlite3"), permission_policy=PermissionPolicy(ask=["delete_*"])
        )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in REQUIRED_SCENARIOS:
            if name in cls.__dict__ and not getattr(cls.__dict__[name], _OVERRIDE, None):
                raise TypeError(
                    f"{cls.__qualname__}.{name} replaces a required conformance scenario; set a capability "
                    f"flag to skip what the framework cannot do, or decorate the new test with "
                    f"@conformance_override('why this runner differs')"
                )

    # --- scenarios ---------------------------------------------------------------------------------

    async def test_text(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        async with AcpTestClient.connect(agent_factory("text", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            r = await c.prompt("Say hello.", session_id=sid)
        assert r.stop_reason == "end_turn"
        assert r.text == "Hello from the agent."
        ids = {u.message_id for u in r.updates if isinstance(u, AgentMessageChunk)}
        assert len(ids) == 1 and None not in ids

    async def test_thought(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        if not self.thoughts:
            pytest.skip("the framework does not stream reasoning")
        async with AcpTestClient.connect(agent_factory("thought", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            r = await c.prompt("Think first.", session_id=sid)
        assert r.stop_reason == "end_turn"
        assert r.thoughts.strip()
        assert r.text == "Done thinking."
        assert r.kinds.index("agent_thought_chunk") < r.kinds.index("agent_message_chunk")

    async def test_tool_completed(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        async with AcpTestClient.connect(agent_factory("tool_ok", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            (c.root / "notes.txt").write_text("remember the milk\n")
            r = await c.prompt("Read notes.txt.", session_id=sid)
        assert r.stop_reason == "end_turn"
        (call,) = r.tool_calls.values()
        assert call.title and call.kind == "read"
        assert call.status == "completed"
        assert call.statuses[-1] == "completed" and "failed" not in call.statuses
        start = next(u for u in r.updates if isinstance(u, ToolCallStart))
        assert start.tool_call_id == call.id
        # the arguments in the call as the client holds it: in `tool_call`, or in a later update when
        # the runner announces the call as soon as the model names the tool
        assert call.raw_input == {"path": "notes.txt"}

    async def test_tool_presentation(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        options = dataclasses.replace(
            options,
            tool_presentation={
                "read_*": ToolPresentation(kind="search", title="Look at {path}", locations=("path",), output="code")
            },
        )
        async with AcpTestClient.connect(agent_factory("tool_ok", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            (c.root / "notes.txt").write_text("remember the milk\n")
            r = await c.prompt("Read notes.txt.", session_id=sid)
        assert r.stop_reason == "end_turn"
        (call,) = r.tool_calls.values()
        assert (call.title, call.kind, call.status) == ("Look at notes.txt", "search", "completed")
        assert call.locations == [(str(c.root / "notes.txt"), None)]
        (output,) = call.content
        assert isinstance(output, ContentToolCallContent) and isinstance(output.content, TextContentBlock)
        assert output.content.text.startswith("```text\n") and output.content.text.endswith("\n```")

    async def test_tool_failed(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        async with AcpTestClient.connect(agent_factory("tool_fail", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            r = await c.prompt("Read missing.txt.", session_id=sid)
        assert r.stop_reason == "end_turn"
        (call,) = r.tool_calls.values()
        assert call.status == "failed"

    @pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
    async def test_permission(self, agent_factory: AgentFactory, options: AgentOptions, answer: str) -> None:
        if not self.permissions:
            pytest.skip("the runner does not ask permission")
        async with AcpTestClient.connect(agent_factory("permission", options), permission_answers=[answer]) as c:
            await c.initialize()
            sid = await c.new_session()
            r = await c.prompt("Delete old.txt.", session_id=sid)
        assert r.stop_reason == "end_turn"
        (request,) = r.permission_requests
        (call,) = r.tool_calls.values()
        assert request.tool_call.tool_call_id == call.id
        assert {o.kind for o in request.options} == {"allow_once", "allow_always", "reject_once", "reject_always"}
        assert call.status == ("completed" if answer == "allow_once" else "failed")

    async def test_cancel_mid_tool(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        if not self.cancel_mid_tool:
            pytest.skip("the runner cannot interrupt a tool")
        async with AcpTestClient.connect(agent_factory("cancel_tool", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            task = asyncio.ensure_future(c.prompt("Run the slow tool.", session_id=sid))
            for _ in range(200):
                if any(isinstance(u, ToolCallStart) for u in c.updates[sid]):
                    break
                await asyncio.sleep(0.01)
            started = time.monotonic()
            await c.cancel(sid)
            r = await asyncio.wait_for(task, 5)
            elapsed = time.monotonic() - started
        assert r.stop_reason == "cancelled"
        assert elapsed < 1.0
        (call,) = r.tool_calls.values()
        assert call.status in ("failed", "completed")

    async def test_bad_prompt(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        async with AcpTestClient.connect(agent_factory("bad_prompt", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            bad = ImageContentBlock(type="image", data="not base64!", mime_type="image/png")
            with pytest.raises(RequestError) as info:
                await c.prompt([bad], session_id=sid)
            r = await c.prompt("Say hello.", session_id=sid)
            _, replayed = await c.load_session(sid)
        assert info.value.code == -32602
        assert "prompt[0]" in str(info.value)
        assert r.stop_reason == "end_turn"
        users = [u for u in replayed if isinstance(u, UserMessageChunk)]
        assert len(users) == 1  # the refused prompt left no trace

    async def test_auth_required_before_sessions(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        logins: list[str] = []

        async def login(request: AuthRequest) -> None:
            logins.append(request.method_id)

        method = AgentMethod(id="sso", name="Sign in", login=login)
        guarded = dataclasses.replace(options, auth=Authentication(methods=[method]))
        async with AcpTestClient.connect(agent_factory("text", guarded)) as c:
            init = await c.initialize()
            assert [m.id for m in init.auth_methods or []] == ["sso"]
            with pytest.raises(RequestError) as info:
                await c.new_session()
            assert info.value.code == -32000
            await c.c.authenticate(method_id="sso")
            sid = await c.new_session()
            r = await c.prompt("Say hello.", session_id=sid)
        assert logins == ["sso"]
        assert r.text == "Hello from the agent."

    async def _question(self, agent_factory: AgentFactory, options: AgentOptions, **client: Any) -> Any:
        if not self.questions:
            pytest.skip("the adapter has no hook for tools to ask the user")
        async with AcpTestClient.connect(agent_factory("question", options), **client) as c:
            await c.initialize()
            sid = await c.new_session()
            r = await c.prompt("Ask me for a color.", session_id=sid)
        return c, r

    async def test_question_by_elicitation(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        c, r = await self._question(agent_factory, options, elicitation=True, elicitation_answers=["green"])
        assert r.stop_reason == "end_turn"
        (call,) = r.tool_calls.values()
        (asked,) = c.elicitations
        assert asked["message"] == "Which color?" and asked["toolCallId"] == call.id
        answer = asked["requestedSchema"]["properties"]["answer"]
        assert [o["const"] for o in answer["oneOf"]] == ["red", "green"]
        assert call.status == "completed"
        assert "green" in json.dumps(call.raw_output)
        assert r.permission_requests == []

    async def test_question_by_permission_fallback(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        c, r = await self._question(agent_factory, options, permission_answers=["green"])
        assert r.stop_reason == "end_turn"
        assert c.elicitations == []
        (request,) = r.permission_requests
        assert [o.option_id for o in request.options] == ["red", "green", "acpkit.skip"]
        assert request.tool_call.title == "Which color?"
        call = next(t for t in r.tool_calls.values() if t.id != request.tool_call.tool_call_id)
        assert "green" in json.dumps(call.raw_output)

    async def test_cancel_while_a_question_is_open(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        if not self.questions:
            pytest.skip("the adapter has no hook for tools to ask the user")
        never: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

        def unanswered(params: dict[str, Any]) -> asyncio.Future[str | None]:
            return never

        agent = agent_factory("question", options)
        async with AcpTestClient.connect(agent, elicitation=True, elicitation_answers=unanswered) as c:
            await c.initialize()
            sid = await c.new_session()
            task = asyncio.ensure_future(c.prompt("Ask me for a color.", session_id=sid))
            for _ in range(300):
                if c.elicitations:
                    break
                await asyncio.sleep(0.01)
            assert c.elicitations, "the tool never asked"
            started = time.monotonic()
            await c.cancel(sid)
            r = await asyncio.wait_for(task, 5)
            elapsed = time.monotonic() - started
        assert r.stop_reason == "cancelled"
        assert elapsed < 1.0

    async def test_tools_command(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        """`/tools` on the `permission` agent: kinds and status from core, following the mode.

        A runner that is not a [`ToolLister`][acpkit_core.runner.protocols.ToolLister] does not get `/tools`
        (the default); one that is lists `read_file` and `delete_file` with their kinds, and the
        status of each in the current mode.
        """
        with_modes = dataclasses.replace(options, modes=STANDARD_MODES)
        agent = agent_factory("permission", with_modes)
        async with AcpTestClient.connect(agent) as c:
            await c.initialize()
            sid = await c.new_session()
            commands = [u for u in c.updates[sid] if isinstance(u, AvailableCommandsUpdate)]
            names = {cmd.name for u in commands for cmd in u.available_commands}
            if not isinstance(agent.runner, ToolLister):
                assert "tools" not in names  # no `/tools` without a listing
                return
            assert "tools" in names
            agentic = await c.prompt("/tools", session_id=sid)
            await c.set_mode(sid, "readonly")
            readonly = await c.prompt("/tools", session_id=sid)
        lines = agentic.text.splitlines()
        assert lines[0].startswith("Tools the model can call in mode agentic: ")
        assert any(line.startswith("- `read_file` (read) — allowed") for line in lines)
        assert any(line.startswith("- `delete_file` (delete) — asks first") for line in lines)  # the policy asks
        lines = readonly.text.splitlines()
        assert lines[0].startswith("Tools the model can call in mode readonly: ")
        assert any(line.startswith("- `read_file` (read) — allowed") for line in lines)
        assert any(line.startswith("- `delete_file` (delete) — off in mode readonly") for line in lines)
        assert agentic.permission_requests == [] and agentic.tool_calls == {}  # listing runs no tool

    # --- ACP 1.17 to 1.21 -----------------------------------------------------------------------------

    async def test_cancel_request_for_a_running_prompt(
        self, agent_factory: AgentFactory, options: AgentOptions
    ) -> None:
        """`$/cancel_request` for the `session/prompt` ends the turn `cancelled`, as `session/cancel` does."""
        if not self.cancel_mid_tool:
            pytest.skip("the runner cannot interrupt a tool")
        async with AcpTestClient.connect(agent_factory("cancel_tool", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            task = asyncio.ensure_future(c.prompt("Run the slow tool.", session_id=sid))
            for _ in range(200):
                if any(isinstance(u, ToolCallStart) for u in c.updates[sid]):
                    break
                await asyncio.sleep(0.01)
            (prompt_id,) = c.pending_requests("session/prompt")
            started = time.monotonic()
            await c.cancel_request(prompt_id)
            r = await asyncio.wait_for(task, 5)
            elapsed = time.monotonic() - started
        assert r.stop_reason == "cancelled"
        assert elapsed < 1.0
        (call,) = r.tool_calls.values()
        assert call.status in ("failed", "completed")

    async def test_a_cancelled_turn_cancels_its_open_question(
        self, agent_factory: AgentFactory, options: AgentOptions
    ) -> None:
        """The agent's own pending request (the question) gets `$/cancel_request` and answers -32800."""
        if not self.questions:
            pytest.skip("the adapter has no hook for tools to ask the user")
        never: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

        def unanswered(params: dict[str, Any]) -> asyncio.Future[str | None]:
            return never

        agent = agent_factory("question", options)
        async with AcpTestClient.connect(agent, elicitation=True, elicitation_answers=unanswered) as c:
            await c.initialize()
            sid = await c.new_session()
            task = asyncio.ensure_future(c.prompt("Ask me for a color.", session_id=sid))
            for _ in range(300):
                if c.elicitations:
                    break
                await asyncio.sleep(0.01)
            (prompt_id,) = c.pending_requests("session/prompt")
            await c.cancel_request(prompt_id)
            r = await asyncio.wait_for(task, 5)
            for _ in range(100):
                if c.cancels_received:
                    break
                await asyncio.sleep(0.01)
        assert r.stop_reason == "cancelled"
        assert [x.method for x in c.cancels_received] == ["elicitation/create"]

    async def test_question_by_the_developers_fallback(
        self, agent_factory: AgentFactory, options: AgentOptions
    ) -> None:
        """`ask_fallback` answers a question the client cannot be asked: neither elicitation nor permission."""
        if not self.questions:
            pytest.skip("the adapter has no hook for tools to ask the user")
        asked: list[Question] = []

        async def fallback(question: Question, turn: Turn) -> Answer | None:
            asked.append(question)
            return Answer(outcome="answered", value="green", via="fallback")

        with_fallback = dataclasses.replace(options, ask_fallback=fallback)
        async with AcpTestClient.connect(agent_factory("question", with_fallback)) as c:
            await c.initialize()
            sid = await c.new_session()
            r = await c.prompt("Ask me for a color.", session_id=sid)
        assert r.stop_reason == "end_turn"
        assert c.elicitations == [] and r.permission_requests == []
        (question,) = asked
        assert question.message == "Which color?" and [ch.value for ch in question.choices or ()] == ["red", "green"]
        call = next(t for t in r.tool_calls.values() if t.id == question.tool_call_id)
        assert "green" in json.dumps(call.raw_output)

    async def test_show_thinking_off_hides_reasoning(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        """The `show_thinking` boolean option (ACP 1.18 boolean options): off, no thought chunks reach the client."""
        if not self.thoughts:
            pytest.skip("the framework does not stream reasoning")
        with_switch = dataclasses.replace(options, config_options=[show_thinking_option()])
        async with AcpTestClient.connect(agent_factory("thought", with_switch), boolean_options=True) as c:
            await c.initialize()
            sid = await c.new_session()
            await c.set_config_option(sid, "show_thinking", False)
            r = await c.prompt("Think first.", session_id=sid)
        assert r.stop_reason == "end_turn"
        assert r.text == "Done thinking."
        assert not any(isinstance(u, AgentThoughtChunk) for u in r.updates)

    async def test_logout_ends_authentication(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        """`logout` (ACP 1.21): advertised with `auth=`, and sessions answer -32000 again after it."""

        async def login(request: AuthRequest) -> None:
            return None

        method = AgentMethod(id="sso", name="Sign in", login=login)
        guarded = dataclasses.replace(options, auth=Authentication(methods=[method]))
        async with AcpTestClient.connect(agent_factory("text", guarded)) as c:
            init = await c.initialize()
            await c.authenticate("sso")
            sid = await c.new_session()
            await c.logout()
            with pytest.raises(RequestError) as info:
                await c.prompt("Say hello.", session_id=sid)
        caps = init.agent_capabilities
        assert caps is not None and caps.auth is not None and caps.auth.logout is not None
        assert info.value.code == -32000

    async def test_delete_of_an_unknown_session_succeeds(
        self, agent_factory: AgentFactory, options: AgentOptions
    ) -> None:
        async with AcpTestClient.connect(agent_factory("text", options)) as c:
            await c.initialize()
            await c.delete_session("never-created")
            sid = await c.new_session()
            r = await c.prompt("Say hello.", session_id=sid)
        assert r.text == "Hello from the agent."


REQUIRED_SCENARIOS = frozenset(name for name in dir(RunnerConformance) if name.startswith("test_"))
"""The scenarios every runner runs (a subclass may not redefine them without a reason)."""
