"""The conformance scenarios of what a client negotiates: usage in the prompt answer, tool-call
names, plan operations, notices, MCP over ACP, custom LLM endpoints. A base class of
[`RunnerConformance`][acpkit_core.testing.conformance.RunnerConformance], which is the class to
subclass; its capability flags `usage`, `limits` and `mcp_servers` are declared here.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import pytest
from acp import RequestError
from acp.schema import AgentMessageChunk, AgentPlanContentUpdate, AgentPlanUpdate, UsageUpdate

from ..client.unstable_updates import NamedToolCallStart
from ..config import AgentOptions
from ..runner.notices import NOTICE_META_KEY
from ..runner.stop import request_limit_message
from ..runner.types import PlanItem, Session
from .client import AcpTestClient
from .conformance_memory import AgentFactory

__all__ = ["NegotiatedScenarios"]


def _editor_words() -> Any:
    """The MCP server of the MCP-over-ACP scenarios: `lookup_word(word)` (needs the `mcp` package)."""
    from mcp.server import MCPServer

    server = MCPServer("editor-words")

    @server.tool()
    def lookup_word(word: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Look a word up in the editor's dictionary."""
        return f"{word}: a word the editor knows"

    return server


class NegotiatedScenarios:
    """The conformance scenarios of what a client negotiates (subclass `RunnerConformance`, not this)."""

    usage: ClassVar[bool] = True
    """The runner reports token usage after each model response (`turn.emit.usage`)."""

    mcp_servers: ClassVar[bool] = True
    """The runner connects the session's MCP servers (`session.mcp_servers`) and offers their tools (`mcp`)."""

    limits: ClassVar[bool] = True
    """The runner stops at `turn.max_requests` model requests (`max_turn_requests`)."""

    @pytest.mark.parametrize("negotiated", [False, True])
    async def test_context_meter_and_prompt_usage(
        self, agent_factory: AgentFactory, options: AgentOptions, negotiated: bool
    ) -> None:
        """`usage_update` during the turn; the answer's usage under `_meta`, or at its root when negotiated."""
        if not self.usage:
            pytest.skip("the runner does not report token usage")
        windowed = dataclasses.replace(options, context_window=50_000)
        async with AcpTestClient.connect(agent_factory("text", windowed), unstable=["promptUsage"] * negotiated) as c:
            await c.initialize()
            sid = await c.new_session()
            r = await c.prompt("Say hello.", session_id=sid)
        meters = [u for u in r.updates if isinstance(u, UsageUpdate)]
        assert meters and all(m.used > 0 and m.size > 0 for m in meters)
        answer = next(m["result"] for d, m in c.wire if d == "received" and "stopReason" in (m.get("result") or {}))
        if negotiated:
            assert answer["usage"]["totalTokens"] > 0
        else:
            assert "usage" not in answer and answer["_meta"]["acpkit.usage"]["totalTokens"] > 0

    @pytest.mark.parametrize("negotiated", [False, True])
    async def test_tool_call_name_where_negotiated(
        self, agent_factory: AgentFactory, options: AgentOptions, negotiated: bool
    ) -> None:
        """The tool's `name` in `tool_call` for a client with `toolCallName`; never at the root otherwise."""
        async with AcpTestClient.connect(
            agent_factory("tool_ok", options), unstable=["toolCallName"] * negotiated
        ) as c:
            await c.initialize()
            sid = await c.new_session()
            (c.root / "notes.txt").write_text("remember the milk\n")
            r = await c.prompt("Read notes.txt.", session_id=sid)
        (call,) = r.tool_calls.values()
        start = next(u for u in r.updates if isinstance(u, NamedToolCallStart))
        assert call.name == ("read_file" if negotiated else None) and start.name == call.name
        sent = [m["params"]["update"] for d, m in c.wire if d == "received" and m.get("method") == "session/update"]
        assert negotiated or all("name" not in u for u in sent if u["sessionUpdate"].startswith("tool_call"))

    @pytest.mark.parametrize("negotiated", [False, True])
    async def test_plan_operations_where_negotiated(
        self, agent_factory: AgentFactory, options: AgentOptions, negotiated: bool
    ) -> None:
        """A host plan (`options.plan_provider`) as `plan_update` (plan `main`) where negotiated, else `plan`."""

        class HostPlan:
            async def get_plan(self, session: Session) -> list[PlanItem]:
                return [PlanItem(content="say hello", status="in_progress")]

        planned = dataclasses.replace(options, plan_provider=HostPlan())
        async with AcpTestClient.connect(agent_factory("text", planned), unstable=["planOperations"] * negotiated) as c:
            await c.initialize()
            sid = await c.new_session()
            r = await c.prompt("Say hello.", session_id=sid)
        updates = [*c.updates[sid]]
        assert r.text == "Hello from the agent."
        if negotiated:
            ops = [u for u in updates if isinstance(u, AgentPlanContentUpdate)]
            assert ops and not any(isinstance(u, AgentPlanUpdate) for u in updates)
            assert ops[-1].plan.plan_id == "main" and ops[-1].plan.type == "items"
            assert [e.content for e in ops[-1].plan.entries] == ["say hello"]  # type: ignore[union-attr]
        else:
            plans = [u for u in updates if isinstance(u, AgentPlanUpdate)]
            assert plans and [e.content for e in plans[-1].entries] == ["say hello"]
            assert not any(isinstance(u, AgentPlanContentUpdate) for u in updates)

    @pytest.mark.parametrize("negotiated", [False, True])
    async def test_a_limit_reached_is_a_notice(
        self, agent_factory: AgentFactory, options: AgentOptions, negotiated: bool
    ) -> None:
        """`max_turn_requests=1` stops `tool_ok` before its second model request: a `notice` where
        `sessionNotices` is negotiated (not in the answer), else the limit's message as its own message."""
        if not self.limits:
            pytest.skip("the runner does not count its model requests")
        limited = dataclasses.replace(options, max_turn_requests=1)
        async with AcpTestClient.connect(
            agent_factory("tool_ok", limited), unstable=["sessionNotices"] * negotiated
        ) as c:
            await c.initialize()
            sid = await c.new_session()
            (c.root / "notes.txt").write_text("remember the milk\n")
            r = await c.prompt("Read notes.txt.", session_id=sid)
        message = request_limit_message(1)
        assert r.stop_reason == "max_turn_requests"
        if negotiated:
            assert [(n.severity, n.title, n.description) for n in r.notices] == [
                ("warning", "Turn limit reached", message)
            ]
            assert message not in r.text
        else:
            assert r.notices == [] and r.text.endswith(message)
            tagged = [u for u in r.updates if isinstance(u, AgentMessageChunk) and u.field_meta]
            assert [u.field_meta["acpkit"][NOTICE_META_KEY]["title"] for u in tagged if u.field_meta] == [
                "Turn limit reached"
            ]

    async def test_mcp_over_acp_needs_negotiation(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        """MCP over ACP (unstable) is offered only to a client that opted into `mcpOverAcp`: a plain
        client is not told `mcpCapabilities.acp`, and its ACP-transport server is refused (-32602)."""
        async with AcpTestClient.connect(agent_factory("text", options)) as c:
            init = await c.initialize()
            entry = c.serve_mcp(_editor_words(), name="words")
            with pytest.raises(RequestError) as refused:
                await c.new_session(mcp_servers=[entry])
        caps = init.agent_capabilities
        assert caps is not None and caps.mcp_capabilities is not None and not caps.mcp_capabilities.acp
        assert refused.value.code == -32602 and "mcpServers[0]" in (refused.value.data or {})
        assert c.mcp.connections == {}

    async def test_mcp_over_acp(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        """The `mcp` agent calls `lookup_word` of an MCP server the client serves over ACP, connected
        like any of the session's MCP servers ([`ClientMcpServer`][acpkit_core.runner.types.ClientMcpServer])."""
        if not self.mcp_servers:
            pytest.skip("the runner does not connect the session's MCP servers")
        async with AcpTestClient.connect(agent_factory("mcp", options), unstable=["mcpOverAcp"]) as c:
            init = await c.initialize()
            entry = c.serve_mcp(_editor_words(), name="words")
            sid = await c.new_session(mcp_servers=[entry])
            r = await c.prompt("Look up ketchup.", session_id=sid)
            await c.close_session(sid)
        caps = init.agent_capabilities
        assert caps is not None and caps.mcp_capabilities is not None and caps.mcp_capabilities.acp
        assert r.stop_reason == "end_turn"
        (call,) = r.tool_calls.values()
        assert call.status == "completed" and call.raw_input == {"word": "ketchup"}
        (connection,) = c.mcp.connections.values()
        assert connection.server_id == entry.server_id and "tools/call" in connection.methods
        assert connection.disconnected  # closing the session closed its MCP connection (`mcp/disconnect`)

    async def test_custom_llm_endpoint(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        """`providers/*` (unstable): only for a client that opted into `providers`. A runner that can swap
        its model ([`ModelEndpoints`][acpkit_core.runner.providers.ModelEndpoints]) lists `main` and, once the
        client set an endpoint, runs the `text` turn there (here a closed port: the turn fails -32603);
        any other is not advertised the capability, lists nothing and refuses `providers/set` (-32602)."""
        async with AcpTestClient.connect(agent_factory("text", options)) as plain:
            await plain.initialize()
            with pytest.raises(RequestError) as hidden:
                await plain.providers_list()
        assert hidden.value.code == -32601
        closed = {"providerId": "main", "baseUrl": "http://127.0.0.1:9/v1", "headers": {"Authorization": "Bearer k"}}
        async with AcpTestClient.connect(agent_factory("text", options), unstable=["providers"]) as c:
            init = await c.initialize()
            listed = await c.providers_list()
            sid = await c.new_session()
            caps = init.agent_capabilities
            assert caps is not None
            if not listed["providers"]:  # the runner cannot swap its model: refused, with the reason
                assert caps.providers is None
                with pytest.raises(RequestError) as refused:
                    await c.providers_set({**closed, "apiType": "openai"})
                assert refused.value.code == -32602
                return
            assert caps.providers is not None
            (main,) = listed["providers"]
            assert (main["providerId"], main["required"]) == ("main", True) and main["supported"]
            await c.providers_set({**closed, "apiType": main["supported"][0]})
            assert (await c.providers_list())["providers"][0]["current"]["baseUrl"] == closed["baseUrl"]
            with pytest.raises(RequestError) as failed:
                await c.prompt("Say hello.", session_id=sid)
        assert failed.value.code == -32603  # the model call went to the client's (closed) endpoint
