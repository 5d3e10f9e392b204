"""Golden prompts in references/prompts: each file is an ACP prompt with its expected IR and renderings.

A case file holds `description`, `prompt` and either `error` (the exact PromptError message) or
`ir`, `pydantic`, `langchain` and `langchain_v1` (with `root_dir` passed to the LangChain renderer
when present). Every file under references/ must be such a case.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from acp.schema import PromptRequest
from acpkit_core.errors import PromptError
from acpkit_core.prompt import parse_prompt
from acpkit_core.prompt.dump import dump_prompt
from langchain_acp._render import render_prompt as render_langchain
from pydantic_acp._render import render_prompt as render_pydantic
from pydantic_ai.messages import AudioUrl, BinaryContent, DocumentUrl, ImageUrl, UserContent, VideoUrl

REFERENCES = Path(__file__).resolve().parents[2] / "references"
KEYS = {"description", "source", "prompt", "error", "root_dir", "ir", "pydantic", "langchain", "langchain_v1"}
CASES = sorted((REFERENCES / "prompts").glob("*.json"))


def pydantic_json(rendered: str | list[UserContent]) -> Any:
    if isinstance(rendered, str):
        return rendered
    out: list[Any] = []
    for item in rendered:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, BinaryContent):
            data = base64.b64encode(item.data).decode()
            out.append({"kind": "binary", "media_type": item.media_type, "base64": data})
        elif isinstance(item, ImageUrl | AudioUrl | DocumentUrl | VideoUrl):
            out.append({"kind": item.kind, "url": item.url, "media_type": item.media_type})
        else:  # pragma: no cover - the renderer emits nothing else
            raise AssertionError(f"unexpected pydantic-ai content {item!r}")
    return out


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_enough_cases_and_every_file_is_one() -> None:
    every_file = {p for p in REFERENCES.rglob("*") if p.is_file()}
    assert every_file == set(CASES), f"files under references/ that no test uses: {sorted(every_file - set(CASES))}"
    assert len([c for c in CASES if "error" not in load(c)]) >= 40


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_reference_case(path: Path) -> None:
    case = load(path)
    assert set(case) <= KEYS
    assert case["description"]
    if "error" in case:
        with pytest.raises(PromptError) as info:
            parse_prompt(case["prompt"])
        assert str(info.value) == case["error"]
        return
    prompt = parse_prompt(case["prompt"])
    assert dump_prompt(prompt) == case["ir"]
    # The same prompt arriving as SDK models (as the server receives it) gives the same IR.
    models = PromptRequest.model_validate({"sessionId": "s", "prompt": case["prompt"]}).prompt
    assert parse_prompt(models) == prompt
    assert pydantic_json(render_pydantic(prompt)) == case["pydantic"]
    root_dir = case.get("root_dir")
    assert render_langchain(prompt, root_dir=root_dir) == case["langchain"]
    assert render_langchain(prompt, blocks="v1", root_dir=root_dir) == case["langchain_v1"]
