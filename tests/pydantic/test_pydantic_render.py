"""pydantic_acp._render: the prompt IR as pydantic-ai user content, and what a real model receives."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from acpkit_core.prompt import parse_prompt
from acpkit_core.prompt.ir import Binary, Link
from pydantic_acp._render import render_part, render_prompt
from pydantic_ai import Agent
from pydantic_ai.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
    VideoUrl,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

PDF_TYPE = "application/pdf"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg=="


def link(uri: str, media_type: str | None = None, **kw: Any) -> Link:
    return Link(uri=uri, name="x", media_type=media_type, **kw)


def test_text_only_prompt_is_one_string() -> None:
    assert render_prompt(parse_prompt([{"type": "text", "text": "hi"}])) == "hi"
    two = parse_prompt([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    assert render_prompt(two) == "a\nb"
    assert render_prompt(parse_prompt([])) == ""


def test_mixed_prompt_is_a_list_in_order() -> None:
    prompt = parse_prompt(
        [
            {"type": "text", "text": "Look"},
            {"type": "image", "mimeType": "image/png", "data": PNG},
            {"type": "resource", "resource": {"uri": "file:///p/a.md", "text": "# A"}},
        ]
    )
    rendered = render_prompt(prompt)
    assert rendered == [
        "Look",
        BinaryContent(data=base64.b64decode(PNG), media_type="image/png"),
        '[@a.md](file:///p/a.md)\n<context ref="file:///p/a.md">\n# A\n</context>',
    ]


def test_binary_payload_is_decoded_once() -> None:
    prompt = parse_prompt([{"type": "image", "mimeType": "image/png", "data": PNG}])
    part = prompt[0]
    assert isinstance(part, Binary)
    first, second = render_prompt(prompt), render_prompt(prompt)
    assert isinstance(first, list) and isinstance(second, list)
    a, b = first[0], second[0]
    assert isinstance(a, BinaryContent) and isinstance(b, BinaryContent)
    assert a.data is part.data and b.data is part.data


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (
            link("https://e.com/a.pdf", "application/pdf"),
            DocumentUrl(url="https://e.com/a.pdf", media_type="application/pdf"),
        ),
        (link("HTTPS://e.com/a.png", "image/png"), ImageUrl(url="HTTPS://e.com/a.png", media_type="image/png")),
        (link("http://e.com/a.mp3", "audio/mpeg"), AudioUrl(url="http://e.com/a.mp3", media_type="audio/mpeg")),
        (link("https://e.com/a.mp4", "video/mp4"), VideoUrl(url="https://e.com/a.mp4", media_type="video/mp4")),
        (link("https://e.com/a.html", "text/html"), "[@x](https://e.com/a.html)"),
        (link("https://e.com/a"), "[@x](https://e.com/a)"),
        (link("file:///p/a.pdf", "application/pdf"), "[@x](file:///p/a.pdf)"),
        (link("file:///p/a.png", "image/png"), "[@x](file:///p/a.png)"),
        (link("zed:///agent/x.png", "image/png"), "[@x](zed:///agent/x.png)"),
        (link("ftp://e.com/a.pdf", "application/pdf"), "[@x](ftp://e.com/a.pdf)"),
        (link("https://e.com/a.png", "image/png", note="lost"), "[@x](https://e.com/a.png)\nnote: lost"),
        (link("file:///p/dir/", None, title="ignored"), "[@x](file:///p/dir/)"),
    ],
)
def test_links(part: Link, expected: object) -> None:
    assert render_part(part) == expected


def test_blob_media_types() -> None:
    known = Binary(base64="JVBERg==", media_type="application/pdf", source="blob", uri="file:///r.pdf")
    unknown = Binary(base64="AAAA", media_type=None, source="blob", uri="file:///r")
    audio = Binary(base64="AAAA", media_type="audio/wav", source="audio")
    assert render_part(known) == BinaryContent(data=b"%PDF", media_type="application/pdf")
    assert render_part(unknown) == BinaryContent(data=b"\x00\x00\x00", media_type="application/octet-stream")
    assert render_part(audio) == BinaryContent(data=b"\x00\x00\x00", media_type="audio/wav")


async def test_a_real_agent_receives_the_rendered_prompt() -> None:
    seen: list[ModelMessage] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(messages)
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(model))
    prompt = parse_prompt(
        [
            {"type": "text", "text": "Describe @red.png and read @notes.md"},
            {"type": "image", "mimeType": "image/png", "data": PNG, "uri": "file:///p/red.png"},
            {"type": "resource", "resource": {"uri": "file:///p/notes.md", "text": "pelican"}},
            {"type": "resource_link", "uri": "file:///p/paper.pdf", "name": "paper.pdf"},
        ]
    )
    result = await agent.run(render_prompt(prompt))
    assert result.output == "ok"
    request = seen[0]
    assert isinstance(request, ModelRequest)
    user = request.parts[-1]
    assert isinstance(user, UserPromptPart)
    assert user.content == [
        "Describe @red.png and read @notes.md",
        BinaryContent(data=base64.b64decode(PNG), media_type="image/png"),
        '[@notes.md](file:///p/notes.md)\n<context ref="file:///p/notes.md">\npelican\n</context>',
        "[@paper.pdf](file:///p/paper.pdf)",
    ]
