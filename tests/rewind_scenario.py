"""The rewind scenario of issue 26, over real stdio, shared by the pydantic-acp and langchain-acp tests.

Five turns write files; the user edits one by hand; `/rewind 3`; the next turn's model input holds
exactly turns 1 and 2; the files are as they were before turn 3, except the hand-edited one, which
is named and left alone; a restarted agent replays the rewound transcript; `/retry` sends the last
prompt again; `session/fork` at prompt 2 holds turn 1 only, and the original is left intact.

The agent's model must answer `prompts seen: <every user prompt in its input, joined by " | "> ·
files written: <how many tool results>` after writing the files a prompt names
(`write <path> <content>`, several separated by `;`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp.schema import FileEditToolCallContent, UserMessageChunk
from acpkit_core.testing import AcpTestClient

PROMPTS = [
    "write f1.txt turn-1",
    "write f2.txt turn-2",
    "write f3.txt turn-3",
    "write f4.txt turn-4; write f3.txt turn-4-again",
    "write f5.txt turn-5; write f1.txt turn-5",
]
ASK = "what did you see?"


def _said(updates: Sequence[Any]) -> list[str]:
    return [u.content.text for u in updates if isinstance(u, UserMessageChunk) and u.content.type == "text"]


async def run_rewind_scenario(command: Sequence[str], root: Path) -> None:
    """Drive the whole scenario against the agent process `command`, in the workspace `root`."""
    (root / "f1.txt").write_text("original one")
    async with AcpTestClient.spawn(*command, root=root, cwd=root) as c:
        await c.initialize()
        sid = await c.new_session()
        for n, prompt in enumerate(PROMPTS, 1):
            r = await c.prompt(prompt, session_id=sid)
            assert r.stop_reason == "end_turn", c.stderr
            assert r.text.endswith(f"files written: {sum(p.count('write ') for p in PROMPTS[:n])}"), r.text
        assert (root / "f1.txt").read_text() == "turn-5"
        (root / "f4.txt").write_text("edited by hand")
        asked_before = len(c.permission_requests)
        rewound = await c.prompt("/rewind 3", session_id=sid)
        (question,) = c.permission_requests[asked_before:]
        locations = sorted(loc.path for loc in question.tool_call.locations or [])
        assert locations == [str(root / name) for name in ("f1.txt", "f3.txt", "f5.txt")]
        diffs = {d.path: d for d in question.tool_call.content or [] if isinstance(d, FileEditToolCallContent)}
        assert (diffs[str(root / "f1.txt")].old_text, diffs[str(root / "f1.txt")].new_text) == ("turn-5", "turn-1")
        assert rewound.text.startswith('Rewound to before prompt 3 ("write f3.txt turn-3"): undid 3 prompts.')
        assert f"Files restored: {root / 'f1.txt'}." in rewound.text
        assert f"Files the agent created, removed: {root / 'f3.txt'}, {root / 'f5.txt'}." in rewound.text
        assert f"Left as it is: {root / 'f4.txt'} (it was changed since the agent's last change)." in rewound.text
        assert (root / "f1.txt").read_text() == "turn-1"
        assert (root / "f2.txt").read_text() == "turn-2"
        assert not (root / "f3.txt").exists() and not (root / "f5.txt").exists()
        assert (root / "f4.txt").read_text() == "edited by hand"
        after = await c.prompt(ASK, session_id=sid)
        assert after.text == f"prompts seen: {PROMPTS[0]} | {PROMPTS[1]} | {ASK} · files written: 2"

    async with AcpTestClient.spawn(*command, root=root, cwd=root) as c:  # a new agent process
        await c.initialize()
        _, replayed = await c.load_session(sid)
        assert _said(replayed) == [PROMPTS[0], PROMPTS[1], ASK]
        retried = await c.prompt("/retry", session_id=sid)
        assert retried.stop_reason == "end_turn"
        assert retried.text.startswith('Rewound to before prompt 3 ("what did you see?"): undid prompt.')
        assert retried.text.endswith(after.text)
        _, replayed = await c.load_session(sid)
        assert _said(replayed) == [PROMPTS[0], PROMPTS[1], ASK]
        fork = await c.fork_session(sid, prompt=2)
        in_fork = await c.prompt(ASK, session_id=fork)
        assert in_fork.text == f"prompts seen: {PROMPTS[0]} | {ASK} · files written: 1"
        again = await c.prompt(ASK, session_id=sid)
        assert again.text == f"prompts seen: {PROMPTS[0]} | {PROMPTS[1]} | {ASK} | {ASK} · files written: 2"
        assert (root / "f1.txt").read_text() == "turn-1"  # forking touches no file
