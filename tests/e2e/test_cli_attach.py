"""`@path` attachments in `acpkit chat`: what goes over the wire for each kind of file."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    PromptCapabilities,
    ResourceContentBlock,
    TextContentBlock,
)
from acpkit_core.cli.attach import build_prompt, find_mentions

AGENT = Path(__file__).parent / "agents" / "sdk_cli_agent.py"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
ALL = PromptCapabilities(image=True, audio=True, embedded_context=True)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "pic.png").write_bytes(PNG)
    (tmp_path / "sound.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVE")
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "my notes.md").write_text("# spaced\n")
    (tmp_path / "blob.bin").write_bytes(b"\xff\xfe\x00\x01")
    (tmp_path / "src").mkdir()
    return tmp_path


def test_find_mentions() -> None:
    line = 'see @a.txt and @"b c.md", mail me@example.com, @ alone'
    assert find_mentions(line) == ["a.txt", "b c.md"]


def test_each_kind_of_attachment(files: Path) -> None:
    line = 'look @pic.png @sound.wav @notes.txt @"my notes.md" @blob.bin @src @missing.txt'
    built = build_prompt(line, cwd=files, caps=ALL)
    text, image, audio, note, spaced, blob, folder = built.blocks
    assert isinstance(text, TextContentBlock) and text.text == line
    assert isinstance(image, ImageContentBlock) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG and image.uri == (files / "pic.png").as_uri()
    assert isinstance(audio, AudioContentBlock) and audio.mime_type in {"audio/x-wav", "audio/wav"}
    assert isinstance(note, EmbeddedResourceContentBlock)
    assert note.resource.model_dump(exclude_none=True) == {
        "uri": (files / "notes.txt").as_uri(),
        "text": "hello\n",
        "mime_type": "text/plain",
    }
    assert isinstance(spaced, EmbeddedResourceContentBlock) and getattr(spaced.resource, "text", "") == "# spaced\n"
    assert isinstance(blob, EmbeddedResourceContentBlock)
    assert base64.b64decode(getattr(blob.resource, "blob", "")) == b"\xff\xfe\x00\x01"
    assert isinstance(folder, ResourceContentBlock) and folder.uri == (files / "src").as_uri()
    assert folder.mime_type == "inode/directory"
    assert built.notes[-1] == "@missing.txt: no such file; sent as text"


def test_capabilities_not_advertised_fall_back_to_links(files: Path) -> None:
    built = build_prompt("@pic.png @notes.txt", cwd=files, caps=PromptCapabilities())
    assert [b.type for b in built.blocks] == ["text", "resource_link", "resource_link"]
    assert "linked pic.png (the agent does not take image blocks)" in built.notes


def test_attachments_on_the_wire(files: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "acpkit_core.cli", "chat", str(AGENT), "-p", "/echo @pic.png @src @notes.txt", "--json"],
        cwd=files,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    sent = next(
        json.loads(line)["message"]["params"]["prompt"]
        for line in result.stdout.splitlines()
        if json.loads(line)["message"].get("method") == "session/prompt"
    )
    assert [block["type"] for block in sent] == ["text", "image", "resource_link", "resource"]
    assert sent[3]["resource"] == {"uri": (files / "notes.txt").as_uri(), "text": "hello\n", "mimeType": "text/plain"}
