"""`acpkit render FILE` (render_main): every accepted input shape, the output, and the errors."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from acpkit_core.cli.render import render_main

BLOCKS = [
    {"type": "text", "text": "Summarize @notes.md"},
    {"type": "resource", "resource": {"uri": "file:///p/notes.md", "text": "pelican\n"}},
]
PARAMS = {"sessionId": "s", "prompt": BLOCKS}
TOAD_PNG = "\ufffdPNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def run(path: Path | str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = render_main(str(path), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "doc",
    [
        BLOCKS,
        {"prompt": BLOCKS},
        {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s", "prompt": BLOCKS}},
        {
            "t": 1.0,
            "dir": "c2a",
            "msg": {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"prompt": BLOCKS}},
        },
    ],
    ids=["blocks", "prompt-object", "jsonrpc", "fixture-line"],
)
def test_shapes(tmp_path: Path, doc: object) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(path)
    assert (code, err) == (0, "")
    ir_section = out.split("\n== ")[0]
    assert ir_section.startswith("== IR\n")
    assert json.loads(ir_section.removeprefix("== IR\n")) == [
        {"kind": "text", "text": "Summarize @notes.md"},
        {"kind": "context", "uri": "file:///p/notes.md", "text": "pelican\n", "media_type": "text/markdown"},
    ]
    assert "\n== pydantic (pydantic-acp)\n" in out
    assert "\n== langchain (langchain-acp)\n" in out
    assert out.count('<context ref=\\"file:///p/notes.md\\">') == 2


def line(t: float, direction: str, msg: dict[str, object]) -> str:
    return json.dumps({"t": t, "dir": direction, "msg": msg})


def prompt_msg(n: int, blocks: list[dict[str, object]]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": n, "method": "session/prompt", "params": {"sessionId": "s", "prompt": blocks}}


def test_a_whole_client_capture(tmp_path: Path) -> None:
    # Shaped like the Toad capture in the client fixtures: four prompts among other traffic.
    png = {"uri": "file:///p/red.png", "text": TOAD_PNG, "mimeType": "image/png"}
    lines = [
        line(0.1, "c2a", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        line(1.0, "c2a", prompt_msg(3, [{"type": "text", "text": "What is the weather in Paris?"}])),
        line(1.1, "a2c", {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}),
        line(2.0, "c2a", prompt_msg(4, BLOCKS)),  # pyright: ignore[reportArgumentType]  (JSON literals)
        line(
            3.0,
            "c2a",
            prompt_msg(5, [{"type": "text", "text": "Describe @red.png"}, {"type": "resource", "resource": png}]),
        ),
        line(4.0, "c2a", prompt_msg(6, [{"type": "text", "text": "/tools"}])),
    ]
    path = tmp_path / "capture.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run(path)
    assert (code, err) == (0, "")
    assert out.count("== IR (prompt ") == 4
    assert "== IR (prompt 3 of 4)" in out
    assert "did not survive" in out


def test_long_payloads_are_shortened(tmp_path: Path) -> None:
    data = base64.b64encode(b"\x89PNG" + bytes(4000)).decode()
    path = tmp_path / "big.json"
    path.write_text(json.dumps([{"type": "image", "mimeType": "image/png", "data": data}]))
    code, out, _ = run(path)
    assert code == 0
    assert data not in out
    assert f"… ({len(data)} characters)" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "acpkit render: {path}: not JSON: Expecting property name enclosed in double quotes"),
        (
            '[{"type": "image", "mimeType": "image/png", "data": "abc"}]',
            "not valid base64 (length 3 is not a multiple of 4)",
        ),
        (
            '{"jsonrpc": "2.0", "method": "session/new", "params": {"cwd": "/"}}',
            "a session/new message, not session/prompt",
        ),
        ('"hello"', "prompt: expected a list of content blocks, got string"),
        ('{"a": 1}\n{"b": 2}\n', "JSON Lines without any session/prompt message"),
    ],
)
def test_errors_exit_2_with_a_message(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(path)
    assert code == 2 and out == ""
    assert message.format(path=path) in err


def test_missing_file(tmp_path: Path) -> None:
    code, out, err = run(tmp_path / "nope.json")
    assert code == 2 and out == ""
    assert err.startswith(f"acpkit render: cannot read {tmp_path / 'nope.json'}:")


def test_reads_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"prompt": [{"type": "text", "text": "from stdin"}]})))
    code, out, err = run("-")
    assert (code, err) == (0, "")
    assert '"text": "from stdin"' in out
