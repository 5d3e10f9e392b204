"""The conformance scenarios about a session's memory: a restart, `/rewind`, `/retry`, fork at a
prompt. A base class of [`RunnerConformance`][acpkit_core.testing.conformance.RunnerConformance],
which is the class to subclass; its capability flags `history` and `rewind` are declared here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import pytest
from acp.schema import AgentMessageChunk, UserMessageChunk

from ..config import AgentOptions
from ..server import AcpAgent
from .client import AcpTestClient

__all__ = ["AgentFactory", "MemoryScenarios"]


AgentFactory = Callable[[str, AgentOptions], AcpAgent]
"""`(scenario, options) -> AcpAgent`."""


class MemoryScenarios:
    """The memory scenarios of the conformance suite (subclass `RunnerConformance`, not this)."""

    history: ClassVar[bool] = True
    """The framework's history survives a restart (`memory`)."""

    rewind: ClassVar[bool] = True
    """The framework's memory goes back with the session (`/rewind`, `/retry`, fork at a prompt)."""

    async def test_load_after_restart(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        async with AcpTestClient.connect(agent_factory("memory", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            first = await c.prompt("My name is Ada.", session_id=sid)
        assert first.stop_reason == "end_turn"
        async with AcpTestClient.connect(agent_factory("memory", options)) as c:
            await c.initialize()
            _, replayed = await c.load_session(sid)
            user = "".join(
                u.content.text for u in replayed if isinstance(u, UserMessageChunk) and u.content.type == "text"
            )
            agent = "".join(
                u.content.text for u in replayed if isinstance(u, AgentMessageChunk) and u.content.type == "text"
            )
            assert user == "My name is Ada."
            assert agent == first.text
            second = await c.prompt("What is my name?", session_id=sid)
        assert second.stop_reason == "end_turn"
        if self.history:
            assert "Ada" in second.text

    async def test_rewind(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        """`/rewind 1`: the next answer comes from a conversation without the first prompt, after a restart too."""
        if not self.rewind:
            pytest.skip("the runner's memory does not go back with the session")
        async with AcpTestClient.connect(agent_factory("memory", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            await c.prompt("My name is Ada.", session_id=sid)
            knows = await c.prompt("What is my name?", session_id=sid)
            rewound = await c.prompt("/rewind 1", session_id=sid)
            forgot = await c.prompt("What is my name?", session_id=sid)
        assert rewound.text.startswith('Rewound to before prompt 1 ("My name is Ada."): undid 2 prompts.')
        assert "Ada" not in forgot.text
        async with AcpTestClient.connect(agent_factory("memory", options)) as c:
            await c.initialize()
            _, replayed = await c.load_session(sid)
            still = await c.prompt("What is my name?", session_id=sid)
        assert [u.content.text for u in replayed if isinstance(u, UserMessageChunk)] == ["What is my name?"]
        assert "Ada" not in still.text
        if self.history:
            assert "Ada" in knows.text

    async def test_retry(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        """`/retry` sends the last prompt again, on the conversation before it; it is kept once."""
        if not self.rewind:
            pytest.skip("the runner's memory does not go back with the session")
        async with AcpTestClient.connect(agent_factory("memory", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            await c.prompt("My name is Ada.", session_id=sid)
            first = await c.prompt("What is my name?", session_id=sid)
            again = await c.prompt("/retry", session_id=sid)
            _, replayed = await c.load_session(sid)
        assert again.stop_reason == "end_turn"
        assert again.text.startswith('Rewound to before prompt 2 ("What is my name?"): undid prompt.')
        said = [u.content.text for u in replayed if isinstance(u, UserMessageChunk)]
        assert said == ["My name is Ada.", "What is my name?"]
        if self.history:
            assert "Ada" in first.text and again.text.endswith(first.text)

    async def test_fork_at_a_prompt(self, agent_factory: AgentFactory, options: AgentOptions) -> None:
        """`session/fork` at prompt 2 keeps prompt 1; at prompt 1, nothing; the original is left as it was."""
        if not self.rewind:
            pytest.skip("the runner's memory does not go back with the session")
        async with AcpTestClient.connect(agent_factory("memory", options)) as c:
            await c.initialize()
            sid = await c.new_session()
            await c.prompt("My name is Ada.", session_id=sid)
            await c.prompt("Nice weather.", session_id=sid)
            kept = await c.fork_session(sid, prompt=2)
            empty = await c.fork_session(sid, prompt=1)
            in_kept = await c.prompt("What is my name?", session_id=kept)
            in_empty = await c.prompt("What is my name?", session_id=empty)
            _, replayed = await c.load_session(kept)
            _, original = await c.load_session(sid)
        said = [u.content.text for u in replayed if isinstance(u, UserMessageChunk)]
        assert said == ["My name is Ada.", "What is my name?"]
        assert [u.content.text for u in original if isinstance(u, UserMessageChunk)] == [
            "My name is Ada.",
            "Nice weather.",
        ]
        assert "Ada" not in in_empty.text
        if self.history:
            assert "Ada" in in_kept.text
