"""`AcpCallbackHandler` in a hand-built server: content-block mapper, session-id extractor, calls left open."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from acp.schema import AgentMessageChunk, Annotations, ImageContentBlock, TextContentBlock, ToolCallProgress
from acpkit_core.permissions import PermissionPolicy
from acpkit_core.testing import PromptResult
from langchain.agents import create_agent
from langchain_acp import AcpCallbackHandler, bind_connection, to_acp_blocks
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from lc_helpers import Call, FakeChatModel, Reply
from lc_sdk_pipe import HandBuilt, connect_sdk_agent

pytestmark = pytest.mark.timeout(30)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


class PictureModel(FakeChatModel):
    """Streams a text piece, then an image block, then more text."""

    def _chunks(self, reply: Reply) -> Iterator[AIMessageChunk]:
        yield AIMessageChunk(content=[{"type": "text", "text": "Here it is:"}])
        yield AIMessageChunk(content=[{"type": "image", "base64": PNG, "mime_type": "image/png"}])
        yield AIMessageChunk(content=" a dot.", chunk_position="last")


def _chunks(updates: list[Any]) -> list[Any]:
    return [u for u in updates if isinstance(u, AgentMessageChunk)]


async def _prompt_with_handler(
    graph: Any, text: str, make_handler: Callable[[Any, str], AcpCallbackHandler]
) -> PromptResult:
    """One prompt to a hand-built server whose turn runs `graph` with `make_handler(conn, session_id)`'s handlers."""

    async def run(conn: Any, session_id: str, prompt: str) -> str:
        handler = make_handler(conn, session_id)
        await graph.ainvoke({"messages": [HumanMessage(content=prompt)]}, {"callbacks": handler.handlers()})
        return "end_turn"

    async with connect_sdk_agent(HandBuilt(run)) as c:
        await c.initialize()
        sid = await c.new_session()
        return await c.prompt(text, session_id=sid)


@pytest.mark.parametrize("mapper", ["default", "to_acp_blocks", "annotate"])
async def test_content_block_mapper(mapper: str) -> None:
    graph = create_agent(PictureModel(), tools=[])

    def annotate(content: Any) -> list[Any]:
        return [
            TextContentBlock(type="text", text=b.text, annotations=Annotations(audience=["user"]))
            for b in to_acp_blocks(content)
            if isinstance(b, TextContentBlock)
        ]

    mappers: dict[str, Any] = {"default": None, "to_acp_blocks": to_acp_blocks, "annotate": annotate}

    r = await _prompt_with_handler(
        graph, "show me", lambda conn, session_id: AcpCallbackHandler(conn, session_id, content_mapper=mappers[mapper])
    )
    chunks = _chunks(r.updates)
    assert len({u.message_id for u in chunks}) == 1  # one message
    contents = [u.content for u in chunks]
    if mapper == "default":
        assert [(b.type, b.text) for b in contents] == [("text", "Here it is:"), ("text", " a dot.")]
    elif mapper == "to_acp_blocks":
        assert [b.type for b in contents] == ["text", "image", "text"]
        image = contents[1]
        assert isinstance(image, ImageContentBlock) and (image.data, image.mime_type) == (PNG, "image/png")
        assert r.text == "Here it is: a dot."
    else:
        assert [(b.text, b.annotations.audience) for b in contents] == [
            ("Here it is:", ["user"]),
            (" a dot.", ["user"]),
        ]


@pytest.mark.parametrize("stream", [False, True])
async def test_stream_tokens_decides_whether_tokens_are_sent(stream: bool) -> None:
    """`stream_tokens=False` sends no token; turned on afterwards, the same handler sends them."""
    graph = create_agent(FakeChatModel(script=[Reply(text=["Hello", " there"])]), tools=[])

    def make(conn: Any, session_id: str) -> AcpCallbackHandler:
        handler = AcpCallbackHandler(conn, session_id, stream_tokens=False)
        handler.stream_tokens = stream
        return handler

    r = await _prompt_with_handler(graph, "hi", make)
    assert [(u.content.type, u.content.text) for u in _chunks(r.updates)] == (
        [("text", "Hello"), ("text", " there")] if stream else []
    )


@tool
def note(text: str) -> str:
    """Notes something (sync: LangChain runs it in a worker thread)."""
    return f"noted {text}"


@tool
async def echo(text: str) -> str:
    """Echoes."""
    return text


def _by_session(config: RunnableConfig) -> str | None:
    return config.get("configurable", {}).get("session_id")


async def test_one_handler_for_every_session_with_a_session_id_extractor() -> None:
    def script(n: int) -> list[Reply]:
        return [
            Reply(text=f"a{n}", calls=[Call("note", {"text": f"n{n}"}, f"n{n}"), Call("echo", {"text": "x"}, f"e{n}")]),
            Reply(text=f"b{n}"),
        ]

    graphs = {
        "s1": create_agent(FakeChatModel(script=script(1)), tools=[note, echo], checkpointer=InMemorySaver()),
        "s2": create_agent(FakeChatModel(script=script(2)), tools=[note, echo], checkpointer=InMemorySaver()),
    }
    handlers: list[AcpCallbackHandler] = []

    async def run(conn: Any, session_id: str, text: str) -> str:
        if not handlers:  # one handler for the whole connection, made on the first prompt
            handlers.append(AcpCallbackHandler(conn, session_id_extractor=_by_session))
        config: RunnableConfig = {
            "configurable": {"thread_id": f"thread-{session_id}", "session_id": session_id},
            "callbacks": handlers[0].handlers(),
        }
        await graphs[session_id].ainvoke({"messages": [HumanMessage(content=text)]}, config)
        return "end_turn"

    async with connect_sdk_agent(HandBuilt(run)) as c:
        await c.initialize()
        s1, s2 = await c.new_session(), await c.new_session()
        r1, r2 = await asyncio.gather(c.prompt("one", session_id=s1), c.prompt("two", session_id=s2))
    assert (r1.text, r2.text) == ("a1b1", "a2b2")
    assert set(r1.tool_calls) == {"n1", "e1"} and set(r2.tool_calls) == {"n2", "e2"}
    for r, n in ((r1, 1), (r2, 2)):
        assert r.tool_calls[f"n{n}"].statuses == ["pending", "in_progress", "completed"]
        assert r.tool_calls[f"e{n}"].statuses == ["pending", "in_progress", "completed"]


def test_a_connection_needs_a_session_id_or_an_extractor() -> None:
    with pytest.raises(ValueError, match=r"session_id=\.\.\.\) or how to find it"):
        AcpCallbackHandler(object())  # type: ignore[arg-type]


@tool
async def slow_ok() -> str:
    """Finishes after a moment."""
    await asyncio.sleep(0.3)
    return "ok"


@tool
async def explode() -> str:
    """Raises an unexpected error (not a ToolException: the tool node lets it through)."""
    raise RuntimeError("kaboom")


@pytest.mark.parametrize("how", ["session_id", "extractor"])
async def test_handler_alone_closes_the_calls_a_failed_run_left_open(how: str) -> None:
    """No `bind_connection`: the handler itself closes the sibling of a call that raised."""
    graph = create_agent(
        FakeChatModel(script=[Reply(calls=[Call("slow_ok", {}, "p1"), Call("explode", {}, "p2")])]),
        tools=[slow_ok, explode],
    )

    async def run(conn: Any, session_id: str, text: str) -> str:
        handler = (
            AcpCallbackHandler(conn, session_id)
            if how == "session_id"
            else AcpCallbackHandler(conn, session_id_extractor=_by_session)
        )
        config: RunnableConfig = {"configurable": {"session_id": session_id}, "callbacks": handler.handlers()}
        try:
            await graph.ainvoke({"messages": [HumanMessage(content=text)]}, config)
        except RuntimeError:
            return "refusal"
        return "end_turn"

    async with connect_sdk_agent(HandBuilt(run)) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("parallel", session_id=sid)
        await asyncio.sleep(0.5)  # the survivor's own end, arriving late, must not reopen anything
        late = c.updates[sid][len(r.updates) :]
    assert r.stop_reason == "refusal"
    assert r.tool_calls["p2"].statuses == ["pending", "in_progress", "failed"]
    assert r.tool_calls["p1"].statuses == ["pending", "in_progress", "failed"]
    closing = [u for u in r.updates if isinstance(u, ToolCallProgress) and u.tool_call_id == "p1" and u.status]
    assert closing[-1].raw_output == {"error": "The run stopped before this tool call finished."}
    assert [u for u in late if getattr(u, "tool_call_id", None)] == []


async def _delete_with_the_handler_alone(delete_file: Any, answer: str) -> Any:
    """A model that deletes `old.txt` with `delete_file`, under `bind_connection`'s policy (ask about
    deletes) and `callbacks=[AcpCallbackHandler()]` (no `handlers()`); the client answers `answer`."""
    graph = create_agent(
        FakeChatModel(script=[Reply(calls=[Call("delete_file", {"path": "old.txt"}, "d1")]), Reply(text="ok")]),
        tools=[delete_file],
    )

    async def run(conn: Any, session_id: str, text: str) -> str:
        async with bind_connection(conn, session_id, permission_policy=PermissionPolicy(ask=("delete_*",))):
            await graph.ainvoke({"messages": [HumanMessage(content=text)]}, {"callbacks": [AcpCallbackHandler()]})
        return "end_turn"

    async with connect_sdk_agent(HandBuilt(run), permission_answers=[answer]) as c:
        await c.initialize()
        sid = await c.new_session()
        return await c.prompt("delete old.txt", session_id=sid)


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
async def test_the_handler_alone_gates_every_tool(answer: str) -> None:
    """`callbacks=[handler]`, without `handlers()`: the handler itself passes each tool run through
    the gate of `bind_connection` before the tool body runs (its policy asks about deletes)."""
    ran: list[str] = []

    @tool
    async def delete_file(path: str) -> str:
        """Delete a file (pretend)."""
        ran.append(path)
        return f"deleted {path}"

    r = await _delete_with_the_handler_alone(delete_file, answer)
    assert r.stop_reason == "end_turn"
    assert [p.tool_call.tool_call_id for p in r.permission_requests] == ["d1"]
    if answer == "allow_once":
        assert ran == ["old.txt"]
        assert r.tool_calls["d1"].statuses[-2:] == ["in_progress", "completed"]
    else:
        assert ran == []
        assert r.tool_calls["d1"].status == "failed" and "in_progress" not in r.tool_calls["d1"].statuses


async def test_a_content_mapper_that_raises_drops_its_chunk_not_the_run(caplog: pytest.LogCaptureFixture) -> None:
    """The user's `content_mapper` fails on the image chunk: that chunk is dropped and logged; the
    text around it still streams and the run ends as usual."""
    graph = create_agent(PictureModel(), tools=[])

    def text_only(content: Any) -> list[Any]:
        if isinstance(content, list) and any(b.get("type") == "image" for b in content if isinstance(b, dict)):
            raise ValueError("no images here")
        return list(to_acp_blocks(content))

    r = await _prompt_with_handler(
        graph, "show me", lambda conn, session_id: AcpCallbackHandler(conn, session_id, content_mapper=text_only)
    )
    assert r.stop_reason == "end_turn"
    assert [(u.content.type, u.content.text) for u in _chunks(r.updates)] == [
        ("text", "Here it is:"),
        ("text", " a dot."),
    ]
    assert "the content_mapper raised on a chunk: ValueError('no images here')" in caplog.text


async def test_a_session_id_extractor_that_raises_leaves_the_run_unreported(caplog: pytest.LogCaptureFixture) -> None:
    """The extractor fails: the run goes on and ends as usual, with nothing reported for it, and the
    failure is logged."""
    graph = create_agent(FakeChatModel(script=[Reply(text="hello there")]), tools=[])

    def broken(config: RunnableConfig) -> str | None:
        raise KeyError("session_id")

    r = await _prompt_with_handler(
        graph, "hi", lambda conn, session_id: AcpCallbackHandler(conn, session_id_extractor=broken)
    )
    assert r.stop_reason == "end_turn"
    assert _chunks(r.updates) == []
    assert "the session_id_extractor raised: KeyError('session_id')" in caplog.text


class _Named(FakeChatModel):
    model_name: str = "fake"


@pytest.mark.parametrize("notices", [True, False])
async def test_fallback_notices_in_a_hand_built_server(notices: bool) -> None:
    """`AcpCallbackHandler(..., fallback_notices=True)`: a model that takes over from a failed one is
    told before it answers. Off by default: no notice, the answer alone."""

    def broken(messages: list[Any]) -> Reply:
        raise ConnectionError("the provider hung up")

    model = _Named(model_name="primary", script=[broken]).with_fallbacks(
        [_Named(model_name="backup", script=[Reply(text="from the backup")])]
    )

    async def call(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("call", call)
    builder.add_edge(START, "call")
    builder.add_edge("call", END)
    graph = builder.compile()

    r = await _prompt_with_handler(
        graph, "hi", lambda conn, session_id: AcpCallbackHandler(conn, session_id, fallback_notices=notices)
    )
    assert r.stop_reason == "end_turn"
    told = [u.field_meta for u in _chunks(r.updates) if u.field_meta]
    if notices:
        assert told == [
            {
                "acpkit": {
                    "notice": {
                        "severity": "warning",
                        "title": "Model fallback",
                        "description": "`primary` failed (ConnectionError: the provider hung up); trying `backup`.",
                    }
                }
            }
        ]
    else:
        assert told == []
    assert r.text.endswith("from the backup")


async def test_a_sync_tool_refused_without_the_twin_is_named_in_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """`callbacks=[handler]` and a sync tool: LangChain runs the handler's coroutine in a loop of its
    own in the tool's thread and only logs what it raises, so a refusal cannot stop the tool there.
    The handler says so, naming the fix (`handlers()`, which gates sync tools: see
    `test_langchain_handbuilt.py`)."""
    ran: list[str] = []

    @tool
    def delete_file(path: str) -> str:
        """Delete a file (pretend; sync: LangChain runs it in a worker thread)."""
        ran.append(path)
        return f"deleted {path}"

    r = await _delete_with_the_handler_alone(delete_file, "reject_once")
    assert [p.tool_call.tool_call_id for p in r.permission_requests] == ["d1"]
    assert "a sync tool the gate refused runs anyway: pass callbacks=handler.handlers()" in caplog.text
    assert ran == ["old.txt"]  # LangChain's limitation, which the warning names
