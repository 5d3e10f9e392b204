"""`acpkit render FILE`: show how a prompt is parsed and what each installed adapter makes of it.

FILE may hold a list of ACP content blocks, an object `{"prompt": [...]}`, a captured JSON-RPC
`session/prompt` message, a client-fixture line `{"t": ..., "dir": ..., "msg": {...}}`, or a JSON
Lines capture (every `session/prompt` in it is shown). `-` reads standard input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO, cast

from ..errors import PromptError
from ..prompt.dump import dump_prompt
from ..prompt.parse import parse_prompt
from .adapters import load_adapters
from .install import install_command

__all__ = ["extract_prompts", "render_main"]

_LONG = 1000


class _InputError(Exception):
    pass


def _prompt_of(doc: object) -> object:
    """The prompt inside one JSON document, in any of the accepted shapes."""
    if not isinstance(doc, Mapping):
        return doc
    obj = cast("Mapping[str, Any]", doc)
    msg: object = obj.get("msg")
    if isinstance(msg, Mapping):
        return _prompt_of(cast(object, msg))
    params: object = obj.get("params")
    if isinstance(params, Mapping):
        if obj.get("method") not in (None, "session/prompt"):
            raise _InputError(f"a {obj.get('method')} message, not session/prompt")
        return _prompt_of(cast(object, params))
    if "prompt" in obj:
        return obj["prompt"]
    return obj  # let the parser say what is wrong with it


def _is_prompt_message(doc: object) -> bool:
    if not isinstance(doc, Mapping):
        return False
    obj = cast("Mapping[str, Any]", doc)
    msg = obj.get("msg", obj)
    return isinstance(msg, Mapping) and cast("Mapping[str, Any]", msg).get("method") == "session/prompt"


def extract_prompts(text: str) -> list[object]:
    """The prompts in a file's text (one for a JSON document, each `session/prompt` of JSON Lines)."""
    try:
        return [_prompt_of(json.loads(text))]
    except json.JSONDecodeError as whole_error:
        lines = [line for line in text.splitlines() if line.strip()]
        try:
            docs = [json.loads(line) for line in lines]
        except json.JSONDecodeError:
            raise _InputError(f"not JSON: {whole_error}") from None
        prompts = [_prompt_of(doc) for doc in docs if _is_prompt_message(doc)]
        if not prompts:
            raise _InputError("JSON Lines without any session/prompt message") from None
        return prompts


def _shorten(value: Any) -> Any:
    # Base64 payloads and data URLs are long strings without whitespace: show their start only.
    if isinstance(value, str):
        if len(value) > _LONG and not any(c.isspace() for c in value[:_LONG]):
            return f"{value[:80]}… ({len(value)} characters)"
        return value
    if isinstance(value, list):
        return [_shorten(v) for v in cast("list[Any]", value)]
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in cast("dict[str, Any]", value).items()}
    return value


def _dump(value: Any, out: TextIO) -> None:
    out.write(json.dumps(_shorten(value), indent=2, ensure_ascii=False, default=repr) + "\n")


def render_main(path: str, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Print the IR and every installed adapter's rendering of the prompt(s) in `path`.

    Returns the exit status: 0 on success, 1 when an adapter failed to render, 2 when the file
    cannot be read or holds no valid prompt (the reason goes to stderr).
    """
    return _render(path, out if out is not None else sys.stdout, err if err is not None else sys.stderr)


def _render(path: str, out: TextIO, err: TextIO) -> int:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        err.write(f"acpkit render: cannot read {path}: {exc}\n")
        return 2
    try:
        raw_prompts = extract_prompts(text)
        prompts = [parse_prompt(raw) for raw in raw_prompts]
    except (_InputError, PromptError) as exc:
        err.write(f"acpkit render: {path}: {exc}\n")
        return 2
    adapters = load_adapters()
    status = 0
    for number, prompt in enumerate(prompts, 1):
        suffix = f" (prompt {number} of {len(prompts)})" if len(prompts) > 1 else ""
        out.write(f"== IR{suffix}\n")
        _dump(dump_prompt(prompt), out)
        for adapter in adapters:
            out.write(f"== {adapter.name} ({adapter.package}){suffix}\n")
            try:
                _dump(adapter.render(prompt), out)
            except Exception as exc:
                err.write(f"acpkit render: the {adapter.name} adapter failed: {type(exc).__name__}: {exc}\n")
                status = 1
        if not adapters:
            out.write(
                "(no adapter installed; to see renderings install one: "
                f"{install_command('pydantic-acp')}, or: {install_command('langchain-acp')})\n"
            )
    return status
