"""Rewind with langchain-acp over real stdio: the LangGraph thread taken back to the checkpoint the
prompt started from, the files the tool's diffs changed put back (issue 26's "done means",
`tests/rewind_scenario.py`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient
from fake_model import FakeChatModel, Reply
from langchain.agents import create_agent
from langchain_acp import create_acp_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.memory import InMemorySaver
from rewind_scenario import run_rewind_scenario

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

APP = str(Path(__file__).with_name("lc_rewind_app.py"))


async def test_rewind_retry_and_fork_over_stdio(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    await run_rewind_scenario([sys.executable, APP], root)


# --- in process: the graph's own checkpointer, one that cannot go back, Postgres, forks of forks ----------


def _recall(messages: list[BaseMessage]) -> Reply:
    said = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
    return Reply(text="heard: " + " | ".join(said))


def _agent(store: str, checkpointer: BaseCheckpointSaver[Any] | None = None) -> AcpAgent:
    graph = create_agent(FakeChatModel(script=[_recall], repeat_last=True), tools=[], checkpointer=checkpointer)
    return create_acp_agent(graph, store=store)


class LatestOnlySaver(InMemorySaver):
    """Keeps only the newest checkpoint of each thread, as a "shallow" saver does."""

    def put(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: Any
    ) -> RunnableConfig:
        saved = super().put(config, checkpoint, metadata, new_versions)
        configurable = config.get("configurable", {})
        kept = self.storage[configurable["thread_id"]][configurable["checkpoint_ns"]]
        for checkpoint_id in [k for k in kept if k != checkpoint["id"]]:
            del kept[checkpoint_id]
        return saved


class NoMetadataSaver(InMemorySaver):
    """Drops the metadata a run's config carries."""

    def put(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: Any
    ) -> RunnableConfig:
        return super().put({"configurable": config.get("configurable", {})}, checkpoint, metadata, new_versions)


async def _three_turns(c: AcpTestClient, sid: str) -> None:
    for word in ("one", "two", "three"):
        r = await c.prompt(word, session_id=sid)
        assert r.stop_reason == "end_turn"


async def test_the_graphs_own_checkpointer_goes_back_too() -> None:
    saver = InMemorySaver()
    async with AcpTestClient.connect(_agent("memory", saver)) as c:
        await c.initialize()
        sid = await c.new_session()
        await _three_turns(c, sid)
        rewound = await c.prompt("/rewind 2", session_id=sid)
        after = await c.prompt("four", session_id=sid)
    assert rewound.text == 'Rewound to before prompt 2 ("two"): undid 2 prompts.'
    assert after.text == "heard: one | four"
    assert saver.storage  # the graph's own saver, not the embedded one


@pytest.mark.parametrize(
    ("saver", "reason"),
    [
        (
            LatestOnlySaver(),
            "the graph's checkpointer (LatestOnlySaver) no longer has the checkpoint prompt 2 started from: "
            "it keeps only recent checkpoints",
        ),
        (
            NoMetadataSaver(),
            "the graph's checkpointer (NoMetadataSaver) does not keep the runs' metadata, so the checkpoint "
            "before prompt 2 cannot be found",
        ),
    ],
    ids=["latest-only", "no-metadata"],
)
async def test_a_checkpointer_that_cannot_go_back_is_refused_clearly(saver: InMemorySaver, reason: str) -> None:
    async with AcpTestClient.connect(_agent("memory", saver)) as c:
        await c.initialize()
        sid = await c.new_session()
        await _three_turns(c, sid)
        refused = await c.prompt("/rewind 2", session_id=sid)
        after = await c.prompt("four", session_id=sid)
        prompts = await c.prompts(sid)
    assert refused.text == f"Cannot rewind: {reason}"
    assert after.text == "heard: one | two | three | four"  # nothing was taken back
    assert len(prompts) == 4


async def test_rewind_on_postgres_is_seen_by_another_replica(postgres_url: str) -> None:
    """The session store and the embedded LangGraph saver both in Postgres; two agent processes' worth of agents."""
    async with AcpTestClient.connect(_agent(postgres_url)) as c, AcpTestClient.connect(_agent(postgres_url)) as other:
        await c.initialize()
        await other.initialize()
        sid = await c.new_session()
        await _three_turns(c, sid)
        await other.resume_session(sid)
        rewound = await other.prompt("/rewind 3", session_id=sid)
        here = await c.prompt("four", session_id=sid)
        there = await other.prompt("five", session_id=sid)
    assert rewound.text.startswith("Rewound to before prompt 3")
    assert here.text == "heard: one | two | four"
    assert there.text == "heard: one | two | four | five"


async def test_forks_of_forks_go_back_into_their_parents_threads(tmp_path: Path) -> None:
    async with AcpTestClient.connect(_agent(str(tmp_path / "s.sqlite3"))) as c:
        await c.initialize()
        sid = await c.new_session()
        await _three_turns(c, sid)
        child = await c.fork_session(sid)
        in_child = await c.prompt("child", session_id=child)
        grandchild = await c.fork_session(child, prompt=2)  # prompt 2 ran in the grandparent's thread
        in_grandchild = await c.prompt("grandchild", session_id=grandchild)
        back = await c.prompt("/rewind 3", session_id=child)  # undoes `three` (the parent's) and `child`
        in_child_again = await c.prompt("again", session_id=child)
        original = await c.prompt("four", session_id=sid)
    assert in_child.text == "heard: one | two | three | child"
    assert in_grandchild.text == "heard: one | grandchild"
    assert back.text.startswith("Rewound to before prompt 3") and "undid 2 prompts" in back.text
    assert in_child_again.text == "heard: one | two | again"
    assert original.text == "heard: one | two | three | four"
