"""Which SSE stream a Streamable HTTP connection's messages take when the client closes a session's stream.

The end-to-end case (a real `acpkit serve`, the stream closed mid-turn) is in `test_rfd.py`; here the
router itself, for what a socket cannot time on demand: an event that was waiting for room in the
connection's buffer when the stream closed.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from acpkit_core.remote.sse import SseRouter

PROMPT = {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": "s"}}
ANSWER = {"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "end_turn"}}


def _update(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "text": text}}


def _event(message: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(message)}\n\n".encode()


async def test_what_waits_for_room_when_the_session_stream_closes_comes_next_on_the_connections() -> None:
    first, second = _event(_update("a" * 40)), _event(_update("b" * 40))
    router = SseRouter(limit=len(first) + 10)  # room for one update at a time
    own = router.open_session("s")
    own.attached = True
    router.received(PROMPT)
    await router.route(_update("a" * 40)).put(first)
    waiting = asyncio.create_task(router.route(_update("b" * 40)).put(second))
    await asyncio.sleep(0.01)
    assert not waiting.done()  # the buffer is full: the agent waits

    own.attached = False  # the client closed the session's stream before it took anything
    await router.closed_session("s", own)
    assert router.route(_update("c")) is router.main  # the rest of the turn: the connection's stream
    assert router.route(ANSWER) is router.main  # the answer too (it used to go to the closed stream)

    read: list[bytes] = []

    async def connection_stream() -> None:
        async for piece in router.main.events():
            read.append(piece)
            if len(read) == 2:
                return

    await asyncio.wait_for(connection_stream(), 5)
    await asyncio.wait_for(waiting, 5)
    assert read == [first, second]  # in order, nothing lost
    await router.main.put(_event(ANSWER))
    assert router.held == len(_event(ANSWER))  # what was moved or forwarded counts once, and was freed
