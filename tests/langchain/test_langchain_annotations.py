"""ACP annotations survive ACP -> LangChain -> ACP, over every golden prompt in references/prompts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acpkit_core.prompt import parse_prompt
from acpkit_core.prompt.ir import Text
from langchain_acp import render_prompt, to_acp_blocks, to_human_message

REFERENCES = Path(__file__).resolve().parents[2] / "references" / "prompts"
CASES = [p for p in sorted(REFERENCES.glob("*.json")) if "error" not in json.loads(p.read_text(encoding="utf-8"))]


def test_enough_golden_cases_carry_annotations() -> None:
    annotated = [p.stem for p in CASES if '"annotations"' in p.read_text(encoding="utf-8")]
    assert len(annotated) >= 5, annotated


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
@pytest.mark.parametrize("blocks", ["legacy", "v1"])
def test_annotations_round_trip(path: Path, blocks: Any) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    prompt = parse_prompt(case["prompt"])
    parts = [p for p in prompt if not (isinstance(p, Text) and not p.text)] or prompt.parts[:1]
    rendered = render_prompt(prompt, blocks=blocks, root_dir=case.get("root_dir"))
    assert len(rendered) == len(parts)  # one LangChain block per part
    for part, block in zip(parts, rendered, strict=True):
        back = to_acp_blocks([block])
        if isinstance(part, Text) and not part.text:
            assert back == []  # an empty text block is not content
            continue
        (acp,) = back
        got = acp.annotations.model_dump(by_alias=True, exclude_none=True) if acp.annotations else None
        assert got == part.annotations


def test_a_human_message_keeps_annotations_and_a_blocks_own_win_over_the_default() -> None:
    prompt = parse_prompt(
        [
            {"type": "text", "text": "mine", "annotations": {"audience": ["assistant"], "priority": 0.5}},
            {"type": "text", "text": "plain"},
        ]
    )
    message = to_human_message(prompt)
    back = to_acp_blocks(message.content, annotations={"priority": 0.1})
    assert [(b.text, b.annotations and b.annotations.priority) for b in back] == [("mine", 0.5), ("plain", 0.1)]
    assert back[0].annotations is not None and back[0].annotations.audience == ["assistant"]
    # Metadata in `extras` that is not ACP's shape is ignored, not an error.
    odd = to_acp_blocks([{"type": "text", "text": "x", "extras": {"annotations": {"audience": "everyone"}}}])
    assert odd[0].annotations is None
