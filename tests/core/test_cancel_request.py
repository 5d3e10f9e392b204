"""`$/cancel_request` (ACP 1.17) both ways, on a real JSON-RPC connection.

The client cancels a pending `session/prompt` (the turn ends `cancelled`, as with `session/cancel`)
or any other pending request (answered -32800); the agent cancels its own requests to the client
(permission, elicitation, files, terminal) when their turn is cancelled, and the client sees
`$/cancel_request` for each.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from acp import RequestError
from acpkit_core.config import AgentOptions
from acpkit_core.extensions import Extensions
from acpkit_core.runner.types import Session
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient, PromptResult, ScriptedRunner


def agent(**options: Any) -> AcpAgent:
    return AcpAgent(ScriptedRunner(), AgentOptions(store="memory", **options))


async def until(check: Callable[[], object], what: str) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def never(*_: Any) -> asyncio.Future[Any]:
    return asyncio.get_running_loop().create_future()


async def run_until_asked(
    c: AcpTestClient, prompt: str, asked: Callable[[], object], what: str
) -> tuple[str, asyncio.Future[PromptResult]]:
    await c.initialize()
    sid = await c.new_session()
    task = asyncio.ensure_future(c.prompt(prompt, session_id=sid))
    await until(asked, what)
    return sid, task


def wire_ids(c: AcpTestClient, method: str) -> list[Any]:
    """The ids of the agent's requests of `method`, as they went over the wire."""
    return [m["id"] for d, m in c.wire if d == "received" and m.get("method") == method and "id" in m]


def answers(c: AcpTestClient, request_id: Any) -> list[dict[str, Any]]:
    """What the client answered to the agent's request `request_id`."""
    return [m for d, m in c.wire if d == "sent" and m.get("id") == request_id and "method" not in m]


async def test_a_cancel_request_for_a_running_prompt_ends_the_turn_cancelled() -> None:
    async with AcpTestClient.connect(agent()) as c:
        sid, task = await run_until_asked(c, "tool slow open\nsleep 30", lambda: tool_started(c), "the tool call")
        (prompt_id,) = c.pending_requests("session/prompt")
        await c.cancel_request(prompt_id)
        r = await asyncio.wait_for(task, 5)
        again = await c.prompt("say still here", session_id=sid)
    assert r.stop_reason == "cancelled"  # a valid answer, not an error: the turn was cancelled
    (call,) = r.tool_calls.values()
    assert call.status == "failed"  # the server closed the call the turn left open
    assert again.text == "still here"
    sent = [m for d, m in c.wire if d == "sent" and m.get("method") == "$/cancel_request"]
    assert sent == [{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": prompt_id}}]


def tool_started(c: AcpTestClient) -> bool:
    return any(u.session_update == "tool_call" for updates in c.updates.values() for u in updates)


async def test_cancelling_a_turn_cancels_its_open_permission_request() -> None:
    async with AcpTestClient.connect(agent(), permission_answers=never) as c:
        sid, task = await run_until_asked(c, "ask delete_file", lambda: c.permission_requests, "the question")
        (asked,) = wire_ids(c, "session/request_permission")
        await c.cancel(sid)
        r = await asyncio.wait_for(task, 5)
        await until(lambda: answers(c, asked), "the permission request's answer")
    assert r.stop_reason == "cancelled"
    # the agent sent $/cancel_request for its question; this client had already answered it
    # `cancelled` on its own session/cancel (as ACP asks), so the notification found nothing pending
    assert [x.request_id for x in c.cancels_received] == [asked]
    (answer,) = answers(c, asked)
    assert answer.get("result") == {"outcome": {"outcome": "cancelled"}} or answer["error"]["code"] == -32800


async def test_a_cancelled_turn_cancels_its_open_elicitation_and_the_client_answers_it_cancelled() -> None:
    async with AcpTestClient.connect(agent(), elicitation=True, elicitation_answers=never) as c:
        question = json.dumps({"text": "Which color?", "choices": ["red", "green"]})
        _, task = await run_until_asked(c, f"question {question}", lambda: c.elicitations, "the elicitation")
        (asked,) = wire_ids(c, "elicitation/create")
        (prompt_id,) = c.pending_requests("session/prompt")
        await c.cancel_request(prompt_id)  # the turn is cancelled by $/cancel_request this time
        r = await asyncio.wait_for(task, 5)
        await until(lambda: answers(c, asked), "the elicitation's answer")
    assert r.stop_reason == "cancelled"
    assert [(x.request_id, x.method) for x in c.cancels_received] == [(asked, "elicitation/create")]
    (answer,) = answers(c, asked)
    assert answer["error"] == {"code": -32800, "message": "Request cancelled"}


async def test_a_cancelled_turn_cancels_its_running_terminal_command() -> None:
    command = f"{sys.executable} -c 'import time; time.sleep(30)'"
    async with AcpTestClient.connect(agent()) as c:
        sid, task = await run_until_asked(
            c, f"run {command}", lambda: wire_ids(c, "terminal/wait_for_exit"), "the command to run"
        )
        (waiting,) = wire_ids(c, "terminal/wait_for_exit")
        await c.cancel(sid)
        r = await asyncio.wait_for(task, 5)
        await until(lambda: answers(c, waiting), "the wait's answer")
    assert r.stop_reason == "cancelled"
    assert (waiting, "terminal/wait_for_exit") in [(x.request_id, x.method) for x in c.cancels_received]
    (answer,) = answers(c, waiting)
    assert answer["error"]["code"] == -32800
    released = [m for d, m in c.wire if d == "received" and m.get("method") == "terminal/release"]
    assert released, "the terminal was still released"


async def test_a_cancel_request_for_another_pending_request_answers_it_cancelled() -> None:
    started = asyncio.Event()
    extensions = Extensions()

    @extensions.method("acme/slow")
    async def slow(params: dict[str, Any]) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(30)
        return {"done": True}

    async with AcpTestClient.connect(agent(extensions=extensions)) as c:
        await c.initialize()
        call: Awaitable[Any] = c.c.ext_method("acme/slow", {})
        task = asyncio.ensure_future(call)
        await asyncio.wait_for(started.wait(), 5)
        (slow_id,) = c.pending_requests("_acme/slow")
        await c.cancel_request(slow_id)
        with pytest.raises(RequestError) as cancelled:
            await asyncio.wait_for(task, 5)
        await c.cancel_request(slow_id)  # answered already: ignored
        await c.cancel_request(12345)  # never sent: ignored
        sid = await c.new_session()
        r = await c.prompt("say fine", session_id=sid)
    assert (cancelled.value.code, str(cancelled.value)) == (-32800, "Request cancelled")
    assert r.text == "fine"


class SlowToForget(ScriptedRunner):
    async def delete_session(self, session: Session) -> None:
        await asyncio.sleep(0.3)


async def test_a_delete_is_not_interrupted_half_way_by_a_cancel_request() -> None:
    async with AcpTestClient.connect(AcpAgent(SlowToForget(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("say hello", session_id=sid)
        delete = asyncio.ensure_future(c.delete_session(sid))
        await until(lambda: c.pending_requests("session/delete"), "the delete request")
        (delete_id,) = c.pending_requests("session/delete")
        await c.cancel_request(delete_id)
        await asyncio.wait_for(delete, 5)  # finished: a valid answer, not -32800
        listed = await c.list_sessions()
    assert listed.sessions == []
