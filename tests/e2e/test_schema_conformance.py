"""Every message over real stdio, for every flow the test client has, validated against the ACP schema.

The agents are the three examples (`pydantic_agent.py`, `langgraph_agent.py`, `echo_runner.py`) and
the core's scripted test agent (for the flows no example has: authentication, questions, links,
terminals). Each is driven through everything `AcpTestClient` can do, twice:

- as a plain v1 client: every message, both ways, must follow the stable `schema.json` with no
  field the schema does not name (`acp_schema.StrictSchema`);
- as a client that opted into every unstable surface: the same against `schema.unstable.json`.

Then every method and update the docs' support page marks `yes` (plain run) or `negotiated`
(opted-in run) must have gone over the wire: the page cannot claim what the agents do not do.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp.schema import EmbeddedResourceContentBlock, ResourceContentBlock, TextResourceContents
from acp_schema import Direction, StrictSchema
from acpkit_core.testing import AcpTestClient
from editor_mcp import editor_words

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCRIPTED = Path(__file__).parent / "agents" / "scripted_agent.py"
MCP_OVER_ACP = Path(__file__).parent / "agents" / "mcp_acp_agents.py"


def _protocol_page() -> Any:
    spec = importlib.util.spec_from_file_location("protocol_page", ROOT / "docs/hooks/protocol_page.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class Agent:
    command: list[str]
    prompts: list[str]
    """Prompts of the main flow (the first one gets attachments)."""
    cancel_prompt: str
    """A prompt that asks or runs something a cancel can interrupt."""
    env: dict[str, str] = field(default_factory=dict[str, str])


def _scripted(root: Path) -> Agent:
    notes, out = root / "notes.txt", root / "out.txt"
    return Agent(
        command=[sys.executable, str(SCRIPTED), "--store", "memory", "--modes", "--auth"],
        env={"ACME_API_KEY": "k-1"},
        prompts=[
            "think first\nsay hello\nplan read | answer\nnotice warning Disk almost full | 90% used\n"
            "showplan design md ## Steps\ndropplan design\ncompact Kept: the notes.\n"
            f'tool read_file ok {{"path": "{notes}"}}\nusage 10 5 1000\nask delete_file\n'
            f"read {notes}\nwrite {out} written\nrun echo hi\nrun timeout=0.3 sleep 5",
            'question {"text": "Which color?", "choices": ["red", "green"]}',
            'question {"text": "Sign in", "url": "https://acme.example/in", "complete": true}',
            "/mode readonly",
        ],
        cancel_prompt="ask delete_file\nrun sleep 30",
    )


AGENTS: dict[str, Callable[[Path], Agent]] = {
    "pydantic example": lambda root: Agent(
        command=[sys.executable, str(EXAMPLES / "pydantic_agent.py")],
        env={"ACPKIT_MODEL": ""},
        prompts=["Summarise notes.txt", "/tools"],
        cancel_prompt="Summarise notes.txt",
    ),
    "langgraph example": lambda root: Agent(
        command=[sys.executable, str(EXAMPLES / "langgraph_agent.py")],
        env={"ACPKIT_MODEL": ""},
        prompts=["Summarise notes.txt", "/tools"],
        cancel_prompt="Summarise notes.txt",
    ),
    "echo_runner example": lambda root: Agent(
        command=[sys.executable, str(EXAMPLES / "echo_runner.py")],
        prompts=["hello", "count notes.txt", "/tools"],
        cancel_prompt="count notes.txt",
    ),
    "scripted agent": _scripted,
    # MCP over ACP: a tool of the MCP server the client serves (opted in; a plain client gives none)
    "mcp-over-acp agent": lambda root: Agent(
        command=[sys.executable, str(MCP_OVER_ACP), "pydantic"],
        prompts=["look up ketchup"],
        cancel_prompt="look up ketchup",
    ),
}


class Answers:
    """Permission answers: `allow_once`, except while `hold` is set (the question stays open)."""

    def __init__(self) -> None:
        self.hold = False

    async def __call__(self, request: Any) -> str:
        if self.hold:
            await asyncio.Event().wait()
        return "allow_once"


async def _until(check: Callable[[], object], seconds: float) -> None:
    for _ in range(int(seconds * 100)):
        if check():
            return
        await asyncio.sleep(0.01)


async def drive(agent: Agent, root: Path, *, opted_in: bool) -> list[tuple[Direction, dict[str, Any]]]:
    """Every flow of the test client against `agent`; the whole exchange."""
    answers = Answers()
    (root / "notes.txt").write_text("buy milk\nwalk the dog\n")
    extra = root / "extra"
    extra.mkdir(exist_ok=True)
    async with AcpTestClient.spawn(
        *agent.command,
        root=root,
        env=agent.env,
        permission_answers=answers,
        boolean_options=True,
        elicitation=True,
        elicitation_url=True,
        elicitation_answers=["red", "ok"],
        auth_terminal=True,
        unstable=opted_in,
    ) as c:
        init = await c.initialize()
        methods = [m for m in init.auth_methods or [] if getattr(m, "type", None) != "terminal"]
        if methods:
            await c.authenticate(methods[0].id)
        served = [c.serve_mcp(editor_words(), name="words")] if opted_in else []
        sid = await c.new_session(additional_directories=[str(extra)], mcp_servers=served)
        session = c.last_session
        assert session is not None
        if session.modes is not None:
            await c.set_mode(sid, "interactive")
        for option in session.config_options or []:
            if option.type == "boolean":
                await c.set_config_option(sid, option.id, not option.current_value)
                await c.set_config_option(sid, option.id, option.current_value)
            elif option.id != "mode":
                await c.set_config_option(sid, option.id, option.current_value)
        todo = TextResourceContents(uri=(root / "todo.md").as_uri(), text="- ship it", mime_type="text/markdown")
        attachments = [
            ResourceContentBlock(type="resource_link", name="notes.txt", uri=(root / "notes.txt").as_uri()),
            EmbeddedResourceContentBlock(type="resource", resource=todo),
        ]
        for n, prompt in enumerate(agent.prompts):
            await c.prompt(prompt, session_id=sid, attachments=attachments if n == 0 else ())
        # session/cancel while the turn waits on the client (a permission question, a command)
        answers.hold = True
        asked = len(c.permission_requests)
        turn = asyncio.ensure_future(c.prompt(agent.cancel_prompt, session_id=sid))
        await _until(lambda: len(c.permission_requests) > asked, 5)
        await c.cancel(sid)
        await asyncio.wait_for(turn, 10)
        # $/cancel_request for a running prompt (the agent then cancels what it asked the client)
        answers.hold = False
        turn = asyncio.ensure_future(c.prompt(agent.cancel_prompt.split("\n")[-1], session_id=sid))
        await _until(lambda: c.pending_requests("session/prompt") and len(c.requests) > 0, 5)
        await asyncio.sleep(0.3)
        for request_id in c.pending_requests("session/prompt"):
            await c.cancel_request(request_id)
        await asyncio.wait_for(turn, 10)
        if opted_in:  # custom LLM endpoints, after the last turn (no turn reaches the endpoint)
            listed = await c.providers_list()
            for provider in listed["providers"]:
                url = "http://127.0.0.1:9/v1"
                params = {"providerId": provider["providerId"], "apiType": provider["supported"][0], "baseUrl": url}
                await c.providers_set({**params, "headers": {"Authorization": "Bearer k"}})
            await c.providers_disable("no-such-provider")
        await c.list_sessions()
        await c.load_session(sid)
        await c.resume_session(sid)
        if opted_in:
            await c.fork_session(sid)
        await c.close_session(sid)
        await c.delete_session(sid)
        await c.delete_session("no-such-session")
        if methods:
            await c.logout()
        await asyncio.sleep(0.1)  # notifications that trail an answer
    return list(c.wire)


def exercised(wire: list[tuple[Direction, dict[str, Any]]]) -> set[str]:
    """The support-page keys an exchange exercised (methods by side, update kinds)."""
    keys: set[str] = set()
    for direction, message in wire:
        method = message.get("method")
        if not isinstance(method, str) or method.startswith("_"):
            continue
        if method == "$/cancel_request":
            keys.add(f"protocol:{method}:{direction}")  # both ways are required
            continue
        keys.add(f"{'agent' if direction == 'sent' else 'client'}:{method}")
        if method == "session/update":
            keys.add(f"update:{message['params']['update']['sessionUpdate']}")
    return keys


@pytest.mark.parametrize("opted_in", [False, True], ids=["plain v1 client", "opted into unstable surfaces"])
async def test_every_message_follows_the_schema_and_the_support_page_holds(opted_in: bool, tmp_path: Path) -> None:
    schema = StrictSchema("schema.unstable.json" if opted_in else "schema.json")
    problems: list[str] = []
    keys: set[str] = set()
    roots = {name: tmp_path / name.replace(" ", "-") for name in AGENTS}
    for root in roots.values():
        root.mkdir()
    # the agents are separate processes with separate roots: driven side by side
    wires = await asyncio.gather(
        *(drive(make(roots[name]), roots[name], opted_in=opted_in) for name, make in AGENTS.items())
    )
    for name, wire in zip(AGENTS, wires, strict=True):
        found, _ = schema.check(wire)
        problems += [f"[{name}] {p}" for p in found]
        keys |= exercised(wire)
    assert problems == [], "\n".join(problems[:20])
    page = _protocol_page()
    wanted = {"negotiated"} if opted_in else {"yes"}
    claimed = {k for k, (support, _) in page.STATUS.items() if support in wanted}
    claimed = {f"{k}:{d}" for k in claimed if k.startswith("protocol:") for d in ("sent", "received")} | {
        k for k in claimed if not k.startswith("protocol:")
    }
    assert sorted(claimed - keys) == [], "the support page claims what no agent did over the wire"


def test_the_strict_schema_catches_a_custom_field_at_the_root_of_a_spec_type() -> None:
    """The check itself: what ACP Kit used to send, and a field the schema does not name, fail."""
    stable, unstable = StrictSchema("schema.json"), StrictSchema("schema.unstable.json")
    usage = {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4}
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn", "usage": usage}}
    prompt = {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}
    wire: list[tuple[Direction, dict[str, Any]]] = [("sent", prompt), ("received", answer)]
    (problem,) = stable.check(wire)[0]
    assert problem.type_name == "PromptResponse" and "'usage' was unexpected" in problem.errors[0]
    assert unstable.check(wire)[0] == []  # where it is negotiated, `usage` is the schema's
    init = {"protocolVersion": 1, "agentCapabilities": {"mcpCapabilities": {"http": False, "acp": False}}}
    assert "'acp' was unexpected" in json.dumps(stable.errors("InitializeResponse", init))
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x", "bold": True}}
    assert stable.errors("SessionNotification", {"sessionId": "s", "update": chunk})
    meta = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x", "_meta": {"bold": True}}}
    assert stable.errors("SessionNotification", {"sessionId": "s", "update": meta}) == []
