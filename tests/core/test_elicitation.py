"""`turn.ask` over an in-process connection: elicitation where the client has it, the permission fallback, cancel."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from acp.schema import RequestPermissionRequest, ToolCallProgress
from acpkit_core.config import AgentOptions
from acpkit_core.errors import UserError
from acpkit_core.runner.elicitation import Answer, Choice, Elicitor, Question, UrlElicitations
from acpkit_core.runner.protocols import Turn, current_turn
from acpkit_core.runner.types import StopReason
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient, ScriptedRunner

COLOR = json.dumps({"text": "Which color?", "choices": ["red", "green"], "default": "red"})
NAME = json.dumps({"text": "Your name?"})


def _agent() -> AcpAgent:
    return AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))


async def test_a_choice_is_asked_by_elicitation_when_the_client_supports_it() -> None:
    async with AcpTestClient.connect(_agent(), elicitation=True, elicitation_answers=["green", None]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt(f"question {COLOR}", session_id=sid)
        declined = await c.prompt(f"question {NAME}", session_id=sid)
    assert r.text == "answer: answered green"
    assert r.permission_requests == []
    assert c.elicitations[0] == {
        "message": "Which color?",
        "mode": "form",
        "sessionId": sid,
        "toolCallId": "call-0-0",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "answer": {
                    "type": "string",
                    "title": "Which color?",
                    "default": "red",
                    "oneOf": [{"const": "red", "title": "red"}, {"const": "green", "title": "green"}],
                }
            },
            "required": ["answer"],
        },
    }
    assert r.tool_calls["call-0-0"].status == "completed"
    # a text question: no oneOf; declined
    assert "oneOf" not in c.elicitations[1]["requestedSchema"]["properties"]["answer"]
    assert declined.text == "answer: declined"


async def test_an_answer_that_was_not_offered_counts_as_declined() -> None:
    async with AcpTestClient.connect(_agent(), elicitation=True, elicitation_answers=["blue"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt(f"question {COLOR}", session_id=sid)
    assert r.text == "answer: declined"


async def test_without_elicitation_the_choices_become_permission_options() -> None:
    async with AcpTestClient.connect(_agent(), permission_answers=["green", "acpkit.skip"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt(f"question {COLOR}", session_id=sid)
        skipped = await c.prompt(f"question {COLOR}", session_id=sid)
        text = await c.prompt(f"question {NAME}", session_id=sid)
    assert c.elicitations == []
    (request,) = r.permission_requests
    assert isinstance(request, RequestPermissionRequest)
    wire = request.model_dump(by_alias=True, exclude_none=True)
    assert wire["options"] == [
        {"optionId": "red", "name": "red", "kind": "allow_once"},
        {"optionId": "green", "name": "green", "kind": "allow_once"},
        {"optionId": "acpkit.skip", "name": "Skip", "kind": "reject_once"},
    ]
    card = wire["toolCall"]
    assert card["title"] == "Which color?" and card["toolCallId"] != "call-0-0"
    assert card["_meta"] == {"acpkit.question": {"toolCallId": "call-0-0"}}
    assert r.text == "answer: answered green"
    # the question's card is closed with the answer
    closing = [u for u in r.updates if isinstance(u, ToolCallProgress) and u.tool_call_id == card["toolCallId"]]
    assert [(u.status, u.content[0].content.text) for u in closing] == [("completed", "green")]  # type: ignore[index,union-attr]
    assert skipped.text == "answer: declined"
    # a text question without a default cannot be asked without elicitation: nothing is sent
    assert text.text == "answer: unavailable" and text.permission_requests == []


async def test_cancel_while_a_question_is_open_ends_the_turn_cancelled() -> None:
    never: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
    async with AcpTestClient.connect(_agent(), elicitation=True, elicitation_answers=lambda _: never) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.ensure_future(c.prompt(f"question {COLOR}", session_id=sid))
        for _ in range(200):
            if c.elicitations:
                break
            await asyncio.sleep(0.01)
        await c.cancel(sid)
        r = await asyncio.wait_for(task, 5)
    assert r.stop_reason == "cancelled"
    assert r.tool_calls["call-0-0"].status == "failed"


async def test_a_user_stopping_the_turn_at_the_question_cancels_it() -> None:
    async with AcpTestClient.connect(_agent(), permission_answers=["cancel_turn"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt(f"question {COLOR}", session_id=sid)
    assert r.stop_reason == "cancelled"


async def test_bad_questions_are_refused_and_no_turn_means_none() -> None:
    elicitor = Elicitor(conn=None, session_id="s", form=True, cancelled=asyncio.Event())
    with pytest.raises(UserError, match="unique"):
        await elicitor.ask("Pick", choices=["a", "a"])
    with pytest.raises(UserError, match="not one of the choices"):
        await elicitor.ask("Pick", choices=[Choice(value="a", title="A")], default="b")
    with pytest.raises(UserError, match="empty"):
        await elicitor.ask(" ")
    assert (await elicitor.ask("Pick", choices=["a"])).outcome == "unavailable"
    assert current_turn() is None


class _AskThenCarryOn:
    """Asks one question and ends the turn normally, whatever the answer."""

    async def run_turn(self, turn: Turn) -> StopReason:
        await turn.ask("Which color?", choices=["red", "green"])
        return "end_turn"


async def test_a_fallback_question_answered_cancelled_cancels_the_turn() -> None:
    agent = AcpAgent(_AskThenCarryOn(), AgentOptions(store="memory"))
    async with AcpTestClient.connect(agent, permission_answers=["cancelled"]) as c:
        await c.initialize()
        r = await c.prompt("go", session_id=await c.new_session())
    assert r.stop_reason == "cancelled"


# --- links (URL mode), elicitation/complete, and the developer's fallback (ACP 1.21) ---------------

LINK = json.dumps({"text": "Authorize access to your repositories", "url": "https://agent.example/connect?flow=7"})
LINK_DONE = json.dumps({"text": "Sign in", "url": "https://agent.example/in", "complete": True})


async def test_a_link_is_asked_in_url_mode_and_completed_once() -> None:
    agent = _agent()
    async with AcpTestClient.connect(agent, elicitation_url=True, elicitation_answers=["ok", None, "ok"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt(f"question {LINK}", session_id=sid)
        declined = await c.prompt(f"question {LINK}", session_id=sid)
        done = await c.prompt(f"question {LINK_DONE}", session_id=sid)
        await asyncio.sleep(0.05)
    first = c.elicitations[0]
    eid = first["elicitationId"]
    assert first == {
        "message": "Authorize access to your repositories",
        "mode": "url",
        "sessionId": sid,
        "toolCallId": "call-0-0",
        "elicitationId": eid,
        "url": "https://agent.example/connect?flow=7",
    }
    assert r.text == f"answer: answered {eid}" and r.permission_requests == []
    assert declined.text == "answer: declined"
    third = c.elicitations[2]["elicitationId"]
    assert len({eid, c.elicitations[1]["elicitationId"], third}) == 3  # unique on the connection
    assert done.text == f"answer: answered {third}"
    assert c.completed_elicitations == [third]  # only the one completed, once
    assert agent.outbox.links.outstanding == {eid}  # accepted, not completed yet


async def test_a_form_only_client_gets_a_link_as_a_permission_card_never_in_form_mode() -> None:
    async with AcpTestClient.connect(_agent(), elicitation=True, permission_answers=["acpkit.continue"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt(f"question {LINK}", session_id=sid)
    assert c.elicitations == []
    (request,) = r.permission_requests
    assert request.tool_call.title == "Authorize access to your repositories"
    (shown,) = request.tool_call.content or []
    assert shown.content.text == "Open https://agent.example/connect?flow=7 to continue."  # type: ignore[union-attr]
    assert [(o.option_id, o.name) for o in request.options] == [
        ("acpkit.continue", "Continue"),
        ("acpkit.skip", "Skip"),
    ]
    assert r.text.startswith("answer: answered acpkit-")


async def test_the_developers_fallback_answers_what_the_client_cannot_be_asked() -> None:
    asked: list[Question] = []

    async def fallback(question: Question, turn: Turn) -> Answer | None:
        asked.append(question)
        if question.url is not None:
            return None  # the built-in card for links
        await turn.emit.text(f"(assuming {question.default}) ")
        return Answer(outcome="answered", value=question.default, via="fallback")

    agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory", ask_fallback=fallback))
    async with AcpTestClient.connect(agent, permission_answers=["acpkit.skip"]) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt(f"question {COLOR}", session_id=sid)
        link = await c.prompt(f"question {LINK}", session_id=sid)
    assert r.text == "(assuming red) answer: answered red"
    assert r.permission_requests == []  # the developer's fallback, not the built-in question
    assert asked[0] == Question(
        message="Which color?",
        choices=(Choice(value="red"), Choice(value="green")),
        default="red",
        tool_call_id="call-0-0",
    )
    assert asked[1].url == "https://agent.example/connect?flow=7" and asked[1].elicitation_id
    assert link.text == "answer: declined" and len(link.permission_requests) == 1
    assert agent.outbox.links.outstanding == set()  # a declined link is forgotten


async def test_a_cancel_gives_up_a_slow_developer_fallback() -> None:
    async def slow(question: Question, turn: Turn) -> Answer | None:
        await asyncio.sleep(30)
        return None

    agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory", ask_fallback=slow))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        task = asyncio.ensure_future(c.prompt(f"question {COLOR}", session_id=sid))
        await asyncio.sleep(0.2)
        await c.cancel(sid)
        r = await asyncio.wait_for(task, 5)
    assert r.stop_reason == "cancelled"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"url": "ftp://x.example/a"}, "give an absolute http(s) URL"),
        ({"url": "https://me:secret@x.example/"}, "never put credentials in the URL"),
        ({"url": "https://x.example/", "choices": ["a"]}, "a link question takes no choices"),
        ({"elicitation_id": "e1"}, "only a link question (url=...) has an elicitation id"),
    ],
)
async def test_a_malformed_link_question_is_the_developers_mistake(kwargs: dict[str, Any], message: str) -> None:
    elicitor = Elicitor(conn=None, session_id="s", form=True, cancelled=asyncio.Event(), url=True)
    with pytest.raises(UserError, match=re.escape(message)):
        await elicitor.ask("Go", **kwargs)


async def test_an_elicitation_id_must_be_unique_among_the_open_ones() -> None:
    links = UrlElicitations()
    assert links.new("flow-1") == "flow-1"
    with pytest.raises(UserError, match="already open on this connection"):
        links.new("flow-1")
    assert links.take("flow-1") and not links.take("flow-1")
    assert links.new("flow-1") == "flow-1"  # completed: the id may be used again
