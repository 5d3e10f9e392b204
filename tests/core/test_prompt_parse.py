"""parse_prompt: every block type, every refusal with its exact message, models and dicts alike."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from acp.schema import (
    Annotations,
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from acpkit_core.errors import PromptError
from acpkit_core.prompt import base64_problem, guess_media_type, is_textual, parse_prompt
from acpkit_core.prompt.ir import Binary, ContextRef, Link, Prompt, Text

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg=="
OK_TEXT = {"type": "text", "text": "hello"}


def error_of(blocks: Any) -> str:
    with pytest.raises(PromptError) as info:
        parse_prompt(blocks)
    return str(info.value)


@pytest.mark.parametrize(
    ("blocks", "message"),
    [
        ("hello", "prompt: expected a list of content blocks, got string"),
        ({"type": "text", "text": "x"}, "prompt: expected a list of content blocks, got object"),
        (None, "prompt: expected a list of content blocks, got null"),
        (3, "prompt: expected a list of content blocks, got number"),
        ([OK_TEXT, "hi"], "prompt[1]: expected a content block object, got string"),
        ([OK_TEXT, None], "prompt[1]: expected a content block object, got null"),
        ([{"text": "x"}], "prompt[0]: type: missing required field"),
        ([{"type": 7}], "prompt[0]: type: expected a string, got number"),
        (
            [OK_TEXT, {"type": "video", "data": "AAAA"}],
            "prompt[1] (video): type: unknown content block type; "
            "expected one of text, image, audio, resource_link, resource",
        ),
        ([{"type": "text"}], "prompt[0] (text): text: missing required field"),
        ([{"type": "text", "text": None}], "prompt[0] (text): text: expected a string, got null"),
        ([{"type": "text", "text": ["a"]}], "prompt[0] (text): text: expected a string, got array"),
        (
            [{"type": "text", "text": "a", "annotations": "x"}],
            "prompt[0] (text): annotations: expected an object, got string",
        ),
        ([{"type": "text", "text": "a", "_meta": [1]}], "prompt[0] (text): _meta: expected an object, got array"),
        ([{"type": "image", "data": PNG}], "prompt[0] (image): mimeType: missing required field"),
        ([{"type": "image", "data": PNG, "mimeType": ""}], "prompt[0] (image): mimeType: must not be empty"),
        ([{"type": "audio", "data": "AAAA", "mimeType": ""}], "prompt[0] (audio): mimeType: must not be empty"),
        ([{"type": "image", "mimeType": "image/png"}], "prompt[0] (image): data: missing required field"),
        (
            [{"type": "image", "mimeType": "image/png", "data": 12}],
            "prompt[0] (image): data: expected a string, got number",
        ),
        ([{"type": "image", "mimeType": "image/png", "data": ""}], "prompt[0] (image): data: must not be empty"),
        (
            [OK_TEXT, OK_TEXT, {"type": "image", "mimeType": "image/png", "data": PNG[:17] + "!" + PNG[18:]}],
            "prompt[2] (image): data: not valid base64 (at character 17)",
        ),
        (
            [{"type": "image", "mimeType": "image/png", "data": "iVBO Rw0K"}],
            "prompt[0] (image): data: not valid base64 (at character 4)",
        ),
        (
            [{"type": "image", "mimeType": "image/png", "data": "iVBORw0\n"}],
            "prompt[0] (image): data: not valid base64 (at character 7)",
        ),
        (
            [{"type": "image", "mimeType": "image/png", "data": "iVBORw0"}],
            "prompt[0] (image): data: not valid base64 (length 7 is not a multiple of 4)",
        ),
        (
            [{"type": "image", "mimeType": "image/png", "data": "iV=BORw0"}],
            "prompt[0] (image): data: not valid base64 (at character 2)",
        ),
        (
            [{"type": "image", "mimeType": "image/png", "data": "iV==="}],
            "prompt[0] (image): data: not valid base64 (at character 2)",
        ),
        (
            [{"type": "image", "mimeType": "image/png", "data": "aGVsbG8-_w=="}],
            "prompt[0] (image): data: not valid base64 (at character 7)",
        ),
        (
            [{"type": "audio", "mimeType": "audio/wav", "data": "AAAé"}],
            "prompt[0] (audio): data: not valid base64 (at character 3)",
        ),
        (
            [{"type": "image", "mimeType": "image/png", "data": PNG, "uri": 5}],
            "prompt[0] (image): uri: expected a string, got number",
        ),
        ([{"type": "resource_link", "name": "a"}], "prompt[0] (resource_link): uri: missing required field"),
        ([{"type": "resource_link", "uri": "", "name": "a"}], "prompt[0] (resource_link): uri: must not be empty"),
        ([{"type": "resource_link", "uri": "file:///a"}], "prompt[0] (resource_link): name: missing required field"),
        (
            [{"type": "resource_link", "uri": "file:///a", "name": "a", "size": "73"}],
            "prompt[0] (resource_link): size: expected a non-negative integer, got string",
        ),
        (
            [{"type": "resource_link", "uri": "file:///a", "name": "a", "size": -1}],
            "prompt[0] (resource_link): size: expected a non-negative integer, got -1",
        ),
        (
            [{"type": "resource_link", "uri": "file:///a", "name": "a", "size": True}],
            "prompt[0] (resource_link): size: expected a non-negative integer, got boolean",
        ),
        (
            [{"type": "resource_link", "uri": "file:///a", "name": "a", "size": 1.5}],
            "prompt[0] (resource_link): size: expected a non-negative integer, got number",
        ),
        (
            [{"type": "resource_link", "uri": "file:///a", "name": "a", "title": 1}],
            "prompt[0] (resource_link): title: expected a string, got number",
        ),
        (
            [{"type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": {}}],
            "prompt[0] (resource_link): mimeType: expected a string, got object",
        ),
        ([{"type": "resource"}], "prompt[0] (resource): resource: missing required field"),
        ([{"type": "resource", "resource": "x"}], "prompt[0] (resource): resource: expected an object, got string"),
        (
            [{"type": "resource", "resource": {"uri": "file:///a"}}],
            "prompt[0] (resource): resource.text: missing required field (a resource needs text or blob)",
        ),
        (
            [{"type": "resource", "resource": {"uri": "file:///a", "text": "x", "blob": "AAAA"}}],
            "prompt[0] (resource): resource: has both text and blob; expected exactly one",
        ),
        (
            [{"type": "resource", "resource": {"text": "x"}}],
            "prompt[0] (resource): resource.uri: missing required field",
        ),
        (
            [{"type": "resource", "resource": {"uri": "", "text": "x"}}],
            "prompt[0] (resource): resource.uri: must not be empty",
        ),
        (
            [{"type": "resource", "resource": {"uri": "file:///a", "text": 3}}],
            "prompt[0] (resource): resource.text: expected a string, got number",
        ),
        (
            [{"type": "resource", "resource": {"uri": "file:///a", "blob": "AA!A"}}],
            "prompt[0] (resource): resource.blob: not valid base64 (at character 2)",
        ),
        (
            [{"type": "resource", "resource": {"uri": "file:///a", "blob": "AAAA", "mimeType": 3}}],
            "prompt[0] (resource): resource.mimeType: expected a string, got number",
        ),
        (
            [{"type": "resource", "resource": {"uri": "file:///a", "text": "", "_meta": 1}}],
            "prompt[0] (resource): resource._meta: expected an object, got number",
        ),
    ],
)
def test_refusals_name_block_type_field_and_reason(blocks: Any, message: str) -> None:
    assert error_of(blocks) == message


def test_error_attributes() -> None:
    with pytest.raises(PromptError) as info:
        parse_prompt([OK_TEXT, OK_TEXT, {"type": "image", "mimeType": "image/png", "data": "AA*A"}])
    err = info.value
    assert (err.index, err.block_type, err.field, err.reason) == (
        2,
        "image",
        "data",
        "not valid base64 (at character 2)",
    )
    assert isinstance(err, ValueError)


def test_every_block_type_from_dicts_keeps_everything() -> None:
    ann = {"audience": ["user"], "priority": 0.5, "lastModified": "2025-01-01T00:00:00Z"}
    prompt = parse_prompt(
        [
            {"type": "text", "text": "hi", "annotations": ann, "_meta": {"k": 1}},
            {"type": "image", "mimeType": "image/png", "data": PNG, "uri": "https://x/red.png", "annotations": ann},
            {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg==", "_meta": {"a": True}},
            {
                "type": "resource_link",
                "uri": "https://example.com/guide.pdf",
                "name": "guide.pdf",
                "title": "Guide",
                "description": "All of it",
                "mimeType": "application/pdf",
                "size": 2048,
                "annotations": ann,
                "_meta": {"m": 2},
            },
            {
                "type": "resource",
                "resource": {"uri": "file:///a/b.py", "text": "print(1)\n", "_meta": {"inner": 1}},
                "annotations": ann,
                "_meta": {"outer": 1},
            },
            {"type": "resource", "resource": {"uri": "file:///a/r.pdf", "blob": "JVBERg=="}},
            {"type": "text", "text": "x", "unknownField": 1},
        ]
    )
    assert prompt == Prompt(
        (
            Text(text="hi", annotations=ann, meta={"k": 1}),
            Binary(base64=PNG, media_type="image/png", source="image", uri="https://x/red.png", annotations=ann),
            Binary(base64="UklGRg==", media_type="audio/wav", source="audio", meta={"a": True}),
            Link(
                uri="https://example.com/guide.pdf",
                name="guide.pdf",
                title="Guide",
                description="All of it",
                media_type="application/pdf",
                size=2048,
                annotations=ann,
                meta={"m": 2},
            ),
            ContextRef(
                uri="file:///a/b.py",
                text="print(1)\n",
                media_type="text/x-python",
                annotations=ann,
                meta={"outer": 1},
                resource_meta={"inner": 1},
            ),
            Binary(base64="JVBERg==", media_type="application/pdf", source="blob", uri="file:///a/r.pdf"),
            Text(text="x"),
        )
    )
    blob = prompt[5]
    assert isinstance(blob, Binary)
    assert blob.data == b"%PDF" and blob.size == 4


def test_models_and_dicts_give_the_same_prompt() -> None:
    ann = Annotations(audience=["assistant"], priority=1.0)
    models = [
        TextContentBlock(type="text", text="hi", annotations=ann, field_meta={"k": 1}),
        ImageContentBlock(type="image", mime_type="image/png", data=PNG, uri="file:///p/red.png"),
        AudioContentBlock(type="audio", mime_type="audio/mpeg", data="SUQz"),
        ResourceContentBlock(type="resource_link", uri="file:///p/red.png", name="red.png", size=73),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri="file:///p/notes.md", text="# N\n", mime_type="text/markdown"),
        ),
        EmbeddedResourceContentBlock(
            type="resource", resource=BlobResourceContents(uri="file:///p/x.bin", blob="AAEC")
        ),
    ]
    dicts = [m.model_dump(by_alias=True, exclude_none=True) for m in models]
    assert parse_prompt(models) == parse_prompt(dicts)
    first = parse_prompt(models)[0]
    assert isinstance(first, Text)
    assert first.annotations == {"audience": ["assistant"], "priority": 1.0}
    assert first.meta == {"k": 1}


def test_model_with_bad_base64_is_refused() -> None:
    block = ImageContentBlock(type="image", mime_type="image/png", data="not base64!")
    assert error_of([block]) == "prompt[0] (image): data: not valid base64 (at character 3)"


def test_empty_prompt_and_empty_text_are_kept() -> None:
    assert parse_prompt([]) == Prompt(())
    assert parse_prompt([{"type": "text", "text": ""}]) == Prompt((Text(text=""),))
    assert parse_prompt(()) == Prompt(())


def test_without_empty_text_leaves_out_only_empty_text_blocks() -> None:
    prompt = parse_prompt(
        [
            {"type": "text", "text": ""},
            {"type": "text", "text": "look"},
            {"type": "resource_link", "uri": "file:///w/a.py", "name": "a.py"},
            {"type": "text", "text": ""},
        ]
    )
    kept = prompt.without_empty_text()
    assert kept == Prompt((prompt[1], prompt[2]))
    assert parse_prompt([{"type": "text", "text": ""}]).without_empty_text() == Prompt(())


def test_media_type_is_inferred_from_uri_path_only() -> None:
    link = parse_prompt([{"type": "resource_link", "uri": "file:///w/run.py?symbol=main#L3:9", "name": "run"}])[0]
    assert isinstance(link, Link) and link.media_type == "text/x-python"
    unknown = parse_prompt([{"type": "resource_link", "uri": "file:///w/Makefile", "name": "Makefile"}])[0]
    assert isinstance(unknown, Link) and unknown.media_type is None
    directory = parse_prompt([{"type": "resource_link", "uri": "file:///workspace/acpkit/", "name": ""}])[0]
    assert directory == Link(uri="file:///workspace/acpkit/", name="/workspace/acpkit/")
    explicit = parse_prompt(
        [{"type": "resource_link", "uri": "file:///w/a.py", "name": "a", "mimeType": "text/plain"}]
    )[0]
    assert isinstance(explicit, Link) and explicit.media_type == "text/plain"
    blob = parse_prompt([{"type": "resource", "resource": {"uri": "file:///w/noext", "blob": "AAAA"}}])[0]
    assert isinstance(blob, Binary) and blob.media_type is None
    assert guess_media_type("file:///w/a.ts") == "text/x-typescript"
    assert guess_media_type("https://example.com/x.tar.gz") == "application/gzip"
    assert guess_media_type("file:///w/caf%C3%A9.md") == "text/markdown"
    assert guess_media_type("file:///w/no.ext/") is None
    assert guess_media_type("http://[bad") is None


@pytest.mark.parametrize(
    ("media_type", "textual"),
    [
        ("text/plain", True),
        ("text/markdown; charset=utf-8", True),
        ("application/json", True),
        ("application/ld+json", True),
        ("image/svg+xml", True),
        ("application/x-yaml", True),
        ("application/javascript", True),
        ("application/toml", True),
        ("message/rfc822", True),
        ("IMAGE/PNG", False),
        ("application/pdf", False),
        ("application/octet-stream", False),
        ("audio/wav", False),
        (None, False),
        ("", False),
    ],
)
def test_is_textual(media_type: str | None, textual: bool) -> None:
    assert is_textual(media_type) is textual


def test_binary_sent_as_text_becomes_a_link_with_a_note() -> None:
    garbage = "\ufffdPNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    prompt = parse_prompt(
        [{"type": "resource", "resource": {"uri": "file:///p/red.png", "text": garbage, "mimeType": "image/png"}}]
    )
    assert prompt == Prompt(
        (
            Link(
                uri="file:///p/red.png",
                name="red.png",
                media_type="image/png",
                note="the client sent this image/png file as text; its binary content did not survive "
                "that conversion and is not included",
            ),
        )
    )
    # Inferred media type counts too.
    inferred = parse_prompt([{"type": "resource", "resource": {"uri": "file:///p/red.png", "text": garbage}}])[0]
    assert isinstance(inferred, Link)


@pytest.mark.parametrize(
    ("mime", "text"),
    [
        ("text/plain", "caf\ufffd au lait"),  # textual: kept even with a replacement char
        ("image/svg+xml", "<svg>\ufffd</svg>"),  # svg is text
        ("application/octet-stream", "clean ascii"),  # no sign of lost bytes
        (None, "no type \ufffd at all"),  # unknown type: kept
    ],
)
def test_text_resources_that_stay_context(mime: str | None, text: str) -> None:
    resource: dict[str, Any] = {"uri": "file:///p/thing", "text": text}
    if mime:
        resource["mimeType"] = mime
    part = parse_prompt([{"type": "resource", "resource": resource}])[0]
    assert part == ContextRef(uri="file:///p/thing", text=text, media_type=mime)


def test_base64_problem() -> None:
    assert base64_problem("") is None
    assert base64_problem("AA==") is None
    assert base64_problem("AAA=") is None
    assert base64_problem("AAAA") is None
    assert base64_problem("A===") == "not valid base64 (at character 1)"
    assert base64_problem("====") == "not valid base64 (at character 0)"
    big = base64.b64encode(bytes(range(256)) * 9000).decode()
    assert base64_problem(big) is None
    broken = big[: (1 << 20) + 5] + "*" + big[(1 << 20) + 6 :]
    assert base64_problem(broken) == f"not valid base64 (at character {(1 << 20) + 5})"


def test_binary_decodes_lazily_once() -> None:
    part = parse_prompt([{"type": "image", "mimeType": "image/png", "data": PNG}])[0]
    assert isinstance(part, Binary)
    first = part.data
    assert part.data is first
    assert len(first) == part.size == 73


def test_parser_never_touches_the_uri(tmp_path: Any) -> None:
    target = tmp_path / "secret.txt"
    target.write_text("top secret")
    prompt = parse_prompt([{"type": "resource_link", "uri": target.as_uri(), "name": "secret.txt"}])
    assert "top secret" not in repr(prompt)
