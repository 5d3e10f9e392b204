"""langchain_acp._render and .content: prompt IR -> LangChain content, per-block converters, and back."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, cast

import pytest
from acp.schema import (
    Annotations,
    AudioContentBlock,
    BlobResourceContents,
    ContentToolCallContent,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from acpkit_core.errors import PromptError
from acpkit_core.prompt import parse_prompt
from acpkit_core.prompt.ir import Binary
from langchain_acp._content import (
    BlockStyle,
    audio_block_to_content,
    embedded_resource_to_content,
    image_block_to_content,
    part_to_content,
    resource_link_to_content,
    text_block_to_content,
    to_acp_blocks,
    to_acp_thoughts,
    to_acp_tool_content,
)
from langchain_acp._render import render_prompt, to_human_message
from langchain_core.messages import HumanMessage, convert_to_openai_messages
from langgraph.graph import END, START, MessagesState, StateGraph
from lc_helpers import message_content

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg=="
PDF = base64.b64encode(b"%PDF-1.4\n").decode()
MIXED: list[dict[str, Any]] = [
    {"type": "text", "text": "Look"},
    {"type": "image", "mimeType": "image/png", "data": PNG},
    {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="},
    {"type": "resource", "resource": {"uri": "file:///w/doc.pdf", "blob": PDF}},
    {"type": "resource_link", "uri": "file:///w/src/a.py", "name": "a.py", "size": 10},
    {"type": "resource", "resource": {"uri": "file:///w/n.md", "text": "# N\n"}},
]


def test_legacy_rendering() -> None:
    assert render_prompt(parse_prompt(MIXED), root_dir="/w") == [
        {"type": "text", "text": "Look"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "audio", "base64": "UklGRg==", "mime_type": "audio/wav"},
        {
            "type": "text",
            "text": "[@doc.pdf](file:///w/doc.pdf)\ntype: application/pdf\nsize: 9 bytes\n"
            "note: binary content, not included as text",
        },
        {"type": "text", "text": "[@a.py](file:///w/src/a.py)\npath: src/a.py\ntype: text/x-python\nsize: 10 bytes"},
        {"type": "text", "text": '[@n.md](file:///w/n.md)\n<context ref="file:///w/n.md">\n# N\n</context>'},
    ]


def test_v1_rendering() -> None:
    rendered = render_prompt(parse_prompt(MIXED), blocks="v1")
    assert rendered[1:4] == [
        {"type": "image", "base64": PNG, "mime_type": "image/png"},
        {"type": "audio", "base64": "UklGRg==", "mime_type": "audio/wav"},
        {"type": "file", "base64": PDF, "mime_type": "application/pdf", "extras": {"filename": "doc.pdf"}},
    ]
    assert rendered[4] == {"type": "text", "text": "[@a.py](file:///w/src/a.py)\ntype: text/x-python\nsize: 10 bytes"}


def test_payload_is_never_decoded_or_reencoded(monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = parse_prompt(MIXED)

    def boom(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("base64 was decoded or encoded")

    for name in ("b64decode", "b64encode", "standard_b64decode", "a2b_base64", "b2a_base64"):
        if hasattr(base64, name):
            monkeypatch.setattr(base64, name, boom)
    import binascii

    monkeypatch.setattr(binascii, "a2b_base64", boom)
    monkeypatch.setattr(binascii, "b2a_base64", boom)
    for style in ("legacy", "v1"):
        rendered = render_prompt(prompt, blocks=style)  # type: ignore[arg-type]
        assert PNG in str(rendered)
    image = prompt[1]
    assert isinstance(image, Binary)
    v1 = render_prompt(prompt, blocks="v1")
    assert v1[1]["base64"] is image.base64


@pytest.mark.parametrize(
    ("blocks", "content"),
    [
        ([{"type": "text", "text": "hello"}], "hello"),
        ([{"type": "text", "text": ""}, {"type": "text", "text": "hello"}, {"type": "text", "text": ""}], "hello"),
        ([{"type": "text", "text": ""}], ""),
        (
            [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
            [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        ),
        (
            [{"type": "text", "text": "hi", "annotations": {"priority": 0.5}}],
            [{"type": "text", "text": "hi", "extras": {"annotations": {"priority": 0.5}}}],
        ),
        (
            [{"type": "resource_link", "uri": "https://example.com/a", "name": "a"}],
            [{"type": "text", "text": "[@a](https://example.com/a)"}],
        ),
        (
            [{"type": "resource", "resource": {"uri": "file:///p/n.md", "text": "x", "mimeType": "text/markdown"}}],
            [{"type": "text", "text": '[@n.md](file:///p/n.md)\n<context ref="file:///p/n.md">\nx\n</context>'}],
        ),
    ],
    ids=["one-text", "empty-blocks-aside", "only-empty", "two-texts", "annotated", "link-alone", "resource-alone"],
)
def test_only_a_prompt_of_one_plain_text_block_is_a_str(blocks: list[dict[str, Any]], content: object) -> None:
    message = to_human_message(parse_prompt(blocks))
    assert message.content == content
    assert isinstance(render_prompt(parse_prompt(blocks)), list)


def test_human_message_and_what_a_provider_gets() -> None:
    prompt = parse_prompt(MIXED)
    legacy = to_human_message(prompt, id="m1")
    assert isinstance(legacy, HumanMessage) and legacy.id == "m1"
    # LangChain reads the legacy data URL back as a standard image block with the same base64.
    image = dict(legacy.content_blocks[1])
    image.pop("id", None)
    assert image == {"type": "image", "base64": PNG, "mime_type": "image/png"}
    openai = convert_to_openai_messages([to_human_message(prompt, blocks="v1")])
    assert isinstance(openai, list)
    parts = openai[0]["content"]
    assert parts[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    assert parts[3]["type"] == "file"
    assert parts[3]["file"]["filename"] == "doc.pdf"
    assert parts[3]["file"]["file_data"] == f"data:application/pdf;base64,{PDF}"


def test_per_block_converters_models_and_dicts() -> None:
    text = TextContentBlock(type="text", text="hi")
    assert text_block_to_content(text) == [{"type": "text", "text": "hi"}]
    image = ImageContentBlock(type="image", data=PNG, mime_type="image/png")
    assert image_block_to_content(image, blocks="v1") == [{"type": "image", "base64": PNG, "mime_type": "image/png"}]
    audio = {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
    assert audio_block_to_content(audio) == [{"type": "audio", "base64": "UklGRg==", "mime_type": "audio/wav"}]
    link = ResourceContentBlock(type="resource_link", uri="file:///w/a.py", name="a.py")
    assert resource_link_to_content(link, root_dir="/w") == [
        {"type": "text", "text": "[@a.py](file:///w/a.py)\npath: a.py\ntype: text/x-python"}
    ]
    res = EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(uri="file:///w/a.txt", text="x"))
    assert embedded_resource_to_content(res) == [
        {"type": "text", "text": '[@a.txt](file:///w/a.txt)\n<context ref="file:///w/a.txt">\nx\n</context>'}
    ]
    with pytest.raises(PromptError, match=r"prompt \(image\): type: expected a text block"):
        text_block_to_content(image)
    with pytest.raises(PromptError, match="not valid base64"):
        image_block_to_content({"type": "image", "data": "!!!!", "mimeType": "image/png"})


def test_blob_with_unknown_type() -> None:
    blob = Binary(base64="AAAA", media_type=None, source="blob")
    assert part_to_content(blob) == [
        {"type": "text", "text": "[file]\ntype: unknown\nsize: 3 bytes\nnote: binary content, not included as text"}
    ]
    assert part_to_content(blob, blocks="v1") == [
        {"type": "file", "base64": "AAAA", "mime_type": "application/octet-stream"}
    ]


ANN = {"audience": ["user"], "priority": 0.5}


def test_to_acp_blocks_maps_every_kind() -> None:
    content: list[Any] = [
        "plain",
        "",
        {"type": "text", "text": "hello"},
        {"type": "text", "text": ""},
        {"type": "reasoning", "reasoning": "thinking..."},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "image_url", "image_url": "https://e.com/cat.jpg"},
        {"type": "image", "base64": PNG, "mime_type": "image/png"},
        {"type": "image", "url": "https://e.com/dog.png", "mime_type": "image/png"},
        {"type": "audio", "base64": "UklGRg==", "mime_type": "audio/wav"},
        {"type": "file", "base64": PDF, "mime_type": "application/pdf", "extras": {"filename": "a.pdf"}},
        {"type": "file", "url": "https://e.com/b.pdf", "mime_type": "application/pdf"},
        {"type": "text-plain", "text": "notes", "mime_type": "text/plain", "url": "file:///w/n.txt"},
        {"type": "tool_call", "name": "x", "args": {}, "id": "1"},
        {"type": "tool_call_chunk", "name": "x", "args": "{", "id": "1", "index": 0},
        {"type": "non_standard", "value": {"x": 1}},
        {"type": "image"},
        42,
    ]
    assert to_acp_blocks(content) == [
        TextContentBlock(type="text", text="plain"),
        TextContentBlock(type="text", text="hello"),
        ImageContentBlock(type="image", data=PNG, mime_type="image/png"),
        ResourceContentBlock(type="resource_link", uri="https://e.com/cat.jpg", name="cat.jpg"),
        ImageContentBlock(type="image", data=PNG, mime_type="image/png"),
        ResourceContentBlock(type="resource_link", uri="https://e.com/dog.png", name="dog.png", mime_type="image/png"),
        AudioContentBlock(type="audio", data="UklGRg==", mime_type="audio/wav"),
        EmbeddedResourceContentBlock(
            type="resource", resource=BlobResourceContents(uri="a.pdf", blob=PDF, mime_type="application/pdf")
        ),
        ResourceContentBlock(
            type="resource_link", uri="https://e.com/b.pdf", name="b.pdf", mime_type="application/pdf"
        ),
        EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri="file:///w/n.txt", text="notes", mime_type="text/plain")
        ),
    ]
    assert to_acp_blocks("just text") == [TextContentBlock(type="text", text="just text")]
    assert to_acp_blocks(None) == []


def test_to_acp_blocks_keeps_annotations() -> None:
    blocks = to_acp_blocks(
        [{"type": "text", "text": "a"}, {"type": "text", "text": "b", "annotations": {"priority": 1.0}}],
        annotations=ANN,
    )
    assert blocks == [
        TextContentBlock(type="text", text="a", annotations=Annotations(audience=["user"], priority=0.5)),
        TextContentBlock(type="text", text="b", annotations=Annotations(priority=1.0)),
    ]
    # A LangChain citation list is not an ACP annotation: the default applies.
    cited = to_acp_blocks([{"type": "text", "text": "c", "annotations": [{"type": "citation"}]}], annotations=ANN)
    assert cited[0].annotations == Annotations(audience=["user"], priority=0.5)


def test_to_acp_thoughts() -> None:
    content = [
        {"type": "text", "text": "answer"},
        {"type": "reasoning", "reasoning": "step one"},
        {"type": "thinking", "thinking": "step two"},
        {"type": "reasoning"},
    ]
    assert to_acp_thoughts(content) == [
        TextContentBlock(type="text", text="step one"),
        TextContentBlock(type="text", text="step two"),
    ]
    assert to_acp_thoughts("plain string has no reasoning") == []


def test_to_acp_tool_content() -> None:
    assert to_acp_tool_content("42") == [
        ContentToolCallContent(type="content", content=TextContentBlock(type="text", text="42"))
    ]
    assert to_acp_tool_content({"temp": 21}) == [
        ContentToolCallContent(type="content", content=TextContentBlock(type="text", text='{"temp": 21}'))
    ]
    image = to_acp_tool_content([{"type": "image", "base64": PNG, "mime_type": "image/png"}])
    assert image == [
        ContentToolCallContent(type="content", content=ImageContentBlock(type="image", data=PNG, mime_type="image/png"))
    ]
    assert to_acp_tool_content(7) == [
        ContentToolCallContent(type="content", content=TextContentBlock(type="text", text="7"))
    ]


def test_round_trip_keeps_the_payload() -> None:
    prompt = parse_prompt(MIXED[:3])
    back = to_acp_blocks(render_prompt(prompt, blocks="v1"))
    assert parse_prompt(back) == prompt
    back_legacy = to_acp_blocks(render_prompt(prompt))
    assert parse_prompt(back_legacy) == prompt


REFERENCES = Path(__file__).resolve().parents[2] / "references" / "prompts"
GOLDEN = [p for p in sorted(REFERENCES.glob("*.json")) if "error" not in json.loads(p.read_text(encoding="utf-8"))]


def test_golden_prompts_reach_a_graph_node_unchanged() -> None:
    seen: list[Any] = []

    def node(state: MessagesState) -> dict[str, Any]:
        seen.append(state["messages"][-1])
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("model", node)
    builder.add_edge(START, "model")
    builder.add_edge("model", END)
    graph = builder.compile()
    assert len(GOLDEN) >= 40
    kinds: list[type] = []
    for path in GOLDEN:
        case = json.loads(path.read_text(encoding="utf-8"))
        prompt = parse_prompt(case["prompt"])
        for style, key in (("legacy", "langchain"), ("v1", "langchain_v1")):
            message = to_human_message(prompt, blocks=cast(BlockStyle, style), root_dir=case.get("root_dir"))
            graph.invoke({"messages": [message]})
            assert seen[-1].content == message_content(case["prompt"], case[key]), f"{path.name} ({style})"
            kinds.append(type(seen[-1].content))
    # both forms are exercised: one-text prompts as a str, the rest as the fixtures' list
    assert kinds.count(str) >= 16 and kinds.count(list) >= 80, (kinds.count(str), kinds.count(list))


@pytest.mark.parametrize(
    ("payload", "kind", "mime"),
    [
        (PNG, "image", "image/png"),
        (base64.b64encode(b"\xff\xd8\xff\xe0" + bytes(12)).decode(), "image", "image/jpeg"),
        (base64.b64encode(b"RIFF\x00\x00\x00\x00WEBPVP8 ").decode(), "image", "image/webp"),
        ("UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQAAAAA=", "audio", "audio/wav"),
        (base64.b64encode(b"ID3\x04" + bytes(12)).decode(), "audio", "audio/mpeg"),
        (base64.b64encode(bytes(16)).decode(), "image", "image/*"),
        ("!!", "audio", "audio/*"),
    ],
)
def test_missing_mime_type_is_sniffed_from_the_first_bytes(payload: str, kind: str, mime: str) -> None:
    (block,) = to_acp_blocks([{"type": kind, "base64": payload}])
    assert isinstance(block, ImageContentBlock | AudioContentBlock)
    assert (block.type, block.mime_type, block.data) == (kind, mime, payload)
