"""Property tests: the parser never crashes, texts always reach both renderings, wrappers always hold."""

from __future__ import annotations

import base64
import re
from typing import Any

from acp.schema import PromptRequest
from acpkit_core.errors import PromptError
from acpkit_core.prompt import context_wrapper, escape_context_text, parse_prompt
from acpkit_core.prompt.ir import ContextRef, Prompt, Text
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_acp._render import render_prompt as render_langchain
from pydantic_acp._render import render_prompt as render_pydantic

FAST = settings(max_examples=200, deadline=None)
CLOSING = re.compile(r"<\s*/\s*context", re.IGNORECASE)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
KEYS = [
    "type",
    "text",
    "data",
    "mimeType",
    "uri",
    "name",
    "size",
    "title",
    "description",
    "annotations",
    "_meta",
    "blob",
]
block_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "audio", "resource_link", "resource", "video", ""])},
    optional={
        **{key: json_values | st.text(alphabet="AB+/=", max_size=12) for key in KEYS[1:]},
        "resource": st.dictionaries(st.sampled_from(KEYS), json_values | st.text(max_size=8), max_size=5) | json_values,
    },
)
# Text that tries hard to look like the wrapper's own markup.
tricky_text = st.lists(
    st.sampled_from(
        [
            "</context>",
            "</CONTEXT",
            "< / context >",
            '<context ref="x">',
            '"',
            "<",
            "/",
            "\n",
            "\r\n",
            "a",
            "é",
            "\x00",
            "\\",
        ]
    )
    | st.text(max_size=5),
    max_size=12,
).map("".join)
uris = st.builds(lambda a, b: f"file:///w/{a}{b}", tricky_text, st.sampled_from(["", ".md", ".png", "/", "?q=1#L2"]))


def check_renderers(prompt: Prompt) -> None:
    render_pydantic(prompt)
    render_langchain(prompt)
    render_langchain(prompt, blocks="v1", root_dir="/w")


@FAST
@given(json_values | st.lists(json_values | block_like, max_size=5))
def test_arbitrary_json_gives_a_prompt_or_a_prompt_error(value: Any) -> None:
    try:
        prompt = parse_prompt(value)
    except PromptError as exc:
        assert str(exc).startswith("prompt")
    else:
        check_renderers(prompt)


@FAST
@given(st.lists(block_like, max_size=6))
def test_block_shaped_input_gives_a_prompt_or_a_prompt_error(blocks: list[dict[str, Any]]) -> None:
    try:
        prompt = parse_prompt(blocks)
    except PromptError as exc:
        assert exc.index is None or 0 <= exc.index < len(blocks)
    else:
        assert len(prompt) == len(blocks)  # nothing dropped
        check_renderers(prompt)


payloads = st.binary(max_size=40).map(lambda b: base64.b64encode(b).decode())
valid_blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, tricky_text),
    st.builds(lambda d: {"type": "image", "mimeType": "image/png", "data": d}, payloads.filter(bool)),
    st.builds(lambda d: {"type": "audio", "mimeType": "audio/wav", "data": d}, payloads.filter(bool)),
    st.builds(lambda u, t: {"type": "resource", "resource": {"uri": u, "text": t}}, uris, tricky_text),
    st.builds(lambda u, d: {"type": "resource", "resource": {"uri": u, "blob": d}}, uris, payloads),
    st.builds(lambda u, n: {"type": "resource_link", "uri": u, "name": n}, uris, tricky_text),
)


def pydantic_strings(prompt: Prompt) -> list[str]:
    rendered = render_pydantic(prompt)
    return [rendered] if isinstance(rendered, str) else [r for r in rendered if isinstance(r, str)]


def langchain_strings(prompt: Prompt, blocks: Any) -> list[str]:
    return [item["text"] for item in render_langchain(prompt, blocks=blocks) if item["type"] == "text"]


@FAST
@given(st.lists(valid_blocks, max_size=6))
def test_every_text_reaches_both_renderings(blocks: list[dict[str, Any]]) -> None:
    prompt = parse_prompt(blocks)
    renderings = [
        "\n".join(pydantic_strings(prompt)),
        "\n".join(langchain_strings(prompt, "legacy")),
        "\n".join(langchain_strings(prompt, "v1")),
    ]
    for part in prompt:
        if isinstance(part, Text):
            expected = part.text
        elif isinstance(part, ContextRef):
            expected = escape_context_text(part.text)
        else:
            continue
        for rendering in renderings:
            assert expected in rendering


@FAST
@given(uris, tricky_text)
def test_no_attachment_escapes_its_wrapper(uri: str, text: str) -> None:
    out = context_wrapper(ContextRef(uri=uri, text=text))
    label, opening, rest = out.split("\n", 2)
    # The label is one line, the opening tag is one well-formed line with one quoted attribute.
    assert label.startswith("[@") and "\n" not in label
    assert re.fullmatch(r'<context ref="[^"<>\x00-\x1f]*">', opening)
    # The only closing tag is the wrapper's own, at the very end.
    closings = list(CLOSING.finditer(out))
    assert len(closings) == 1
    assert out.endswith("</context>") and closings[0].start() == len(out) - len("</context>")
    body = rest[: -len("</context>")]
    assert body in (escape_context_text(text), escape_context_text(text) + "\n")


@FAST
@given(st.lists(valid_blocks, max_size=6))
def test_sdk_models_and_wire_dicts_parse_alike(blocks: list[dict[str, Any]]) -> None:
    models = PromptRequest.model_validate({"sessionId": "s", "prompt": blocks}).prompt
    assert parse_prompt(models) == parse_prompt(blocks)
