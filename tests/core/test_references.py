"""Golden prompts in references/prompts: each file is an ACP prompt with its expected IR and renderings.

A case file holds `description`, `prompt` and either `error` (the exact PromptError message) or
`ir`, `pydantic`, `langchain` and `langchain_v1` (with `root_dir` passed to the LangChain renderer
when present). A case taken from real client traffic cites its line in references/clients/ as
`source` (`clients/<file>.jsonl:<line>`). Every file under references/ must be such a case, a
client recording that a case cites (with the recordings' README), or the ACP schema (`acp-schema/`).
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
RECORDINGS = sorted((REFERENCES / "clients").glob("*.jsonl"))


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
    # the ACP schema, which tests/e2e/test_schema_conformance.py and the docs' support page read
    schema = {REFERENCES / "acp-schema" / name for name in ("schema.json", "schema.unstable.json", "meta.json")}
    schema |= {REFERENCES / "acp-schema" / name for name in ("meta.unstable.json", "README.md", "LICENSE")}
    known = {*CASES, *RECORDINGS, REFERENCES / "clients" / "README.md", *schema}
    assert every_file == known, f"files under references/ that no test uses: {sorted(every_file - known)}"
    assert len([c for c in CASES if "error" not in load(c)]) >= 40


def cited_line(source: str) -> dict[str, Any] | None:
    """The recorded message a case's `source` (`clients/<file>.jsonl:<line>`) names, or `None` for other sources."""
    if not source.startswith("clients/"):
        return None
    name, _, line = source.rpartition(":")
    lines = (REFERENCES / name).read_text(encoding="utf-8").splitlines()
    return json.loads(lines[int(line) - 1])


def test_client_cases_are_the_recorded_prompts_and_every_recording_is_cited() -> None:
    cited: set[str] = set()
    for path in CASES:
        case = load(path)
        source = str(case.get("source", ""))
        if path.stem.startswith("client-"):
            assert source.startswith("clients/"), f"{path.stem}: a client case must cite its recording"
        recorded = cited_line(source)
        if recorded is None:
            continue
        cited.add(source.rpartition(":")[0])
        assert recorded["dir"] == "c2a" and recorded["msg"]["method"] == "session/prompt", source
        assert recorded["msg"]["params"]["prompt"] == case["prompt"], (
            f"{path.stem}: not the prompt recorded at {source}"
        )
    assert cited == {f"clients/{p.name}" for p in RECORDINGS}


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
