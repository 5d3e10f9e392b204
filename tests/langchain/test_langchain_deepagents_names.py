"""The `deepagents_acp.utils` converter names: aliases of ours, each with its `root_dir` behaviour."""

from __future__ import annotations

import langchain_acp
import pytest
from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from acpkit_core.errors import PromptError
from langchain_acp import (
    audio_block_to_content,
    convert_audio_block_to_content_blocks,
    convert_embedded_resource_block_to_content_blocks,
    convert_image_block_to_content_blocks,
    convert_resource_block_to_content_blocks,
    convert_text_block_to_content_blocks,
    embedded_resource_to_content,
    image_block_to_content,
    resource_link_to_content,
    text_block_to_content,
)

ROOT = "/home/user/project"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg=="


def test_each_name_is_our_converter() -> None:
    assert convert_text_block_to_content_blocks is text_block_to_content
    assert convert_image_block_to_content_blocks is image_block_to_content
    assert convert_audio_block_to_content_blocks is audio_block_to_content
    assert convert_resource_block_to_content_blocks is resource_link_to_content
    assert convert_embedded_resource_block_to_content_blocks is embedded_resource_to_content
    assert {n for n in langchain_acp.__all__ if n.startswith("convert_")} == {
        "convert_audio_block_to_content_blocks",
        "convert_embedded_resource_block_to_content_blocks",
        "convert_image_block_to_content_blocks",
        "convert_resource_block_to_content_blocks",
        "convert_text_block_to_content_blocks",
    }


def test_text_ignores_root_dir() -> None:
    block = TextContentBlock(type="text", text=f"see {ROOT}/a.py")
    expected = [{"type": "text", "text": f"see {ROOT}/a.py"}]
    assert convert_text_block_to_content_blocks(block) == expected
    assert convert_text_block_to_content_blocks(block, root_dir=ROOT) == expected


def test_image_is_a_data_url_whatever_the_root_dir_and_without_data_is_refused() -> None:
    block = ImageContentBlock(type="image", data=PNG, mime_type="image/png", uri=f"file://{ROOT}/red.png")
    expected = [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]
    assert convert_image_block_to_content_blocks(block) == expected
    assert convert_image_block_to_content_blocks(block, root_dir=ROOT) == expected
    with pytest.raises(PromptError, match="data"):
        convert_image_block_to_content_blocks({"type": "image", "data": "", "mimeType": "image/png"}, root_dir=ROOT)


def test_audio_is_converted_not_refused_whatever_the_root_dir() -> None:
    block = AudioContentBlock(type="audio", data="UklGRiQAAABXQVZF", mime_type="audio/wav")
    expected = [{"type": "audio", "base64": "UklGRiQAAABXQVZF", "mime_type": "audio/wav"}]
    assert convert_audio_block_to_content_blocks(block) == expected
    assert convert_audio_block_to_content_blocks(block, root_dir=ROOT) == expected


def test_resource_link_gets_a_relative_path_line_inside_root_dir_and_keeps_the_uri() -> None:
    inside = ResourceContentBlock(type="resource_link", uri=f"file://{ROOT}/src/app.py", name="app.py")
    outside = ResourceContentBlock(type="resource_link", uri="file:///etc/hosts", name="hosts")
    label = f"[@app.py](file://{ROOT}/src/app.py)"
    assert convert_resource_block_to_content_blocks(inside) == [
        {"type": "text", "text": f"{label}\ntype: text/x-python"}
    ]
    assert convert_resource_block_to_content_blocks(inside, root_dir=ROOT) == [
        {"type": "text", "text": f"{label}\npath: src/app.py\ntype: text/x-python"}
    ]
    assert convert_resource_block_to_content_blocks(outside, root_dir=ROOT) == [
        {"type": "text", "text": "[@hosts](file:///etc/hosts)"}
    ]


def test_embedded_resource_is_the_context_wrapper_whatever_the_root_dir() -> None:
    block = EmbeddedResourceContentBlock(
        type="resource", resource=TextResourceContents(uri=f"file://{ROOT}/notes.md", text="# Notes\n")
    )
    expected = [
        {
            "type": "text",
            "text": f'[@notes.md](file://{ROOT}/notes.md)\n<context ref="file://{ROOT}/notes.md">\n# Notes\n</context>',
        }
    ]
    assert convert_embedded_resource_block_to_content_blocks(block) == expected
    assert convert_embedded_resource_block_to_content_blocks(block, root_dir=ROOT) == expected
