"""Rewind in core, for every runner: `/rewind`, `/retry`, fork at a prompt, the extension, the files.

The runner here is core's `ScriptedRunner` (its `history` prompt says every earlier prompt it kept in
`session.state`: what the "model" continues from) and a subclass that edits files itself, showing
each edit as a diff, as an agent's own edit tools do. Everything goes over a real ACP connection.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    AvailableCommandsUpdate,
    FileEditToolCallContent,
    UserMessageChunk,
)
from acpkit_core import AcpAgent
from acpkit_core.config import AgentOptions
from acpkit_core.prompt.ir import Text
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.tool_classification import diff_content
from acpkit_core.runner.types import Session, StopReason
from acpkit_core.store import MemoryStore, RewindStore
from acpkit_core.testing import AcpTestClient, ScriptedRunner


def _said(updates: Sequence[Any]) -> list[str]:
    return [u.content.text for u in updates if isinstance(u, UserMessageChunk) and u.content.type == "text"]


def _answered(updates: Sequence[Any]) -> str:
    return "".join(u.content.text for u in updates if isinstance(u, AgentMessageChunk) and u.content.type == "text")


async def _five_turns(c: AcpTestClient, sid: str, root: Path) -> None:
    """Turn n writes f<n>.txt through the client; turn 4 also rewrites f3.txt; turn 5 rewrites f1.txt."""
    (root / "f1.txt").write_text("original one")
    for n in range(1, 6):
        lines = [f"write {root}/f{n}.txt turn {n}"]
        if n == 4:
            lines.append(f"write {root}/f3.txt turn 4 again")
        if n == 5:
            lines.append(f"write {root}/f1.txt turn 5")
        r = await c.prompt("\n".join(lines), session_id=sid)
        assert r.stop_reason == "end_turn"


def _store(tmp_path: Path) -> str:
    return str(tmp_path / "sessions.sqlite3")


async def test_rewind_takes_the_conversation_state_and_files_back(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=_store(tmp_path))), root=root) as c:
        await c.initialize()
        sid = await c.new_session()
        await _five_turns(c, sid, root)
        (root / "f4.txt").write_text("edited by hand")  # the user changed it after the agent's write
        r = await c.prompt("/rewind 3", session_id=sid)
        assert r.stop_reason == "end_turn"
        (question,) = r.permission_requests
        asked = question.tool_call
        assert asked.title == "Restore 3 files the agent changed since prompt 3?"
        assert sorted(loc.path for loc in asked.locations or []) == [
            str(root / f) for f in ("f1.txt", "f3.txt", "f5.txt")
        ]
        diffs = {d.path: d for d in asked.content or [] if isinstance(d, FileEditToolCallContent)}
        assert diffs[str(root / "f1.txt")].old_text == "turn 5" and diffs[str(root / "f1.txt")].new_text == "turn 1"
        assert {o.kind for o in question.options} == {"allow_once", "reject_once"}
        assert r.text.startswith("Rewound to before prompt 3")
        assert "undid 3 prompts" in r.text
        assert f"Left as it is: {root / 'f4.txt'} (it was changed since the agent's last change)" in r.text
        # turn 1 and 2 files as they were; f1 back to turn 1's content, f3 and f5 (created later) removed
        assert (root / "f1.txt").read_text() == "turn 1"
        assert (root / "f2.txt").read_text() == "turn 2"
        assert not (root / "f3.txt").exists() and not (root / "f5.txt").exists()
        assert (root / "f4.txt").read_text() == "edited by hand"
        # the runner continues from exactly prompts 1 and 2
        history = await c.prompt("history", session_id=sid)
        assert history.text == f"write {root}/f1.txt turn 1 | write {root}/f2.txt turn 2"
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=_store(tmp_path))), root=root) as c:
        await c.initialize()
        _, replayed = await c.load_session(sid)
    assert _said(replayed) == [f"write {root}/f1.txt turn 1", f"write {root}/f2.txt turn 2", "history"]
    assert "/rewind" not in _answered(replayed) and "Rewound" not in _answered(replayed)


async def test_a_bare_rewind_undoes_the_last_prompt_and_the_hint_lists_the_latest(tmp_path: Path) -> None:
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        for word in ("alpha", "beta", "gamma", "delta"):
            r = await c.prompt(f"say {word}", session_id=sid)
        update = r.updates[-1]
        assert isinstance(update, AvailableCommandsUpdate)
        rewind = next(cmd for cmd in update.available_commands if cmd.name == "rewind")
        assert rewind.input is not None
        assert rewind.input.root.hint == "prompt number: 2 say beta · 3 say gamma · 4 say delta"
        assert "retry" in {cmd.name for cmd in update.available_commands}
        undone = await c.prompt("/rewind", session_id=sid)
        assert undone.text == 'Rewound to before prompt 4 ("say delta"): undid prompt.'
        assert undone.permission_requests == []  # no file to ask about
        hint = next(cmd for cmd in undone.updates[-1].available_commands if cmd.name == "rewind")  # type: ignore[union-attr]
        assert hint.input.root.hint == "prompt number: 1 say alpha · 2 say beta · 3 say gamma"  # type: ignore[union-attr]
        command = await c.prompt("/rewind 7", session_id=sid)  # commands are not numbered prompts
        assert command.text == "Cannot rewind: there is no prompt 7: this session has 3 prompts"
        again = await c.prompt("history", session_id=sid)
        assert again.text == "say alpha | say beta | say gamma"


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ("/rewind 9", "Cannot rewind: there is no prompt 9: this session has 2 prompts"),
        ("/rewind two", "Cannot rewind: /rewind takes a prompt number (1 for the first prompt), not 'two'"),
        ("/rewind 0", "Cannot rewind: /rewind takes a prompt number (1 for the first prompt), not '0'"),
        ("/retry 2", "/retry takes no argument: it sends the last prompt again (/rewind N goes further back)"),
    ],
)
async def test_a_rewind_that_cannot_be_done_says_why_and_changes_nothing(command: str, answer: str) -> None:
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("say one", session_id=sid)
        await c.prompt("say two", session_id=sid)
        r = await c.prompt(command, session_id=sid)
        assert r.text == answer
        history = await c.prompt("history", session_id=sid)
    assert history.text == "say one | say two"


async def test_nothing_to_rewind_in_a_new_session() -> None:
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("/rewind", session_id=sid)
        assert r.text == "Cannot rewind: there is no prompt to go back to: this session has none yet"
        await c.prompt("say one", session_id=sid)
        await c.prompt("/clear", session_id=sid)  # nothing before a /clear to go back to
        r = await c.prompt("/retry", session_id=sid)
    assert r.text == "Cannot rewind: there is no prompt to go back to: this session has none yet"


async def test_keeping_the_files_still_rewinds_the_conversation(tmp_path: Path) -> None:
    async with AcpTestClient.connect(
        AcpAgent(ScriptedRunner(), AgentOptions(store="memory")), root=tmp_path, permission_answers=["reject_once"]
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("say hello", session_id=sid)
        await c.prompt(f"write {tmp_path}/a.txt new", session_id=sid)
        r = await c.prompt("/rewind 2", session_id=sid)
        history = await c.prompt("history", session_id=sid)
    assert r.text.startswith("Rewound to before prompt 2 (")
    assert r.text.endswith("): undid prompt.\nFiles left as they are, as you chose.")
    assert (tmp_path / "a.txt").read_text() == "new"
    assert history.text == "say hello"


async def test_a_cancelled_question_rewinds_nothing(tmp_path: Path) -> None:
    async with AcpTestClient.connect(
        AcpAgent(ScriptedRunner(), AgentOptions(store="memory")), root=tmp_path, permission_answers=["cancel_turn"]
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt(f"write {tmp_path}/a.txt new", session_id=sid)
        r = await c.prompt("/rewind", session_id=sid)
        assert r.stop_reason == "cancelled"
        history = await c.prompt("history", session_id=sid)
        _, replayed = await c.load_session(sid)
    assert (tmp_path / "a.txt").read_text() == "new"
    assert history.text == f"write {tmp_path}/a.txt new"
    assert _said(replayed) == [f"write {tmp_path}/a.txt new", "/rewind", "history"]


async def test_retry_sends_the_last_prompt_again(tmp_path: Path) -> None:
    async with AcpTestClient.connect(
        AcpAgent(ScriptedRunner(), AgentOptions(store=_store(tmp_path))), root=tmp_path
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("say first", session_id=sid)
        await c.prompt(f"write {tmp_path}/a.txt from the first try\nhistory", session_id=sid)
        (tmp_path / "a.txt").write_text("from the first try")
        r = await c.prompt("/retry", session_id=sid)
        assert r.stop_reason == "end_turn"
        assert len(r.permission_requests) == 1  # the file the undone turn wrote, put back before the retry
        assert r.text.startswith("Rewound to before prompt 2")
        assert r.text.endswith(f"wrote {tmp_path}/a.txtsay first")  # the prompt ran again, on prompt 1 alone
        prompts = await c.prompts(sid)
        _, replayed = await c.load_session(sid)
    assert [p["number"] for p in prompts] == [1, 2]
    assert _said(replayed) == ["say first", f"write {tmp_path}/a.txt from the first try\nhistory"]
    assert "Rewound" not in _answered(replayed)


async def test_fork_at_a_prompt_leaves_the_original_intact(tmp_path: Path) -> None:
    async with AcpTestClient.connect(
        AcpAgent(ScriptedRunner(), AgentOptions(store=_store(tmp_path))), root=tmp_path
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        for word in ("one", "two", "three"):
            await c.prompt(f"write {tmp_path}/{word}.txt {word}", session_id=sid)
        fork = await c.fork_session(sid, prompt=2)
        in_fork = await c.prompt("history", session_id=fork)
        in_original = await c.prompt("history", session_id=sid)
        fork_prompts = await c.prompts(fork)
        by_id = await c.fork_session(sid, message_id=fork_prompts[0]["messageId"])
        empty = await c.prompt("history", session_id=by_id)
        with pytest.raises(RequestError) as bad:
            await c.fork_session(sid, prompt=9)
        both_meta: dict[str, Any] = {"acpkit.fork": {"prompt": 1, "messageId": "x"}}
        with pytest.raises(RequestError) as both:
            await c.c.fork_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[], **both_meta)
        listed = await c.list_sessions()
    assert in_fork.text == f"write {tmp_path}/one.txt one"
    assert in_original.text.count("write") == 3
    assert [p["number"] for p in fork_prompts] == [1, 2]  # prompt 1, then the fork's own `history`
    assert empty.text == "(no history)"
    assert all((tmp_path / f"{w}.txt").exists() for w in ("one", "two", "three"))  # files are not the fork's
    assert bad.value.code == -32602 and str(bad.value) == "there is no prompt 9: this session has 4 prompts"
    assert both.value.code == -32602
    assert len(listed.sessions) == 3  # the refused forks left no session behind


async def test_the_extension_lists_prompts_and_rewinds(tmp_path: Path) -> None:
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store="memory")), root=tmp_path) as c:
        init = await c.initialize()
        meta = init.agent_capabilities.field_meta if init.agent_capabilities else None
        assert meta == {
            "acpkit.rewind": {"methods": ["acpkit/session/prompts", "acpkit/session/rewind"], "forkMeta": "acpkit.fork"}
        }
        sid = await c.new_session()
        await c.prompt("say one", session_id=sid)
        await c.prompt(f"write {tmp_path}/a.txt two", session_id=sid)
        await c.prompt("say three", session_id=sid)
        listed = await c.prompts(sid)
        assert [(p["number"], p["text"][:6]) for p in listed] == [(1, "say on"), (2, "write "), (3, "say th")]
        kept = await c.rewind(sid, message_id=listed[2]["messageId"], restore_files=False)
        assert kept["prompt"]["number"] == 3 and kept["undone"] == 1
        assert kept["prompt"]["content"] == [{"type": "text", "text": "say three"}]
        answer = await c.rewind(sid, prompt=2, restore_files=True, transcript=True)
        assert c.permission_requests == []  # told what to do: nothing asked
        assert answer["files"] == {"restored": [], "removed": [str(tmp_path / "a.txt")], "kept": [], "declined": False}
        assert [u["sessionUpdate"] for u in answer["transcript"]] == ["user_message_chunk", "agent_message_chunk"]
        assert answer["message"].startswith("Rewound to before prompt 2")
        assert not (tmp_path / "a.txt").exists()
        with pytest.raises(RequestError) as unknown:
            await c.rewind("nope")
        with pytest.raises(RequestError) as bad:
            await c.c.ext_method("acpkit/session/rewind", {"sessionId": sid, "prompt": 0})
        with pytest.raises(RequestError) as gone:
            await c.rewind(sid, prompt=5)
    assert unknown.value.code == -32002
    assert bad.value.code == -32602 and "prompt" in str(bad.value.data)
    assert gone.value.code == -32602 and "there is no prompt 5: this session has 1 prompt" in str(gone.value)


async def test_a_rewind_is_refused_while_a_turn_runs(tmp_path: Path) -> None:
    store = _store(tmp_path)
    async with (
        AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=store))) as c,
        AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=store))) as other,
    ):
        await c.initialize()
        await other.initialize()
        sid = await c.new_session()
        await c.prompt("say one", session_id=sid)
        running = asyncio.ensure_future(c.prompt("sleep 2\nsay two", session_id=sid))
        await asyncio.sleep(0.3)
        with pytest.raises(RequestError) as here:
            await c.rewind(sid)
        await other.resume_session(sid)
        with pytest.raises(RequestError) as there:  # another window (another process would be the same)
            await other.rewind(sid)
        await c.cancel(sid)
        await running
        done = await other.rewind(sid, restore_files=False)
    assert here.value.code == -32600 and "running a turn" in str(here.value)
    assert there.value.code == -32600 and "running a turn in another window" in str(there.value)
    assert done["prompt"]["number"] == 2


async def test_another_window_sees_the_rewound_session(durable: str) -> None:
    """Two connections on one store (a SQLite file, a Postgres database): one rewinds, the other continues."""
    async with (
        AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=durable))) as c,
        AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=durable))) as other,
    ):
        await c.initialize()
        await other.initialize()
        sid = await c.new_session()
        for word in ("one", "two", "three"):
            await c.prompt(f"say {word}", session_id=sid)
        await other.resume_session(sid)
        r = await other.prompt("/rewind 2", session_id=sid)
        assert r.text.startswith("Rewound to before prompt 2")
        history = await c.prompt("history", session_id=sid)
        listed = await c.prompts(sid)
    assert history.text == "say one"
    assert [p["text"] for p in listed] == ["say one", "history"]


@pytest.fixture(params=["sqlite", "postgres"])
def durable(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return _store(tmp_path)
    return str(request.getfixturevalue("postgres_url"))


class EditingRunner(ScriptedRunner):
    """Also edits files itself, as an agent's own tools do, showing each change as a tool call's diff.

    `edit <path> <text>` writes the file to disk (a diff from what it held, `oldText` absent for a new
    file); `remove <path>` deletes it (a `delete` call whose diff ends empty).
    """

    async def run_turn(self, turn: Turn) -> StopReason:
        text = "\n".join(p.text for p in turn.prompt if isinstance(p, Text))
        verb, _, rest = text.partition(" ")
        if verb not in ("edit", "remove"):
            return await super().run_turn(turn)
        turn.session.state.setdefault("history", []).append(text)
        path, _, content = rest.partition(" ")
        old = Path(path).read_text() if os.path.exists(path) else None
        call_id = f"{verb}-{len(turn.session.state['history'])}"
        calls = turn.tool_calls
        await calls.announce(call_id, "remove_file" if verb == "remove" else "edit_file", {"path": path})
        await calls.start(call_id)
        if verb == "remove":
            os.remove(path)
            await calls.attach(call_id, diff_content(path, old, ""))
        else:
            Path(path).write_text(content)
            await calls.attach(call_id, diff_content(path, old, content))
        await calls.finish(call_id)
        return "end_turn"


async def test_edits_shown_as_diffs_are_restored_too(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("before")
    (tmp_path / "gone.txt").write_text("precious")
    async with AcpTestClient.connect(
        AcpAgent(EditingRunner(), AgentOptions(store="memory")), root=tmp_path, remove_files=False
    ) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("say start", session_id=sid)
        await c.prompt(f"edit {tmp_path}/kept.txt after", session_id=sid)
        await c.prompt(f"remove {tmp_path}/gone.txt", session_id=sid)
        await c.prompt(f"edit {tmp_path}/new.txt fresh", session_id=sid)
        r = await c.prompt("/rewind 2", session_id=sid)
    assert (tmp_path / "kept.txt").read_text() == "before"
    assert (tmp_path / "gone.txt").read_text() == "precious"  # deleted by the agent: written back
    assert (tmp_path / "new.txt").read_text() == "fresh"  # this client cannot delete files
    assert f"Files restored: {tmp_path / 'kept.txt'}, {tmp_path / 'gone.txt'}." in r.text
    assert (
        f"Left as it is: {tmp_path / 'new.txt'} (the agent created it and this client cannot delete files: "
        "remove it yourself)." in r.text
    )


class PlainStore:
    """A store of someone else's: the `SessionStore` methods only (here kept by a memory store)."""

    def __init__(self) -> None:
        self._inner = MemoryStore()

    @property
    def path(self) -> Path | None:
        return None

    async def create(self, session: Session, *, server: Any = None, transcript: Sequence[Any] = ()) -> None:
        await self._inner.create(session, server=server, transcript=transcript)

    async def get(self, session_id: str) -> Any:
        return await self._inner.get(session_id)

    async def save(self, session: Session, **kwargs: Any) -> int:
        return await self._inner.save(session, **kwargs)

    async def append_transcript(self, session_id: str, updates: Sequence[Any]) -> None:
        await self._inner.append_transcript(session_id, updates)

    async def begin_turn(self, session_id: str, owner: str, *, lease_seconds: float = 30.0) -> Any:
        return await self._inner.begin_turn(session_id, owner, lease_seconds=lease_seconds)

    async def renew_turn(self, session_id: str, owner: str, *, lease_seconds: float = 30.0) -> None:
        await self._inner.renew_turn(session_id, owner, lease_seconds=lease_seconds)

    async def end_turn(self, session_id: str, owner: str) -> None:
        await self._inner.end_turn(session_id, owner)

    async def recover_turn(self, session_id: str) -> bool:
        return await self._inner.recover_turn(session_id)

    async def transcript(self, session_id: str) -> list[Any]:
        return await self._inner.transcript(session_id)

    async def list(self, **kwargs: Any) -> Any:
        return await self._inner.list(**kwargs)

    async def delete(self, session_id: str) -> None:
        await self._inner.delete(session_id)

    async def close(self) -> None:
        await self._inner.close()


async def test_a_store_that_cannot_rewind_offers_no_rewind() -> None:
    store = PlainStore()
    assert not isinstance(store, RewindStore)
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store=store))) as c:
        init = await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("say one", session_id=sid)
        names = {
            cmd.name for u in c.updates[sid] if isinstance(u, AvailableCommandsUpdate) for cmd in u.available_commands
        }
        with pytest.raises(RequestError) as ext:
            await c.prompts(sid)
    assert init.agent_capabilities is not None and init.agent_capabilities.field_meta is None
    assert "rewind" not in names and "retry" not in names
    assert r.text == "one"
    assert ext.value.code == -32601


class RewindingRunner(ScriptedRunner):
    """A runner that takes its framework back itself, and refuses to go back before prompt 2."""

    def __init__(self) -> None:
        super().__init__()
        self.points: list[Any] = []

    async def rewind_session(self, session: Session, point: Any) -> None:
        from acpkit_core.errors import RewindError

        if point.number < 2:
            raise RewindError("this framework keeps nothing from before prompt 2")
        self.points.append(point)
        session.state["history"] = list(session.state.get("history", []))


async def test_a_runner_that_rewinds_itself_gets_the_point_and_may_refuse() -> None:
    runner = RewindingRunner()
    async with AcpTestClient.connect(AcpAgent(runner, AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        for word in ("one", "two", "three"):
            await c.prompt(f"say {word}", session_id=sid)
        prompts = await c.prompts(sid)
        refused = await c.prompt("/rewind 1", session_id=sid)
        done = await c.prompt("/rewind 2", session_id=sid)
        history = await c.prompt("history", session_id=sid)
    assert refused.text == "Cannot rewind: this framework keeps nothing from before prompt 2"
    assert done.text.startswith("Rewound to before prompt 2")
    (point,) = runner.points
    assert point.prompt_id == prompts[1]["messageId"] and point.number == 2
    assert point.undone == (prompts[1]["messageId"], prompts[2]["messageId"])
    assert point.kept == (prompts[0]["messageId"],)
    assert point.sessions == (sid,)
    assert history.text == "say one"


async def test_another_principals_session_is_not_found_whatever_the_point(tmp_path: Path) -> None:
    store = _store(tmp_path)
    alice, bob = (
        AcpAgent(ScriptedRunner(), AgentOptions(store=store)),
        AcpAgent(ScriptedRunner(), AgentOptions(store=store)),
    )
    alice.sessions.principal, bob.sessions.principal = "alice", "bob"
    async with AcpTestClient.connect(alice) as a, AcpTestClient.connect(bob) as b:
        await a.initialize()
        await b.initialize()
        sid = await a.new_session()
        await a.prompt("say secret", session_id=sid)
        refused: list[int] = []
        for attempt in (
            b.fork_session(sid, prompt=9),  # the count of prompts is not told either
            b.fork_session(sid, prompt=1),
            b.rewind(sid),
            b.prompts(sid),
        ):
            with pytest.raises(RequestError) as info:
                await attempt
            refused.append(info.value.code)
        history = await a.prompt("history", session_id=sid)
    assert refused == [-32002, -32002, -32002, -32002]
    assert history.text == "say secret"


async def test_after_clear_the_hint_starts_again() -> None:
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("say one", session_id=sid)
        await c.prompt("/clear", session_id=sid)
        r = await c.prompt("say two", session_id=sid)
    update = r.updates[-1]
    assert isinstance(update, AvailableCommandsUpdate)
    rewind = next(cmd for cmd in update.available_commands if cmd.name == "rewind")
    assert rewind.input is not None and rewind.input.root.hint == "prompt number: 1 say two"


class SlowFilesStore(MemoryStore):
    """Takes a while to record file changes (a busy database)."""

    async def add_file_changes(self, session_id: str, changes: Sequence[Any]) -> None:
        await asyncio.sleep(0.05)
        await super().add_file_changes(session_id, changes)


async def test_file_changes_written_while_the_turn_ends_are_kept(tmp_path: Path) -> None:
    """The turn ends while a periodic flush is recording a file change: the change is kept all the same."""
    store = SlowFilesStore()
    options = AgentOptions(store=store, transcript_flush_ms=5)
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), options), root=tmp_path) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt(f"write {tmp_path}/a.txt new\nsleep 0.02", session_id=sid)  # ends mid-flush
        (mark,) = await store.prompts(sid)
        recorded = await store.file_changes(sid, [mark.id])
        r = await c.prompt("/rewind", session_id=sid)
        _, replayed = await c.load_session(sid)
    assert [(ch.path, ch.before, ch.after) for ch in recorded] == [(str(tmp_path / "a.txt"), None, "new")]
    assert f"Files the agent created, removed: {tmp_path / 'a.txt'}." in r.text
    assert not (tmp_path / "a.txt").exists()
    assert replayed == [u for u in replayed if isinstance(u, AvailableCommandsUpdate)]  # nothing left, nothing twice
